// The controller list, in one place (Karpenter's pkg/controllers/controllers.go). main.ts hands each
// controller a context whose cloud provider is wrapped for metrics with the controller's name.
// The disruption loop takes its methods as data: the disruption engine adds its own there.
import type { CloudProvider, InstanceTagging, InterruptionSource, NodeClassProvider } from '../cloudprovider/types.ts';
import type { FeatureGates } from '../operator/options.ts';
import type { Controller } from '../operator/runtime.ts';
import { newCapacityBuffer } from './capacitybuffer/reconcile.ts';
import type { ControllerContext } from './context.ts';
import { newDisruption, type DisruptionLoop } from './disruption/reconcile.ts';
import { newOrchestrationQueue } from './disruption/queue.ts';
import type { DisruptionMethod } from './disruption/types.ts';
import { newInterruption } from './interruption/reconcile.ts';
import { newCloudProviderMetrics } from './metrics/cloudprovider/reconcile.ts';
import { newNodeMetrics } from './metrics/node/reconcile.ts';
import { newNodePoolMetrics } from './metrics/nodepool/reconcile.ts';
import { newPodMetrics } from './metrics/pod/reconcile.ts';
import { newNodeHealth } from './node/health/reconcile.ts';
import { newStatusMetrics } from './metrics/status/reconcile.ts';
import { newNodeTermination } from './node/termination/reconcile.ts';
import { newNodeClassStatus } from './nodeclass/status/reconcile.ts';
import { newConsistency } from './nodeclaim/consistency/reconcile.ts';
import { newConsolidatable } from './nodeclaim/consolidatable/reconcile.ts';
import { newDrift } from './nodeclaim/drift/reconcile.ts';
import { newExpiration } from './nodeclaim/expiration/reconcile.ts';
import { newGarbageCollection } from './nodeclaim/garbagecollection/reconcile.ts';
import { newNodeClaimLifecycle } from './nodeclaim/lifecycle/reconcile.ts';
import { newPodEvents } from './nodeclaim/podevents/reconcile.ts';
import { newNodeClaimTagging } from './nodeclaim/tagging/reconcile.ts';
import { newNodeClaimTermination } from './nodeclaim/termination/reconcile.ts';
import { newNodePoolCounter } from './nodepool/counter/reconcile.ts';
import { newNodePoolHash } from './nodepool/hash/reconcile.ts';
import { newNodePoolReadiness } from './nodepool/readiness/reconcile.ts';
import { newNodeOverlay } from './nodeoverlay/reconcile.ts';
import type { OverlayStore } from './nodeoverlay/store.ts';
import { newProvisioner, type Provisioner } from './provisioning/reconcile.ts';
import { newStaticDeprovisioning } from './static/deprovisioning.ts';
import { newStaticProvisioning } from './static/provisioning.ts';

export interface ControllerSet {
  readonly provisioner?: Provisioner;
  readonly disruption?: DisruptionLoop;
  readonly all: readonly Controller[];
}

interface ControllerOptions {
  /** The cloud provider's node-class resolution: adds the EC2NodeClass controller. */
  readonly nodeClasses?: NodeClassProvider;
  /** The cloud provider's post-registration instance tagging: adds nodeclaim.tagging. */
  readonly instanceTagging?: InstanceTagging;
  /** The cloud provider's interruption feed: adds the interruption controller. */
  readonly interruptions?: InterruptionSource;
  /** Disruption engine methods in order (default: production order, then the repack per the options). */
  readonly disruptionMethods?: readonly DisruptionMethod[];
  /** Only these controllers (tests). */
  readonly only?: readonly string[];
  /** DISABLE_CLUSTER_STATE_OBSERVABILITY: no pod, node, NodePool, offering and status-condition metrics. */
  readonly disableObservability?: boolean;
  /** The feature gates that add controllers (NodeRepair: node.health; StaticCapacity: static.provisioning and static.deprovisioning; CapacityBuffer: capacitybuffer). */
  readonly featureGates?: FeatureGates;
  /** NodeOverlay on: the store the contexts' cloud provider reads, and the provider without overlays by controller name. */
  readonly nodeOverlays?: { readonly store: OverlayStore; readonly base: (controller: string) => CloudProvider };
  /** The cloud provider's repair policies: node.health runs only when there is at least one. */
  readonly repairPolicies?: number;
}

/** `contextFor(name)` gives each controller its own context (its cloud provider labels metrics with the name). */
export function newControllers(
  contextFor: (name: string) => ControllerContext,
  opts: ControllerOptions = {},
): ControllerSet {
  const want = (name: string): boolean => !opts.only || opts.only.includes(name);
  const all: Controller[] = [];
  const add = <C extends Controller>(name: string, make: (ctx: ControllerContext) => C): C | undefined => {
    if (!want(name)) return undefined;
    const c = make(contextFor(name));
    all.push(c);
    return c;
  };
  const nodeClasses = opts.nodeClasses;
  if (nodeClasses) add('nodeclass.status', (ctx) => newNodeClassStatus(ctx, nodeClasses));
  add('nodepool.hash', newNodePoolHash);
  add('nodepool.readiness', newNodePoolReadiness);
  add('nodepool.counter', newNodePoolCounter);
  const overlays = opts.nodeOverlays;
  if (overlays) add('nodeoverlay', (ctx) => newNodeOverlay(ctx, overlays.store, overlays.base('nodeoverlay')));
  const provisioner = add('provisioner', newProvisioner);
  if (opts.featureGates?.capacityBuffer) add('capacitybuffer', (ctx) => newCapacityBuffer(ctx, provisioner));
  add('nodeclaim.lifecycle', newNodeClaimLifecycle);
  add('nodeclaim.podevents', newPodEvents);
  add('nodeclaim.consolidatable', newConsolidatable);
  add('nodeclaim.consistency', newConsistency);
  add('nodeclaim.drift', newDrift);
  add('nodeclaim.expiration', newExpiration);
  add('nodeclaim.termination', newNodeClaimTermination);
  add('node.termination', newNodeTermination);
  if (opts.featureGates?.nodeRepair && (opts.repairPolicies ?? 0) > 0) add('node.health', newNodeHealth);
  if (opts.featureGates?.staticCapacity) {
    add('static.provisioning', newStaticProvisioning);
    add('static.deprovisioning', newStaticDeprovisioning);
  }
  add('nodeclaim.garbagecollection', (ctx) => newGarbageCollection(ctx));
  // The controller's own context carries the fenced provider: tag writes are made by the leader only.
  if (opts.instanceTagging)
    add('nodeclaim.tagging', (ctx) =>
      newNodeClaimTagging(ctx, ctx.cloudProvider.instanceTagging ?? opts.instanceTagging!),
    );
  // The orchestration queue runs with the loop that feeds it.
  const queue = want('disruption') ? newOrchestrationQueue(contextFor('disruption.queue')) : undefined;
  if (queue) all.push(queue);
  const disruption =
    queue &&
    add('disruption', (ctx) =>
      newDisruption(ctx, { queue, ...(opts.disruptionMethods ? { methods: opts.disruptionMethods } : {}) }),
    );
  if (!opts.disableObservability) {
    add('metrics.pod', newPodMetrics);
    add('metrics.node', newNodeMetrics);
    add('metrics.nodepool', newNodePoolMetrics);
    add('cloudprovider.metrics', newCloudProviderMetrics);
    add('status.metrics', newStatusMetrics);
  }
  const source = opts.interruptions;
  if (source) add('interruption', (ctx) => newInterruption(ctx, source));
  return { ...(provisioner ? { provisioner } : {}), ...(disruption ? { disruption } : {}), all };
}
