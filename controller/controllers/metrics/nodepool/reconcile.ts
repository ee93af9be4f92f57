// metrics.nodepool, the cost half of Karpenter's NodePool metrics (usage and limits come from
// nodepool.counter): every 10 s, each NodePool's cost is the sum of the hourly prices of its NodeClaims'
// offerings (instance type, zone, capacity type; a reserved NodeClaim its reservation's price), as the
// cloud provider prices them for that NodePool now (karpenter_nodepools_cost_total). A NodeClaim without
// those labels, or whose offering the provider no longer lists, is counted once in
// karpenter_nodepools_cost_tracker_errors_total and left out of the sum.
import type { InstanceType } from '../../../../engine/index.ts';
import { errText } from '../../../operator/runtime.ts';
import { requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';

const PERIOD_MS = 10_000;

/** The hourly price of the offering a NodeClaim runs on, or undefined when it cannot be told. */
function offeringPrice(types: readonly InstanceType[], labels: Readonly<Record<string, string>>): number | undefined {
  const type = labels['node.kubernetes.io/instance-type'];
  const zone = labels['topology.kubernetes.io/zone'];
  const ct = labels['karpenter.sh/capacity-type'];
  if (!type || !zone || !ct) return undefined;
  const reservation = labels['karpenter.k8s.aws/capacity-reservation-id'];
  const offerings = types.find((t) => t.name === type)?.offerings ?? [];
  const o = offerings.find(
    (x) =>
      x.zone === zone &&
      x.capacityType === ct &&
      (ct !== 'reserved' || !reservation || x.reservationId === reservation),
  );
  return o?.price;
}

export function newNodePoolMetrics(ctx: ControllerContext): Controller {
  const reported = new Set<string>();
  const live = new Set<string>();

  async function poolCost(name: string, claims: readonly NodeClaimEntry[]): Promise<number | undefined> {
    const pool = ctx.cluster.nodePool(name)?.pool;
    if (!pool) return undefined;
    let types: InstanceType[];
    try {
      types = await ctx.cloudProvider.getInstanceTypes(pool);
    } catch (err) {
      ctx.log.error({ nodepool: name, err: errText(err) }, 'listing instance types to cost the NodePool failed');
      return undefined;
    }
    let cost = 0;
    for (const c of claims) {
      const price = offeringPrice(types, c.info.labels);
      if (price !== undefined) cost += price;
      else if (!reported.has(c.info.name)) {
        reported.add(c.info.name);
        ctx.metrics.costTrackerErrors.inc({ nodepool: name });
      }
    }
    return cost;
  }

  async function reconcile(): Promise<ReconcileResult> {
    const byPool = new Map<string, NodeClaimEntry[]>();
    for (const e of ctx.cluster.nodePools()) if (e.obj.metadata.name) byPool.set(e.obj.metadata.name, []);
    for (const c of ctx.cluster.nodeClaims()) byPool.get(c.info.nodePoolName ?? '')?.push(c);
    for (const name of live) if (!byPool.has(name)) ctx.metrics.nodePoolCost.remove({ nodepool: name });
    live.clear();
    for (const [name, claims] of byPool) {
      const cost = await poolCost(name, claims);
      if (cost === undefined) continue;
      ctx.metrics.nodePoolCost.set({ nodepool: name }, cost);
      live.add(name);
    }
    return requeueAfter(PERIOD_MS);
  }

  return {
    name: 'metrics.nodepool',
    reads: ['NodePool', 'EC2NodeClass', ...STATE_NODES],
    concurrency: 1,
    reconcile,
    register(enqueue) {
      enqueue('');
      return () => {};
    },
  };
}
