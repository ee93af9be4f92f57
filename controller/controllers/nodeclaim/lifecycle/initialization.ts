// Initialization (docs/karpenter/disruption.md §5.4): the node is Ready, its startup taints and the known ephemeral
// taints are gone, every extended resource the NodeClaim requested is registered and every DRA driver in its
// karpenter.sh/requested-dra-drivers annotation has published its node-local pools; then label it
// karpenter.sh/initialized.
import {
  isKnownEphemeralTaint,
  REQUESTED_DRA_DRIVERS_ANNOTATION,
  type DraState,
  type Taint,
} from '../../../../engine/index.ts';
import type { ControllerContext } from '../../context.ts';
import { INITIALIZED_LABEL } from '../../keys.ts';
import { conditionIs, next, setCondition, stop, type Draft, type Step } from './draft.ts';

const BASE_RESOURCES = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);
const same = (a: Taint, b: Taint): boolean =>
  a.key === b.key && a.effect === b.effect && (a.value ?? '') === (b.value ?? '');

/**
 * Drivers named in karpenter.sh/requested-dra-drivers without a complete node-local pool on the node: every pool
 * of theirs on the node must have all `resourceSliceCount` slices of its newest generation (and there must be one).
 */
export function unpublishedDrivers(annotation: string | undefined, node: string, dra: DraState): string[] {
  if (!annotation) return [];
  const out: string[] = [];
  for (const driver of annotation
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const slices = dra.resourceSlices.filter((s) => s.driver === driver && s.nodeName === node);
    const pools = new Map<string, typeof slices>();
    for (const s of slices) pools.set(s.pool.name, [...(pools.get(s.pool.name) ?? []), s]);
    const complete =
      pools.size > 0 &&
      [...pools.values()].every((ps) => {
        const gen = Math.max(...ps.map((s) => s.pool.generation));
        const newest = ps.filter((s) => s.pool.generation === gen);
        return newest.length >= newest[0]!.pool.resourceSliceCount;
      });
    if (!complete) out.push(driver);
  }
  return out;
}

export async function initialize(ctx: ControllerContext, d: Draft): Promise<Step> {
  if (conditionIs(d, 'Initialized', 'True')) return next;
  if (!conditionIs(d, 'Registered', 'True')) return stop();
  const now = ctx.clock.now();
  const node = ctx.cluster.nodeByProviderID(String(d.status['providerID'] ?? ''));
  const wait = (reason: string, message: string): Step => {
    setCondition(d, 'Initialized', 'Unknown', now, reason, message);
    return stop();
  };
  if (!node) return wait('NodeNotFound', 'Node not registered with cluster');
  const n = node.info;
  if (!n.ready) return wait('NodeNotReady', 'Node status is NotReady');
  const startup = d.info.startupTaints.filter((st) => n.taints.some((t) => same(t, st)));
  if (startup.length)
    return wait(
      'StartupTaintsExist',
      `StartupTaint "${startup.map((t) => `${t.key}:${t.effect}`).join(', ')}" still exists`,
    );
  const ephemeral = n.taints.filter(isKnownEphemeralTaint);
  if (ephemeral.length)
    return wait(
      'KnownEphemeralTaintsExist',
      `KnownEphemeralTaint "${ephemeral.map((t) => `${t.key}:${t.effect}`).join(', ')}" still exists`,
    );
  const missing = Object.entries(d.info.requests)
    .filter(([k, v]) => !BASE_RESOURCES.has(k) && v > 0 && !(n.allocatable[k]! > 0))
    .map(([k]) => k);
  if (missing.length)
    return wait('ResourceNotRegistered', `Resource "${missing.join(', ')}" was requested but not registered`);
  const unpublished = unpublishedDrivers(
    d.annotations[REQUESTED_DRA_DRIVERS_ANNOTATION],
    n.name,
    ctx.cluster.workloads.dra.state(),
  );
  if (unpublished.length)
    return wait(
      'DRADriverPoolsNotPublished',
      `DRA driver "${unpublished.join(', ')}" has not published a complete resource pool for the node`,
    );
  await ctx.kube.patch('Node', n.name, { metadata: { labels: { [INITIALIZED_LABEL]: 'true' } } });
  setCondition(d, 'Initialized', 'True', now);
  ctx.log.info(
    { providerID: d.status['providerID'], node: n.name, allocatable: node.obj.status?.['allocatable'] },
    'initialized nodeclaim',
  );
  return next;
}
