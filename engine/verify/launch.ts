// The verifier's launch check: the type and price a plan names for a NodeClaim are what the AWS provider's launch
// would pick among the NodeClaim's instance types (karpenter-provider-aws v1.14.1, instance filters: exotic types
// only when nothing generic is offered, spot offerings dearer than the cheapest on-demand offering dropped, then
// spot if any is left, else on-demand, cheapest first). Written here from those rules, sharing no code with the
// engine's launch filters.
import type { InstanceType, Offering } from '../domain/types.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { allowedOfferings } from './labels.ts';

const ACCELERATORS = [
  'nvidia.com/gpu',
  'amd.com/gpu',
  'aws.amazon.com/neuron',
  'aws.amazon.com/neuroncore',
  'habana.ai/gaudi',
];

function exotic(it: InstanceType): boolean {
  const size = it.requirements.get('karpenter.k8s.aws/instance-size');
  if (size && !size.complement && [...size.values].some((v) => v.includes('metal'))) return true;
  return ACCELERATORS.some((r) => (it.capacity[r] ?? 0) > 0);
}

const cheapest = (os: readonly Offering[]) => os.reduce((m, o) => Math.min(m, o.price), Infinity);

/** Why the NodeClaim's named type or price is not what its launch would get, or undefined when it is. */
export function launchMismatch(c: NewNodeClaimPlan, its: ReadonlyMap<string, InstanceType>): string | undefined {
  if (c.requirements.some((r) => r.minValues !== undefined)) return undefined;
  const options = c.instanceTypes.map((o) => its.get(o.name)).filter((it): it is InstanceType => it !== undefined);
  if (!options.length) return undefined;
  // A NodeClaim that may launch into reserved capacity launches there, at the reservation's price, not by the spot
  // and on-demand rule; one whose options offer no reservation it allows is judged by that rule.
  if (options.some((it) => allowedOfferings(c, it).some((o) => o.capacityType === 'reserved'))) return undefined;
  const generic = options.filter((it) => !exotic(it));
  const pool = generic.length ? generic : options;
  const offered = new Map(pool.map((it) => [it, allowedOfferings(c, it)]));
  const all = [...offered.values()].flat();
  const floor = cheapest(all.filter((o) => o.capacityType === 'on-demand'));
  const spot = all.filter((o) => o.capacityType === 'spot' && o.price <= floor);
  const capacityType = spot.length ? 'spot' : 'on-demand';
  const price = spot.length ? cheapest(spot) : floor;
  const named = its.get(c.instanceTypes[0]!.name);
  if (!named || !pool.includes(named))
    return `names ${c.instanceTypes[0]!.name}, which its launch would not use (exotic while generic types are offered)`;
  const own = cheapest((offered.get(named) ?? []).filter((o) => o.capacityType === capacityType));
  if (Math.abs(own - price) > 1e-6 || Math.abs(c.price - price) > 1e-6) {
    return `names ${named.name} at ${c.price}/h, but its launch would pick ${capacityType} at ${price}/h`;
  }
  return undefined;
}
