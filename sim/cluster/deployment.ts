// Minimal Deployment and ReplicaSet controllers, enough for workloads in the simulator:
//
// Deployment: one ReplicaSet per pod template, named <deployment>-<pod-template-hash>, scaled to
// spec.replicas; ReplicaSets of older templates are scaled to 0 at once (a rollout replaces everything in
// one step: no surge, no maxUnavailable pacing). Status: replicas, updated/ready/available, Available.
// ReplicaSet: creates pods (<rs>-xxxxx, owner reference, template labels) until spec.replicas pods are
// active, and deletes the surplus, least useful first: unscheduled, then not running, then not ready,
// then newest. Pods being deleted (evicted, drained) do not count, so their replacements are created
// at once, as upstream does.
import type { Api, KObject } from '../apiserver/index.ts';
import { stableHash } from '../apiserver/ids.ts';
import { Reactor } from './reactor.ts';
import { podSpec } from './scheduling/nodes.ts';
import {
  controllerRef,
  isActive,
  isPodReady,
  owned,
  podFromTemplate,
  writeStatus,
  type PodTemplate,
} from './workload.ts';

const HASH = 'pod-template-hash';
const WATCHED = new Set(['deployments.apps', 'replicasets.apps', 'pods']);

interface WorkloadSpec {
  replicas?: number;
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  template?: PodTemplate;
}

const specOf = (o: KObject): WorkloadSpec => (o.spec ?? {}) as WorkloadSpec;

export class DeploymentController {
  readonly reactor: Reactor;

  constructor(
    private readonly api: Api,
    onError: (err: unknown) => void,
  ) {
    this.reactor = new Reactor('deployment', () => this.pass(), onError).kickOn(api.store, WATCHED);
    this.reactor.kick();
  }

  close(): void {
    this.reactor.close();
  }

  private pass(): void {
    for (const d of this.api.store.list('deployments.apps')) if (!d.metadata.deletionTimestamp) this.syncDeployment(d);
    for (const rs of this.api.store.list('replicasets.apps'))
      if (!rs.metadata.deletionTimestamp) this.syncReplicaSet(rs);
  }

  private syncDeployment(d: KObject): void {
    const spec = specOf(d);
    const desired = spec.replicas ?? 1;
    const hash = stableHash(spec.template ?? {});
    const sets = owned(this.api, 'replicasets.apps', d);
    let current = sets.find((rs) => rs.metadata.labels?.[HASH] === hash);
    if (!current) {
      const template = structuredClone(spec.template ?? {});
      template.metadata = {
        ...(template.metadata ?? {}),
        labels: { ...(template.metadata?.labels ?? {}), [HASH]: hash },
      };
      const revision = sets.length + 1;
      current = this.api.create('replicasets.apps', d.metadata.namespace, {
        metadata: {
          name: `${d.metadata.name}-${hash}`,
          labels: { ...(spec.template?.metadata?.labels ?? {}), [HASH]: hash },
          annotations: {
            'deployment.kubernetes.io/revision': String(revision),
            'deployment.kubernetes.io/desired-replicas': String(desired),
          },
          ownerReferences: [controllerRef(d)],
        },
        spec: {
          replicas: desired,
          template,
          selector: { ...(spec.selector ?? {}), matchLabels: { ...(spec.selector?.matchLabels ?? {}), [HASH]: hash } },
        },
      });
    } else if ((specOf(current).replicas ?? 1) !== desired) {
      this.api.scale('replicasets.apps', current.metadata.namespace!, current.metadata.name!, desired);
    }
    for (const old of sets) {
      if (old !== current && (specOf(old).replicas ?? 1) !== 0)
        this.api.scale('replicasets.apps', old.metadata.namespace!, old.metadata.name!, 0);
    }
    const all = owned(this.api, 'replicasets.apps', d);
    const sum = (f: string): number =>
      all.reduce((n, rs) => n + (((rs.status ?? {}) as Record<string, number>)[f] ?? 0), 0);
    const cur = all.find((rs) => rs.metadata.uid === current!.metadata.uid);
    const available = sum('availableReplicas');
    writeStatus(this.api, 'deployments.apps', d, {
      observedGeneration: d.metadata.generation ?? 1,
      replicas: sum('replicas'),
      updatedReplicas: ((cur?.status ?? {}) as Record<string, number>).replicas ?? 0,
      readyReplicas: sum('readyReplicas'),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, desired - available),
      conditions: [
        {
          type: 'Available',
          status: available >= desired ? 'True' : 'False',
          reason: available >= desired ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          message:
            available >= desired
              ? 'Deployment has minimum availability.'
              : 'Deployment does not have minimum availability.',
        },
      ],
    });
  }

  private syncReplicaSet(rs: KObject): void {
    const spec = specOf(rs);
    const desired = spec.replicas ?? 1;
    const pods = owned(this.api, 'pods', rs).filter(isActive);
    if (pods.length < desired) {
      for (let i = pods.length; i < desired; i++) {
        this.api.create(
          'pods',
          rs.metadata.namespace,
          podFromTemplate(rs, spec.template ?? {}, `${rs.metadata.name}-`),
        );
      }
    } else if (pods.length > desired) {
      for (const p of [...pods].sort(deletionOrder).slice(0, pods.length - desired)) {
        this.api.delete('pods', p.metadata.namespace, p.metadata.name!, { preconditions: { uid: p.metadata.uid! } });
      }
    }
    const active = owned(this.api, 'pods', rs).filter(isActive);
    const ready = active.filter(isPodReady).length;
    writeStatus(this.api, 'replicasets.apps', rs, {
      replicas: active.length,
      fullyLabeledReplicas: active.length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: rs.metadata.generation ?? 1,
    });
  }
}

/** Most deletable first: unscheduled, pending, not ready, then newest (upstream's ActivePods ranking, simplified). */
function deletionOrder(a: KObject, b: KObject): number {
  const rank = (p: KObject): number[] => [
    podSpec(p).nodeName ? 1 : 0,
    (p.status as { phase?: string } | undefined)?.phase === 'Running' ? 1 : 0,
    isPodReady(p) ? 1 : 0,
  ];
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i]! - rb[i]!;
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta > tb ? -1 : 1;
  return (a.metadata.name ?? '') > (b.metadata.name ?? '') ? -1 : 1;
}
