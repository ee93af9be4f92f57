// The global repack's building block: from one simulation of "all these nodes gone", the independent units
// of change. A unit is a connected group of candidates and the new NodeClaims their pods go to; pods that go
// to existing nodes tie nothing together. Units can be carried out one by one in any order, because each
// uses only its own new nodes and capacity the whole plan already accounted for.
//
// Price rule for N -> M (our generalisation of §2.5.2): each new NodeClaim is costed at its worst-case
// launch price; a unit saves S0 = Σ candidate prices − Σ cheapest worst-case prices. Each NodeClaim keeps
// the options within S0 / (2M) of its cheapest worst case, so whatever launches, the unit still costs at
// most half of S0 more than planned: it always saves.
import type { Snapshot } from '../domain/types.ts';
import { toMicros } from '../domain/money.ts';
import type { InstanceType, Requirements } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { add, req } from '../scheduling/requirements.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import {
  allowsCapacityType,
  cheapestAllowed,
  claimOptions,
  claimRequirements,
  RESERVATION_ID_LABEL,
  unmetMinValues,
  pricedOptions,
  worstLaunchPrice,
} from './pricing.ts';
import type { Simulation } from './simulate.ts';
import type { Candidate } from './types.ts';

/** A planned NodeClaim and the options the price rule keeps, each at its cheapest allowed offering (micro-dollars). */
interface Replacement {
  readonly claim: NewNodeClaimPlan;
  readonly reqs: Requirements;
  readonly options: ReadonlyArray<{ readonly it: InstanceType; readonly micros: number }>;
}

export interface Unit {
  readonly candidates: readonly Candidate[];
  /** The replacements with the price rule applied; claimsOf() shapes them into NodeClaims (only for units carried out). */
  readonly replacements: readonly Replacement[];
  /** Σ candidate prices − Σ replacement prices (§2.5.4 form). */
  readonly savings: number;
  /** The guaranteed saving: against the worst launch price of every kept option. */
  readonly guaranteed: number;
  readonly disruption: number;
}

type UnitResult =
  | { readonly ok: true; readonly unit: Unit }
  | { readonly ok: false; readonly candidates: readonly Candidate[]; readonly why: string };

/** Groups candidates and new NodeClaims that share pods (union-find over indices). */
export function groupUnits(
  candidates: readonly Candidate[],
  sim: Simulation,
  from: ReadonlyMap<string, string>,
): Array<{ candidates: Candidate[]; claims: NewNodeClaimPlan[] }> {
  const claims = sim.plan.newNodeClaims;
  const parent = Array.from({ length: candidates.length + claims.length }, (_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  // A simulated pod that was bound came off the node it is bound to (`from`: uid -> node over the snapshot,
  // simulate.ts's podNodes; pending pods have no node, and pods of other deleting nodes name a node that is no
  // candidate): the node's name finds its candidate, with no map over every moved pod per simulation.
  const byNode = new Map<string, number>();
  candidates.forEach((c, i) => byNode.set(c.node.name, i));
  claims.forEach((k, j) => {
    // A NodeClaim's pods mostly come off a few nodes, one after another: each node is joined once in a row.
    let last: string | undefined;
    for (const uid of k.pods) {
      const node = from.get(uid);
      if (node === undefined || node === last) continue;
      last = node;
      const i = byNode.get(node);
      if (i !== undefined) parent[find(i)] = find(candidates.length + j);
    }
  });
  const groups = new Map<number, { candidates: Candidate[]; claims: NewNodeClaimPlan[] }>();
  const group = (root: number) => {
    let g = groups.get(root);
    if (!g) groups.set(root, (g = { candidates: [], claims: [] }));
    return g;
  };
  candidates.forEach((c, i) => group(find(i)).candidates.push(c));
  claims.forEach((k, j) => group(find(candidates.length + j)).claims.push(k));
  // NodeClaims holding only pending pods belong to no unit: provisioning launches them anyway.
  return [...groups.values()].filter((g) => g.candidates.length > 0);
}

// Which offerings a requirement set allows depends only on its zone, capacity-type and reservation entries,
// so a worst-case launch price is memoised per instance type (immutable snapshot data) and that key: the
// repack prices hundreds of replacements with the same few keys over the same types, simulation after simulation.
const OFFERING_KEYS = [ZONE_LABEL, CAPACITY_TYPE_LABEL, RESERVATION_ID_LABEL] as const;
const WORST = cacheSlot<InstanceType, Map<string, number>>('worst launch prices');
const CHEAPEST = cacheSlot<InstanceType, Map<string, number>>('cheapest allowed prices');

function offeringKey(reqs: Requirements): string {
  let key = '';
  for (const k of OFFERING_KEYS) {
    const r = reqs.get(k);
    key += r ? `${r.complement ? '!' : '='}${[...r.values].sort().join(',')};${r.gte ?? ''};${r.lte ?? ''}|` : '*|';
  }
  return key;
}

function memo(caches: ModelCaches, slot: typeof WORST, it: InstanceType, key: string, price: () => number): number {
  const byKey = caches.memo(slot, it, () => new Map<string, number>());
  let w = byKey.get(key);
  if (w === undefined) byKey.set(key, (w = toMicros(price())));
  return w;
}

const worstMicros = (reqs: Requirements, key: string, it: InstanceType, caches: ModelCaches) =>
  memo(caches, WORST, it, key, () => worstLaunchPrice(reqs, it));
const cheapestMicros = (reqs: Requirements, key: string, it: InstanceType, caches: ModelCaches) =>
  memo(caches, CHEAPEST, it, key, () => cheapestAllowed(reqs, it)?.price ?? Infinity);

interface Shaped {
  /** The claim's requirements allow spot (before on-demand is ruled out of a spot-or-on-demand claim). */
  readonly spot: boolean;
  readonly reqs: Requirements;
  readonly key: string;
  /** The claim's launchable options at their worst-case launch price (micro-dollars), and the cheapest of those. */
  readonly priced: ReadonlyArray<{ readonly it: InstanceType; readonly w: number }>;
  readonly base: number;
}

// A claim's requirements and options are arrays the decoder shares between the NodeClaims of a solve that
// were finished alike (thousands of claims share a few dozen), so their pricing is kept per pair of arrays
// and catalog: the repack prices every claim of every simulation.
const SHAPED = cacheSlot<
  object,
  { readonly options: object; readonly catalog: object | undefined; readonly shaped: Shaped }
>('shaped claims');

function shapeClaim(
  k: NewNodeClaimPlan,
  types: ReadonlyMap<string, readonly InstanceType[]>,
  caches: ModelCaches,
): Shaped {
  const catalog = types.get(k.nodePool);
  const hit = caches.get(SHAPED, k.requirements);
  if (hit && hit.options === k.instanceTypes && hit.catalog === catalog) return hit.shaped;
  let reqs = claimRequirements(k);
  const spot = allowsCapacityType(reqs, 'spot');
  if (spot && allowsCapacityType(reqs, 'on-demand')) reqs = add(reqs, req(CAPACITY_TYPE_LABEL, false, ['spot']));
  const key = offeringKey(reqs);
  const priced = claimOptions(k, types, caches)
    .map((it) => ({ it, w: worstMicros(reqs, key, it, caches) }))
    .filter((x) => x.w < Number.MAX_SAFE_INTEGER);
  const shaped = { spot, reqs, key, priced, base: priced.length ? Math.min(...priced.map((x) => x.w)) : Infinity };
  caches.set(SHAPED, k.requirements, { options: k.instanceTypes, catalog, shaped });
  return shaped;
}

interface KeptOptions {
  readonly options: Replacement['options'];
  /** The dearest kept option's worst-case launch price, micro-dollars. */
  readonly worst: number;
  /** The cheapest kept option's price, $/h. */
  readonly price: number;
}

/**
 * The options a claim of this shape keeps in a unit saving `s0` over `m` NodeClaims: those within S0 / 2M of its
 * cheapest worst case (within S0 / M when that misses the claim's minValues); undefined when even those miss it.
 */
function keptOptions(x: Shaped, s0: number, m: number, caches: ModelCaches): KeptOptions | undefined {
  let kept = x.priced.filter((p) => p.w <= x.base + Math.floor(s0 / (2 * m)));
  if (
    unmetMinValues(
      x.reqs,
      kept.map((p) => p.it),
    )
  )
    kept = x.priced.filter((p) => p.w < x.base + Math.floor(s0 / m));
  if (
    unmetMinValues(
      x.reqs,
      kept.map((p) => p.it),
    )
  )
    return undefined;
  const options = kept.map((p) => ({ it: p.it, micros: cheapestMicros(x.reqs, x.key, p.it, caches) }));
  // A shaped NodeClaim is priced at its cheapest option (withPricedOptions sorts by price).
  return {
    options,
    worst: Math.max(...kept.map((p) => p.w)),
    price: Math.min(...options.map((o) => o.micros)) / 1e6,
  };
}

/** Applies the price rule to a unit; fails when it does not save or spot-to-spot is not allowed. */
export function priceUnit(
  s: Snapshot,
  group: { candidates: readonly Candidate[]; claims: readonly NewNodeClaimPlan[] },
  caches: ModelCaches,
): UnitResult {
  const { candidates, claims } = group;
  const candidatePrice = candidates.reduce((a, c) => a + c.price, 0);
  const disruption = candidates.reduce((a, c) => a + c.disruptionCost, 0);
  const allSpot = candidates.every((c) => c.capacityType === 'spot');
  const shaped = [];
  for (const k of claims) {
    const x = shapeClaim(k, s.instanceTypes, caches);
    if (allSpot && x.spot && !s.options.featureGates.spotToSpotConsolidation) {
      return {
        ok: false,
        candidates,
        why: 'spot-to-spot consolidation is disabled (feature gate SpotToSpotConsolidation)',
      };
    }
    if (!x.priced.length) return { ok: false, candidates, why: 'a replacement has no launchable option' };
    shaped.push({ claim: k, shape: x });
  }
  const s0 = toMicros(candidatePrice) - shaped.reduce((a, x) => a + x.shape.base, 0);
  if (s0 <= 0)
    return {
      ok: false,
      candidates,
      why: `replacements cost at least as much as the nodes (${candidatePrice.toFixed(4)} $/h)`,
    };
  const out: Replacement[] = [];
  let worst = 0;
  let price = 0;
  // The options a claim keeps depend only on its shape and the unit's S0 and M: NodeClaims of one shape (a big
  // unit has thousands, in a few dozen shapes) are priced once.
  const byShape = new Map<Shaped, KeptOptions | undefined>();
  for (const x of shaped) {
    let k = byShape.get(x.shape);
    if (!byShape.has(x.shape)) byShape.set(x.shape, (k = keptOptions(x.shape, s0, shaped.length, caches)));
    if (!k) return { ok: false, candidates, why: 'the affordable options do not meet minValues' };
    worst += k.worst;
    price += k.price;
    out.push({ claim: x.claim, reqs: x.shape.reqs, options: k.options });
  }
  return {
    ok: true,
    unit: {
      candidates,
      replacements: out,
      savings: candidatePrice - price,
      guaranteed: (toMicros(candidatePrice) - worst) / 1e6,
      disruption,
    },
  };
}

/** The unit's NodeClaims: each with exactly the kept options, in price order, priced at the first. */
export function claimsOf(u: Unit): NewNodeClaimPlan[] {
  // Claims of one shape share their kept options (priceUnit): their requirements are made once.
  const byOptions = new Map<Replacement['options'], ReturnType<typeof pricedOptions>>();
  return u.replacements.map((r) => {
    let p = byOptions.get(r.options);
    if (!p) byOptions.set(r.options, (p = pricedOptions(r.reqs, r.options)));
    return { ...r.claim, ...p };
  });
}
