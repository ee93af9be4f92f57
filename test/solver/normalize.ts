// Plans in a canonical, comparable form (order-independent where order carries no meaning).
import type { ProvisionPlan } from '../../engine/model/types.ts';

export function normalizePlan(p: ProvisionPlan) {
  return {
    existing: [...p.existing].map(([n, uids]) => [n, [...uids].sort()]).sort(),
    claims: p.newNodeClaims
      .map((c) => ({
        nodePool: c.nodePool,
        pods: [...c.pods].sort(),
        instanceTypes: c.instanceTypes.map((i) => `${i.name}@${i.price.toFixed(6)}`),
        requirements: [...c.requirements]
          .map(
            (r) => `${r.key} ${r.operator} ${[...r.values].sort().join(',')}${r.minValues ? ` min${r.minValues}` : ''}`,
          )
          .sort(),
        requests: Object.entries(c.requests).sort(),
        labels: Object.entries(c.labels).sort(),
      }))
      .sort((a, b) => (a.pods[0]! < b.pods[0]! ? -1 : 1)),
    // A pod waiting for reserved capacity is marked: both solvers must agree on why it waits.
    unschedulable: p.unschedulable.map((e) => (e.reservedOffering ? `${e.uid} (reserved)` : e.uid)).sort(),
    ignored: p.ignored.map((e) => e.uid).sort(),
    cost: p.costPerHour.toFixed(6),
  };
}
