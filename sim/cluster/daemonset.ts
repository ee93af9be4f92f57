// A minimal DaemonSet controller: one pod per node the daemon should run on, which is how daemonset
// overhead shows up on every node Karpenter launches.
//
// A node qualifies when it is not being deleted, matches the template's nodeSelector and required node
// affinity, and every NoSchedule/NoExecute taint (including the not-ready and unschedulable ones the node
// lifecycle controller would add) is tolerated by the template's tolerations plus the ones the daemonset
// controller adds to every daemon pod (not-ready/unreachable NoExecute; disk/memory/pid pressure and
// unschedulable NoSchedule; network-unavailable for host-network pods). Pods are created unbound with
// required node affinity on metadata.name (as upstream does since 1.12) and bound by the scheduler.
// Pods on nodes that no longer qualify, and duplicates, are deleted.
import type { Api, KObject } from '../apiserver/index.ts';
import { Reactor } from './reactor.ts';
import { matchesNodeAffinity, untoleratedTaint } from './scheduling/filters.ts';
import { effectiveTaints, podSpec, type PodSpec } from './scheduling/nodes.ts';
import { isActive, isPodReady, owned, podFromTemplate, writeStatus, type PodTemplate } from './workload.ts';

const WATCHED = new Set(['daemonsets.apps', 'pods', 'nodes']);

type Toleration = NonNullable<PodSpec['tolerations']>[number];

function daemonTolerations(spec: PodSpec & { hostNetwork?: boolean }): Toleration[] {
  const out: Toleration[] = [...(spec.tolerations ?? [])];
  const add = (key: string, effect: string): void => {
    if (!out.some((t) => t.key === key && t.operator === 'Exists' && t.effect === effect))
      out.push({ key, operator: 'Exists', effect });
  };
  add('node.kubernetes.io/not-ready', 'NoExecute');
  add('node.kubernetes.io/unreachable', 'NoExecute');
  add('node.kubernetes.io/disk-pressure', 'NoSchedule');
  add('node.kubernetes.io/memory-pressure', 'NoSchedule');
  add('node.kubernetes.io/pid-pressure', 'NoSchedule');
  add('node.kubernetes.io/unschedulable', 'NoSchedule');
  if (spec.hostNetwork) add('node.kubernetes.io/network-unavailable', 'NoSchedule');
  return out;
}

/** The node a daemon pod is meant for: where it is bound, or its metadata.name affinity. */
function targetNode(pod: KObject): string | undefined {
  const spec = podSpec(pod);
  if (spec.nodeName) return spec.nodeName;
  for (const term of spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ??
    []) {
    const f = term.matchFields?.find((m) => m.key === 'metadata.name' && m.operator === 'In');
    if (f?.values?.length === 1) return f.values[0];
  }
  return undefined;
}

export class DaemonSetController {
  readonly reactor: Reactor;

  constructor(
    private readonly api: Api,
    onError: (err: unknown) => void,
  ) {
    this.reactor = new Reactor('daemonset', () => this.pass(), onError).kickOn(api.store, WATCHED);
    this.reactor.kick();
  }

  close(): void {
    this.reactor.close();
  }

  private pass(): void {
    const daemonsets = this.api.store.list('daemonsets.apps').filter((d) => !d.metadata.deletionTimestamp);
    if (!daemonsets.length) return;
    const nodes = this.api.store.list('nodes').filter((n) => !n.metadata.deletionTimestamp);
    for (const ds of daemonsets) this.sync(ds, nodes);
  }

  private sync(ds: KObject, nodes: readonly KObject[]): void {
    const template = ((ds.spec ?? {}) as { template?: PodTemplate }).template ?? {};
    const spec = (template.spec ?? {}) as PodSpec & { hostNetwork?: boolean };
    const tolerations = daemonTolerations(spec);
    const probe: KObject = { metadata: { name: 'probe' }, spec: { ...spec, tolerations } };
    const wanted = new Set(
      nodes
        .filter((n) => {
          const labels = n.metadata.labels ?? {};
          return (
            matchesNodeAffinity(probe, labels, n.metadata.name!) && !untoleratedTaint(tolerations, effectiveTaints(n))
          );
        })
        .map((n) => n.metadata.name!),
    );
    const pods = owned(this.api, 'pods', ds).filter(isActive);
    const byNode = new Map<string, KObject[]>();
    for (const p of pods) {
      const n = targetNode(p) ?? '';
      byNode.set(n, [...(byNode.get(n) ?? []), p]);
    }
    for (const [node, list] of byNode) {
      const keep = wanted.has(node) ? 1 : 0;
      for (const p of list.slice(keep))
        this.api.delete('pods', p.metadata.namespace, p.metadata.name!, { preconditions: { uid: p.metadata.uid! } });
    }
    for (const node of wanted) {
      if (byNode.has(node)) continue;
      const pod = podFromTemplate(ds, template, `${ds.metadata.name}-`);
      const ps = pod.spec as PodSpec;
      ps.tolerations = tolerations;
      ps.affinity = {
        ...(ps.affinity ?? {}),
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
          },
        },
      };
      this.api.create('pods', ds.metadata.namespace, pod);
    }
    const current = owned(this.api, 'pods', ds).filter(isActive);
    const scheduledOn = new Set(current.map((p) => podSpec(p).nodeName).filter((n): n is string => !!n));
    const ready = current.filter((p) => isPodReady(p) && wanted.has(podSpec(p).nodeName ?? '')).length;
    writeStatus(this.api, 'daemonsets.apps', ds, {
      desiredNumberScheduled: wanted.size,
      currentNumberScheduled: [...scheduledOn].filter((n) => wanted.has(n)).length,
      numberMisscheduled: [...scheduledOn].filter((n) => !wanted.has(n)).length,
      numberReady: ready,
      numberAvailable: ready,
      updatedNumberScheduled: [...scheduledOn].filter((n) => wanted.has(n)).length,
      observedGeneration: ds.metadata.generation ?? 1,
    });
  }
}
