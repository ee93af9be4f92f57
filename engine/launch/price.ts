// A plan priced as its launches would pay: each NodeClaim's instance types filtered and priced by the AWS
// provider's launch rules (filter.ts). Plans with the improvement phase are named so already (engine/abi/decode.ts);
// Karpenter's algorithm (the exact path) names the cheapest option whatever its launch would do, so benchmarks and
// tests that compare the two price Karpenter's plan with this.
import { toMicros } from '../domain/money.ts';
import { fromSelectorRequirements } from '../scheduling/requirements.ts';
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan } from '../model/types.ts';
import { selectCandidates } from './filter.ts';

function launched(input: ProvisionInput, c: NewNodeClaimPlan): NewNodeClaimPlan {
  if (c.requirements.some((r) => r.key === 'karpenter.k8s.aws/capacity-reservation-id')) return c;
  const byName = new Map((input.instanceTypes.get(c.nodePool) ?? []).map((it) => [it.name, it]));
  const types = c.instanceTypes.map((o) => byName.get(o.name)).filter((it) => it !== undefined);
  const sel = selectCandidates(types, fromSelectorRequirements(c.requirements), {}, input.options.minValuesPolicy);
  if (!sel.ok) return c;
  const instanceTypes = sel.candidates.map((k) => ({
    name: k.type.name,
    price: toMicros(k.offerings[0]!.price) / 1e6,
  }));
  return { ...c, instanceTypes, price: instanceTypes[0]!.price };
}

/** The plan with every NodeClaim named and priced as its launch would pick. */
export function asLaunched(input: ProvisionInput, plan: ProvisionPlan): ProvisionPlan {
  const newNodeClaims = plan.newNodeClaims.map((c) => launched(input, c));
  return { ...plan, newNodeClaims, costPerHour: newNodeClaims.reduce((a, c) => a + c.price, 0) };
}
