// computeConsolidation (docs/karpenter/disruption.md §2.5.1-§2.5.3): simulate removing the candidates, then delete
// (pods fit elsewhere), replace (by one strictly cheaper NodeClaim) or do nothing, and say why.
import type { InstanceType, Requirements, Snapshot } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL } from '../scheduling/labels.ts';
import { add, fromSelector, req } from '../scheduling/requirements.ts';
import type { ModelCaches } from '../model/caches.ts';
import { minValuesUnmetKeys, offeringAllowed } from '../model/templates.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { minValuesNotMet } from '../scheduling/minvalues.ts';
import { makeCommand } from './command.ts';
import {
  allowsCapacityType,
  cheapestAllowed,
  claimOptions,
  claimRequirements,
  filterByPrice,
  unmetMinValues,
  withOptions,
  worstLaunchPrice,
} from './pricing.ts';
import { describeErrors, simulate, type SimContext, type Simulation } from './simulate.ts';
import type { Candidate, Command, ExplanationCode } from './types.ts';
import { usd, usd2 } from './words.ts';

/** Spot-to-spot needs this many cheaper options for a single node (§2.5.3). */
const SPOT_TO_SPOT_MIN_TYPES = 15;

interface NoConsolidation {
  readonly code: ExplanationCode;
  readonly message: string;
  readonly data: Readonly<Record<string, unknown>>;
  /** Karpenter's Unconsolidatable event text (single-node consolidation publishes it). */
  readonly eventMessage?: string;
}

type ConsolidationOutcome =
  | { readonly kind: 'command'; readonly command: Command; readonly sim: Simulation }
  | { readonly kind: 'noop'; readonly why: NoConsolidation; readonly sim?: Simulation };

interface ConsolidationContext extends SimContext {
  readonly method: 'single' | 'multi';
}

const noop = (
  code: ExplanationCode,
  message: string,
  data: Record<string, unknown> = {},
  eventMessage?: string,
  sim?: Simulation,
): ConsolidationOutcome => ({
  kind: 'noop',
  why: { code, message, data, ...(eventMessage !== undefined ? { eventMessage } : {}) },
  ...(sim ? { sim } : {}),
});

export async function computeConsolidation(
  s: Snapshot,
  candidates: readonly Candidate[],
  ctx: ConsolidationContext,
): Promise<ConsolidationOutcome> {
  const sim = await simulate(
    s,
    candidates.map((c) => c.node),
    ctx,
    true,
  );
  if (sim.candidateDeleting)
    return noop('candidate-deleting', 'a candidate is already being deleted', {}, undefined, sim);
  if (sim.errors.size) {
    const errs = describeErrors(sim);
    return noop(
      'pods-would-not-schedule',
      `pods would not schedule elsewhere: ${errs}`,
      { errors: Object.fromEntries(sim.errors) },
      `Not all pods would schedule, ${errs}`,
      sim,
    );
  }
  const claims = sim.plan.newNodeClaims;
  if (claims.length === 0)
    return { kind: 'command', command: makeCommand('Underutilized', ctx.method, candidates, [], sim.plan), sim };
  if (claims.length > 1) {
    return noop(
      'needs-multiple-nodes',
      `its pods would need ${claims.length} new nodes; Karpenter's consolidation replaces with at most one`,
      { newNodes: claims.length },
      `Can't remove without creating ${claims.length} candidates`,
      sim,
    );
  }
  const r = replacement(s, candidates, claims[0]!, ctx.caches);
  if (!r.ok) return { kind: 'noop', why: r.why, sim };
  return { kind: 'command', command: makeCommand('Underutilized', ctx.method, candidates, [r.claim], sim.plan), sim };
}

type Replacement = { ok: true; claim: NewNodeClaimPlan } | { ok: false; why: NoConsolidation };

const fail = (
  code: ExplanationCode,
  message: string,
  data: Record<string, unknown>,
  eventMessage?: string,
): Replacement => ({
  ok: false,
  why: { code, message, data, ...(eventMessage !== undefined ? { eventMessage } : {}) },
});

/** The one replacement, filtered by the price rule and, for spot candidates, the spot-to-spot rules. */
function replacement(
  s: Snapshot,
  candidates: readonly Candidate[],
  claim: NewNodeClaimPlan,
  caches?: ModelCaches,
): Replacement {
  const candidatePrice = candidates.reduce((a, c) => a + c.price, 0);
  const reqs = claimRequirements(claim);
  const options = claimOptions(claim, s.instanceTypes, caches);
  // Under minValuesPolicy BestEffort the scheduler lowers an unmet minValues; consolidation must not
  // launch such a node (docs/karpenter/test-cases.md §5.13): it is judged against the NodePool's own minValues.
  if (claim.minValuesRelaxed) {
    const unmet = relaxedLabels(s, claim, options);
    return fail(
      'min-values',
      `its replacement would need minValues for ${unmet.join(', ') || 'unknown'} relaxed`,
      { label: unmet.join(',') || 'unknown' },
      `Filtering by price: ${minValuesNotMet(unmet)}`,
    );
  }
  if (candidates.every((c) => c.capacityType === 'spot') && allowsCapacityType(reqs, 'spot')) {
    return spotToSpot(s, candidates, claim, reqs, options, candidatePrice);
  }
  const filtered = filterByPrice(reqs, options, candidatePrice);
  const priceFail = priceFilterFailure(reqs, options, filtered, candidatePrice);
  if (priceFail) return priceFail;
  const ct = reqs.get(CAPACITY_TYPE_LABEL);
  // The price filter assumed a spot launch where spot is allowed: if spot runs out, fail rather than fall
  // back to a dearer on-demand node (Karpenter's on-demand -> spot consolidation).
  const narrowed =
    ct && allowsCapacityType(reqs, 'spot') && allowsCapacityType(reqs, 'on-demand')
      ? add(reqs, req(CAPACITY_TYPE_LABEL, false, ['spot']))
      : reqs;
  return { ok: true, claim: withOptions(claim, narrowed, filtered) };
}

/** The labels whose NodePool minValues the claim's options do not meet (the ones BestEffort relaxed). */
function relaxedLabels(s: Snapshot, claim: NewNodeClaimPlan, options: readonly InstanceType[]): string[] {
  const pool = s.nodePools.find((p) => p.name === claim.nodePool);
  const labels: string[] = [];
  for (const r of pool?.template.requirements ?? []) {
    if (r.minValues === undefined) continue;
    const single: Requirements = new Map([[r.key, { ...fromSelector(r), minValues: r.minValues }]]);
    if (unmetMinValues(single, options)) labels.push(r.key);
  }
  return labels;
}

function priceFilterFailure(
  reqs: Requirements,
  options: readonly InstanceType[],
  filtered: readonly InstanceType[],
  candidatePrice: number,
): Replacement | undefined {
  const unmet = unmetMinValues(reqs, filtered);
  if (unmet) {
    return fail(
      'min-values',
      `the options cheaper than ${usd(candidatePrice)} do not meet minValues for ${unmet}`,
      { label: unmet },
      `Filtering by price: ${minValuesNotMet(minValuesUnmetKeys(reqs, filtered))}`,
    );
  }
  if (filtered.length === 0) return noCheaper(reqs, options, candidatePrice);
  return undefined;
}

function noCheaper(reqs: Requirements, options: readonly InstanceType[], candidatePrice: number): Replacement {
  let best: { name: string; price: number } | undefined;
  for (const it of options) {
    const p = worstLaunchPrice(reqs, it);
    if (!best || p < best.price) best = { name: it.name, price: p };
  }
  const msg = best
    ? `no cheaper replacement: cheapest fitting option ${best.name} ${usd(best.price)} is not below ${usd(candidatePrice)}`
    : `no cheaper replacement: no instance type fits the pods (current ${usd(candidatePrice)})`;
  return fail(
    'no-cheaper-replacement',
    msg,
    { candidatePrice, ...(best ? { cheapestOption: best.name, cheapestPrice: best.price } : {}) },
    "Can't replace with a cheaper node",
  );
}

function spotToSpot(
  s: Snapshot,
  candidates: readonly Candidate[],
  claim: NewNodeClaimPlan,
  reqs0: Requirements,
  options0: readonly InstanceType[],
  candidatePrice: number,
): Replacement {
  if (!s.options.featureGates.spotToSpotConsolidation) {
    return fail(
      'spot-to-spot-disabled',
      'spot-to-spot consolidation is disabled (feature gate SpotToSpotConsolidation)',
      {},
      "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node",
    );
  }
  const reqs = add(reqs0, req(CAPACITY_TYPE_LABEL, false, ['spot']));
  const spotOptions = options0
    .filter((it) => it.offerings.some((o) => offeringAllowed(reqs, o)))
    .map((it, i) => ({ it, i, p: cheapestAllowed(reqs, it)!.price }))
    .sort((a, b) => a.p - b.p || a.i - b.i)
    .map((x) => x.it);
  const filtered = filterByPrice(reqs, spotOptions, candidatePrice);
  const priceFail = priceFilterFailure(reqs, spotOptions, filtered, candidatePrice);
  if (priceFail) return priceFail;
  if (candidates.length > 1) return { ok: true, claim: withOptions(claim, reqs, filtered) };
  if (filtered.length < SPOT_TO_SPOT_MIN_TYPES) {
    return fail(
      'spot-to-spot-flexibility',
      `spot-to-spot needs ${SPOT_TO_SPOT_MIN_TYPES} cheaper instance types than ${candidates[0]!.instanceType?.name ?? 'the node'} (${usd2(candidatePrice)}/h), found ${filtered.length}`,
      { found: filtered.length, required: SPOT_TO_SPOT_MIN_TYPES },
      `SpotToSpotConsolidation requires ${SPOT_TO_SPOT_MIN_TYPES} cheaper instance type options than the current candidate to consolidate, got ${filtered.length}`,
    );
  }
  return { ok: true, claim: withOptions(claim, reqs, filtered.slice(0, truncation(reqs, filtered))) };
}

/** 15, or the shortest price-ordered prefix that meets every minValues when that is longer (§2.5.3 step 6). */
function truncation(reqs: Requirements, ordered: readonly InstanceType[]): number {
  if (![...reqs.values()].some((r) => r.minValues !== undefined)) return SPOT_TO_SPOT_MIN_TYPES;
  for (let n = 1; n <= ordered.length; n++)
    if (!unmetMinValues(reqs, ordered.slice(0, n))) return Math.max(SPOT_TO_SPOT_MIN_TYPES, n);
  return ordered.length;
}
