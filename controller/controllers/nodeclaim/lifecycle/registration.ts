// Registration (docs/karpenter/disruption.md §5.4): find the Node with the NodeClaim's providerID, make it ours
// (termination finalizer, owner reference, the NodeClaim's labels, annotations, taints and startup taints),
// take off karpenter.sh/unregistered, and label it registered.
import { ZONE_LABEL, type Taint } from '../../../../engine/index.ts';
import { targetOf } from '../../../operator/events.ts';
import { apiVersionOf, type KubeObject } from '../../../operator/kube.ts';
import type { ControllerContext } from '../../context.ts';
import { DO_NOT_SYNC_TAINTS_LABEL, REGISTERED_LABEL, TERMINATION_FINALIZER, UNREGISTERED_TAINT } from '../../keys.ts';
import { conditionIs, next, setCondition, stop, type Draft, type Step } from './draft.ts';

type TaintJson = { key: string; value?: string; effect: string };
const same = (a: TaintJson, b: TaintJson): boolean =>
  a.key === b.key && a.effect === b.effect && (a.value ?? '') === (b.value ?? '');

/** The node's taints after registration: the NodeClaim's taints and startup taints added, unregistered removed. */
function registeredTaints(node: readonly TaintJson[], claim: readonly Taint[], sync: boolean): TaintJson[] {
  const out = node.filter((t) => !(t.key === UNREGISTERED_TAINT.key && t.effect === UNREGISTERED_TAINT.effect));
  if (sync)
    for (const t of claim)
      if (!out.some((x) => same(x, t)))
        out.push({ key: t.key, effect: t.effect, ...(t.value ? { value: t.value } : {}) });
  return out;
}

export async function register(ctx: ControllerContext, d: Draft): Promise<Step> {
  if (conditionIs(d, 'Registered', 'True')) return next;
  if (!conditionIs(d, 'Launched', 'True')) return stop();
  const now = ctx.clock.now();
  const pid = String(d.status['providerID'] ?? '');
  const node = ctx.cluster.nodeByProviderID(pid);
  if (!node) {
    setCondition(d, 'Registered', 'Unknown', now, 'NodeNotFound', 'Node not registered with cluster');
    return stop();
  }
  const n = node.obj;
  const taints = (n.spec?.['taints'] ?? []) as TaintJson[];
  if (
    n.metadata.labels?.[REGISTERED_LABEL] !== 'true' &&
    !taints.some((t) => t.key === UNREGISTERED_TAINT.key && t.effect === UNREGISTERED_TAINT.effect)
  ) {
    ctx.events.publish({
      involved: targetOf(d.obj, 'NodeClaim'),
      type: 'Warning',
      reason: 'UnregisteredTaintMissing',
      message: `Missing ${UNREGISTERED_TAINT.key} taint which prevents registration related race conditions on Karpenter-managed nodes`,
    });
  }
  await ctx.kube.patch('Node', node.info.name, nodePatch(n, d));
  d.status['nodeName'] = node.info.name;
  setCondition(d, 'Registered', 'True', now);
  ctx.metrics.nodesCreated.inc({
    nodepool: d.info.nodePoolName ?? '',
    zone: n.metadata.labels?.[ZONE_LABEL] ?? d.labels[ZONE_LABEL] ?? '',
  });
  ctx.log.info({ providerID: d.status['providerID'], node: node.info.name }, 'registered nodeclaim');
  return next;
}

function nodePatch(n: KubeObject, d: Draft): Record<string, unknown> {
  const owners = n.metadata.ownerReferences ?? [];
  const uid = d.obj.metadata.uid ?? '';
  const sync = n.metadata.labels?.[DO_NOT_SYNC_TAINTS_LABEL] !== 'true';
  const nodeTaints = (n.spec?.['taints'] ?? []) as TaintJson[];
  return {
    metadata: {
      resourceVersion: n.metadata.resourceVersion,
      labels: { ...d.labels, [REGISTERED_LABEL]: 'true' },
      annotations: d.annotations,
      finalizers: [...new Set([...(n.metadata.finalizers ?? []), TERMINATION_FINALIZER])],
      ownerReferences: owners.some((o) => o.uid === uid)
        ? owners
        : [
            ...owners,
            {
              apiVersion: apiVersionOf('NodeClaim'),
              kind: 'NodeClaim',
              name: d.info.name,
              uid,
              blockOwnerDeletion: true,
            },
          ],
    },
    spec: { taints: registeredTaints(nodeTaints, [...d.info.taints, ...d.info.startupTaints], sync) },
  };
}
