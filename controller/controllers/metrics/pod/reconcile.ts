// metrics.pod: one karpenter_pods_state series per pod (Karpenter's pod metrics controller), labelled
// with its phase and where it runs (node, NodePool, zone, arch, capacity type, instance type).
import { done, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';

type Labels = Record<'name' | 'namespace' | 'owner' | 'node' | 'nodepool' | 'zone' | 'arch' | 'capacity_type' | 'instance_type' | 'phase', string>;

export function newPodMetrics(ctx: ControllerContext): Controller {
  const current = new Map<string, Labels>();

  async function reconcile(key: string): Promise<ReconcileResult> {
    const [namespace = '', name = ''] = key.split('/');
    const prior = current.get(key);
    const entry = ctx.cluster.workloads.pod(namespace, name);
    if (prior) ctx.metrics.podsState.remove(prior);
    current.delete(key);
    if (!entry) return done;
    const { obj, pod } = entry;
    const nodeLabels = pod.nodeName ? ctx.cluster.node(pod.nodeName)?.info.labels ?? {} : {};
    const owner = obj.metadata.ownerReferences?.find((o) => o.controller) ?? obj.metadata.ownerReferences?.[0];
    const labels: Labels = {
      name, namespace,
      owner: owner ? `${owner.kind}/${owner.name}` : '',
      node: pod.nodeName ?? '',
      nodepool: nodeLabels['karpenter.sh/nodepool'] ?? '',
      zone: nodeLabels['topology.kubernetes.io/zone'] ?? '',
      arch: nodeLabels['kubernetes.io/arch'] ?? '',
      capacity_type: nodeLabels['karpenter.sh/capacity-type'] ?? '',
      instance_type: nodeLabels['node.kubernetes.io/instance-type'] ?? '',
      phase: pod.phase,
    };
    ctx.metrics.podsState.set(labels, 1);
    current.set(key, labels);
    return done;
  }

  return {
    name: 'metrics.pod',
    reads: STATE_NODES,
    reconcile,
    register(enqueue) {
      for (const p of ctx.cluster.workloads.allPods()) enqueue(`${p.namespace}/${p.name}`);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'Pod') enqueue(`${c.namespace ?? 'default'}/${c.name}`);
      });
    },
  };
}
