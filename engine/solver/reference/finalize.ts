// Turning a simulated NodeClaim into the plan's NodeClaim (spec/scheduling.md §1.12, §2.16): hostname and
// simulation keys removed, the smallest daemonset overhead added to the requests, instance types ordered
// by price and truncated, instance-type and capacity-type requirements narrowed to what remains.
import type { EngineOptions, InstanceType, Pod, Requirements, Resources } from '../../domain/types.ts';
import { toMicros } from '../../domain/money.ts';
import { add as addResources } from '../../domain/resources.ts';
import {
  CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, INSTANCE_TYPE_LABEL, SIMULATION_LABELS, schedulingRestrictedReason,
} from '../../scheduling/labels.ts';
import { add, anyValue, req, toSelectorRequirements } from '../../scheduling/requirements.ts';
import type { NewNodeClaimPlan } from '../types.ts';
import type { SimNodeClaim } from './nodes.ts';
import { cheapestOffering, minValuesAchieved, minValuesUnmet, offeringAllowed, type Template } from './templates.ts';

/** Per-resource minimum over resources present in every list. */
function minOverhead(lists: readonly Resources[]): Resources {
  if (!lists.length) return {};
  const out: Record<string, number> = { ...lists[0]! };
  for (const l of lists.slice(1)) {
    for (const k of Object.keys(out)) {
      if (l[k] === undefined) delete out[k];
      else out[k] = Math.min(out[k]!, l[k]!);
    }
  }
  return out;
}

/** Orders instance types by their cheapest compatible available offering; ties keep catalog order. */
export function orderByPrice(reqs: Requirements, its: readonly InstanceType[]): Array<{ it: InstanceType; micros: number }> {
  return its
    .map((it, i) => ({ it, i, micros: toMicros(cheapestOffering(reqs, it)?.price ?? Infinity) }))
    .sort((a, b) => a.micros - b.micros || a.i - b.i)
    .map(({ it, micros }) => ({ it, micros }));
}

/**
 * MinValuesPolicy BestEffort (spec/scheduling.md §2.14): a minValues the instance types cannot reach is lowered
 * to the number of values they do offer, so the NodeClaim asks for what its options achieve (Karpenter writes
 * the relaxed count into the NodeClaim's requirement, e.g. `instance-type In [c5.large]` with minValues 1).
 * Counted over the options the NodeClaim keeps.
 */
function relaxMinValues(reqs: Requirements, kept: readonly InstanceType[]): Requirements {
  const out = new Map(reqs);
  for (const r of reqs.values()) {
    if (r.minValues === undefined) continue;
    const achieved = minValuesAchieved(r, kept);
    if (achieved < r.minValues) out.set(r.key, { ...r, minValues: achieved });
  }
  return out;
}

export type Finalized = { ok: true; claim: NewNodeClaimPlan } | { ok: false; reason: string };

export function finalizeClaim(c: SimNodeClaim, options: EngineOptions, wellKnown: ReadonlySet<string>): Finalized {
  const reqs: Requirements = new Map([...c.requirements].filter(([k]) => k !== HOSTNAME_LABEL && !SIMULATION_LABELS.has(k)));
  const ordered = orderByPrice(reqs, c.instanceTypes).slice(0, options.maxInstanceTypes);
  return claimPlan(c.template, reqs, ordered, c.pods, options, wellKnown);
}

/**
 * The plan's NodeClaim from its template, final requirements, price-ordered (truncated) instance types
 * and pods. Shared by the reference and the wasm decoder so both finish a NodeClaim the same way.
 */
export function claimPlan(
  template: Template,
  finalReqs: Requirements,
  ordered: ReadonlyArray<{ it: InstanceType; micros: number }>,
  pods: readonly Pod[],
  options: EngineOptions,
  wellKnown: ReadonlySet<string>,
): Finalized {
  let reqs = new Map([...finalReqs].filter(([k]) => k !== HOSTNAME_LABEL && !SIMULATION_LABELS.has(k))) as Requirements;
  const kept = ordered.map((o) => o.it);
  let minValuesRelaxed = false;
  const unmet = minValuesUnmet(reqs, kept);
  if (unmet) {
    if (options.minValuesPolicy === 'Strict') return { ok: false, reason: `NodePool couldn't meet minValues requirements (label ${unmet})` };
    minValuesRelaxed = true;
    reqs = relaxMinValues(reqs, kept);
  }
  const capacityTypes = new Set<string>();
  for (const it of kept) for (const o of it.offerings) if (offeringAllowed(reqs, o)) capacityTypes.add(o.capacityType);
  const itReq = reqs.get(INSTANCE_TYPE_LABEL);
  reqs = add(
    reqs,
    req(INSTANCE_TYPE_LABEL, false, kept.map((it) => it.name), undefined, undefined, itReq?.minValues),
    req(CAPACITY_TYPE_LABEL, false, capacityTypes, undefined, undefined, reqs.get(CAPACITY_TYPE_LABEL)?.minValues),
  );
  const overhead = minOverhead(kept.map((it) => template.daemonGroupOf.get(it.name)!.overhead));
  const labels: Record<string, string> = { ...template.pool.template.labels };
  for (const r of reqs.values()) {
    if (wellKnown.has(r.key) || SIMULATION_LABELS.has(r.key) || schedulingRestrictedReason(r.key, wellKnown) || labels[r.key] !== undefined) continue;
    const v = anyValue(r);
    if (v !== undefined) labels[r.key] = v;
  }
  const instanceTypes = ordered.map((o) => ({ name: o.it.name, price: o.micros / 1e6 }));
  const requests: Record<string, number> = { ...overhead };
  for (const p of pods) for (const k in p.requests) requests[k] = (requests[k] ?? 0) + p.requests[k]!;
  return {
    ok: true,
    claim: {
      nodePool: template.pool.name,
      pods: pods.map((p) => p.uid),
      requirements: toSelectorRequirements(reqs),
      instanceTypes,
      requests,
      labels,
      taints: template.pool.template.taints,
      startupTaints: template.pool.template.startupTaints,
      price: instanceTypes[0]?.price ?? 0,
      ...(minValuesRelaxed ? { minValuesRelaxed } : {}),
    },
  };
}
