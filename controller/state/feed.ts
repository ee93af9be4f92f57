// Wires one informer per kind into cluster state.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../operator/clock.ts';
import type { Kind, KubeClient } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import { Cluster } from './cluster.ts';
import { Informers, type Backoff, type RejectStage } from './informers.ts';
import { stripMetadata, stripNode, stripNodeClaim, stripPod } from './strip.ts';

interface ClusterStateDeps {
  readonly kube: KubeClient;
  readonly kubeConfig: KubeConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: Backoff;
  /** Watch the DRA objects (resource.k8s.io/v1): only needed when IGNORE_DRA_REQUESTS is false. */
  readonly dra?: boolean;
  /** Watch Services, ReplicaSets, StatefulSets and ReplicationControllers: SCHEDULER_CONFIG sets default spread. */
  readonly defaultSpread?: boolean;
  /** Watch NodeOverlays (karpenter.sh/v1alpha1): only with the feature gate NodeOverlay. */
  readonly nodeOverlays?: boolean;
  /** Watch CapacityBuffers (autoscaling.x-k8s.io/v1beta1) and PodTemplates: only with the feature gate CapacityBuffer. */
  readonly capacityBuffers?: boolean;
  /** A watch silent (no event, no heartbeat) for this long is dropped and re-established (default client-node's 30 s). */
  readonly watchTimeoutMs?: number;
  /** Counts a watch event or listed object left out because it could not be handled (informers.ts). */
  readonly onRejected?: (kind: Kind, stage: RejectStage) => void;
  /** Tests only (the control runs of the cache-sync drills): the synced gate does not wait for any list. */
  readonly unsafeSkipCacheSync?: boolean;
}

export function newClusterState(deps: ClusterStateDeps): { cluster: Cluster; informers: Informers } {
  const informers = new Informers({ ...deps, log: deps.log.child({ component: 'informers' }) });
  const cluster = new Cluster({
    clock: deps.clock,
    log: deps.log.child({ component: 'cluster-state' }),
    listed: deps.unsafeSkipCacheSync ? () => true : () => informers.synced(),
  });
  watchCore(informers, cluster);
  if (deps.dra) watchDra(informers, cluster.workloads.dra);
  // One literal call per kind: test/deploy/rbac.ts reads these to check the chart's RBAC.
  if (deps.nodeOverlays)
    informers.add('NodeOverlay', {
      apply: (o) => cluster.applyNodeOverlay(o),
      remove: (o) => cluster.removeNodeOverlay(o),
    });
  if (deps.capacityBuffers) watchCapacityBuffers(informers, cluster.workloads.buffers);
  if (deps.defaultSpread) watchSpreadOwners(informers, cluster.workloads.selectors);
  return { cluster, informers };
}

/** The kinds every controller reads: nodes, NodeClaims, NodePools, EC2NodeClasses, DaemonSets, pods and PDBs. */
function watchCore(informers: Informers, cluster: Cluster): void {
  const w = cluster.workloads;
  // Cache transforms (strip.ts): what no part of the controller reads is dropped before anything caches it.
  const lean = { transform: stripMetadata };
  informers.add(
    'Node',
    { apply: (o) => cluster.applyNode(o), remove: (o) => cluster.removeNode(o) },
    { transform: stripNode },
  );
  informers.add(
    'NodeClaim',
    { apply: (o) => cluster.applyNodeClaim(o), remove: (o) => cluster.removeNodeClaim(o) },
    { transform: stripNodeClaim },
  );
  informers.add('NodePool', { apply: (o) => cluster.applyNodePool(o), remove: (o) => cluster.removeNodePool(o) }, lean);
  informers.add(
    'EC2NodeClass',
    { apply: (o) => cluster.applyNodeClass(o), remove: (o) => cluster.removeNodeClass(o) },
    lean,
  );
  informers.add('DaemonSet', { apply: (o) => w.applyDaemonSet(o), remove: (o) => w.removeDaemonSet(o) }, lean);
  // Pods: one record of each (podrecord.ts), made as the informer keeps it; client-node's cache reads cluster
  // state's pod table rather than keeping a map of its own (keptcache.ts).
  informers.add(
    'Pod',
    { apply: (o) => w.applyPod(o), remove: (o) => w.removePod(o) },
    { transform: stripPod, keep: (o) => w.podRecord(o), kept: w.keptPods() },
  );
  informers.add('PodDisruptionBudget', { apply: (o) => w.applyPdb(o), remove: (o) => w.removePdb(o) }, lean);
}

/** The DRA objects (resource.k8s.io/v1), watched when IGNORE_DRA_REQUESTS is false. */
function watchDra(informers: Informers, dra: Cluster['workloads']['dra']): void {
  // Kubernetes before 1.34 has no resource.k8s.io/v1: the controller must still sync and provision the
  // pods that need no devices (a pod with resource claims gets an error naming the claim it cannot see).
  const unservedMeans =
    'IGNORE_DRA_REQUESTS=false needs resource.k8s.io/v1 (Kubernetes 1.34 or later); until it is served, no devices, claims or device classes are known and pods with resource claims stay pending with an error naming the claim';
  // One literal call per kind: test/deploy/rbac.ts reads these to check the chart's RBAC.
  informers.add(
    'ResourceSlice',
    { apply: (o) => dra.apply('ResourceSlice', o), remove: (o) => dra.remove('ResourceSlice', o) },
    { unservedMeans },
  );
  informers.add(
    'ResourceClaim',
    { apply: (o) => dra.apply('ResourceClaim', o), remove: (o) => dra.remove('ResourceClaim', o) },
    { unservedMeans },
  );
  informers.add(
    'ResourceClaimTemplate',
    { apply: (o) => dra.apply('ResourceClaimTemplate', o), remove: (o) => dra.remove('ResourceClaimTemplate', o) },
    { unservedMeans },
  );
  informers.add(
    'DeviceClass',
    { apply: (o) => dra.apply('DeviceClass', o), remove: (o) => dra.remove('DeviceClass', o) },
    { unservedMeans },
  );
}

/** CapacityBuffers and the PodTemplates they name (the feature gate CapacityBuffer). */
function watchCapacityBuffers(informers: Informers, b: Cluster['workloads']['buffers']): void {
  // One literal call per kind: test/deploy/rbac.ts reads these to check the chart's RBAC.
  informers.add('CapacityBuffer', { apply: (o) => b.applyBuffer(o), remove: (o) => b.removeBuffer(o) });
  informers.add('PodTemplate', {
    apply: (o) => b.podTemplateChanged(o, 'upsert'),
    remove: (o) => b.podTemplateChanged(o, 'delete'),
  });
}

/** The owners whose selectors give a pod its default spread (SCHEDULER_CONFIG). */
function watchSpreadOwners(informers: Informers, sel: Cluster['workloads']['selectors']): void {
  // One literal call per kind: test/deploy/rbac.ts reads these to check the chart's RBAC.
  informers.add('Service', { apply: (o) => sel.applyService(o), remove: (o) => sel.removeService(o) });
  informers.add('ReplicaSet', {
    apply: (o) => sel.applyWorkload('ReplicaSet', o),
    remove: (o) => sel.removeWorkload('ReplicaSet', o),
  });
  informers.add('StatefulSet', {
    apply: (o) => sel.applyWorkload('StatefulSet', o),
    remove: (o) => sel.removeWorkload('StatefulSet', o),
  });
  informers.add('ReplicationController', {
    apply: (o) => sel.applyWorkload('ReplicationController', o),
    remove: (o) => sel.removeWorkload('ReplicationController', o),
  });
}
