// Which offering a launch request gets, following the AWS provider's CreateFleet preparation
// (docs/karpenter/aws-provider.md §4, steps 2-3): keep the types compatible with the NodeClaim's requirements that fit
// its requests and have an available compatible offering; drop exotic types (metal, GPU, accelerators) when
// a generic one remains; launch spot when spot is allowed and offered, else on-demand; when both are allowed,
// drop spot offerings dearer than the cheapest on-demand one. Reserved capacity comes first when the request
// allows it and a reservation has an instance free (a capacity-reservation-id requirement picks among them).
// EC2's price-capacity-optimized allocation is modelled as "cheapest first", with ties spread over zones.
import {
  fits,
  fromSelectorRequirements,
  intersects,
  reqs as requirementAlgebra,
  type CapacityType,
  type InstanceType,
  type NodeSelectorRequirement,
  type Offering,
  type Resources,
} from '../../engine/index.ts';

export interface Candidate {
  readonly type: InstanceType;
  readonly offering: Offering;
}

type Selection =
  | { readonly ok: true; readonly capacityType: CapacityType; readonly candidates: readonly Candidate[] }
  | { readonly ok: false; readonly reason: string };

const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
const ZONE = 'topology.kubernetes.io/zone';
const RESERVATION_ID = 'karpenter.k8s.aws/capacity-reservation-id';

/** An offering without a reservation has reservation-id DoesNotExist: only NotIn or DoesNotExist accept it. */
function reservationAllowed(o: Offering, reqs: ReturnType<typeof fromSelectorRequirements>): boolean {
  const rid = reqs.get(RESERVATION_ID);
  if (!rid) return true;
  if (o.reservationId === undefined) return rid.complement || rid.values.size === 0;
  return rid.complement ? !rid.values.has(o.reservationId) : rid.values.has(o.reservationId);
}

/**
 * Whether the request allows the offering's zone and capacity type: what intersecting them, as the labels of a
 * node, with the request's requirements says, without building a requirements map for every offering of every
 * named type (a launch looks at about 500 offerings).
 */
function offeringAllowed(o: Offering, reqs: ReturnType<typeof fromSelectorRequirements>): boolean {
  const zone = reqs.get(ZONE);
  if (zone && !requirementAlgebra.has(zone, o.zone)) return false;
  const capacityType = reqs.get(CAPACITY_TYPE);
  return !capacityType || requirementAlgebra.has(capacityType, o.capacityType);
}

const single = (it: InstanceType, key: string): string | undefined => {
  const r = it.requirements.get(key);
  return r && !r.complement && r.values.size === 1 ? [...r.values][0] : undefined;
};

/** Metal sizes, GPUs, Neuron/inference accelerators and Gaudi: launched only when nothing generic fits. */
function isExotic(it: InstanceType): boolean {
  if (single(it, 'karpenter.k8s.aws/instance-size')?.includes('metal')) return true;
  if (single(it, 'karpenter.k8s.aws/instance-gpu-count') !== undefined) return true;
  if (single(it, 'karpenter.k8s.aws/instance-accelerator-count') !== undefined) return true;
  return it.name.startsWith('dl1.') || it.name.startsWith('dl2q.');
}

export function selectOfferings(
  types: readonly InstanceType[],
  req: { readonly requirements: readonly NodeSelectorRequirement[]; readonly requests: Resources },
  unavailable: (capacityType: string, instanceType: string, zone: string) => boolean,
): Selection {
  const reqs = fromSelectorRequirements(req.requirements);
  const minValues = req.requirements.some((r) => r.minValues !== undefined);
  let compatible: Array<{ type: InstanceType; offerings: Offering[] }> = [];
  // NodeClaims name their instance types; checking names first spares the full compatibility test.
  const named = req.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type' && r.operator === 'In');
  const names = named ? new Set(named.values) : undefined;
  for (const it of types) {
    if (names && !names.has(it.name)) continue;
    if (intersects(it.requirements, reqs) !== undefined || !fits(req.requests, it.allocatable)) continue;
    const offerings = it.offerings.filter(
      (o) =>
        o.available &&
        !unavailable(o.capacityType, it.name, o.zone) &&
        offeringAllowed(o, reqs) &&
        reservationAllowed(o, reqs),
    );
    if (offerings.length) compatible.push({ type: it, offerings });
  }
  if (!compatible.length)
    return { ok: false, reason: 'no instance type satisfies the requirements and requests with an available offering' };
  if (!minValues && compatible.some((c) => !isExotic(c.type))) compatible = compatible.filter((c) => !isExotic(c.type));
  const offered = (ct: CapacityType) => compatible.some((c) => c.offerings.some((o) => o.capacityType === ct));
  const capacityType: CapacityType = offered('reserved') ? 'reserved' : offered('spot') ? 'spot' : 'on-demand';
  let candidates: Candidate[] = compatible.flatMap((c) =>
    c.offerings.filter((o) => o.capacityType === capacityType).map((offering) => ({ type: c.type, offering })),
  );
  if (capacityType === 'spot' && !minValues && offered('on-demand')) {
    const cheapestOnDemand = Math.min(
      ...compatible.flatMap((c) => c.offerings.filter((o) => o.capacityType === 'on-demand').map((o) => o.price)),
    );
    const kept = candidates.filter((c) => c.offering.price <= cheapestOnDemand);
    if (kept.length) candidates = kept;
  }
  candidates.sort(
    (a, b) =>
      a.offering.price - b.offering.price ||
      (a.type.name < b.type.name ? -1 : a.type.name > b.type.name ? 1 : 0) ||
      (a.offering.zone < b.offering.zone ? -1 : 1),
  );
  return { ok: true, capacityType, candidates };
}
