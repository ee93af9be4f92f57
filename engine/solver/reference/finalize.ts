// Turning a simulated NodeClaim into the plan's NodeClaim (spec/scheduling.md §1.12, §2.16): hostname and
// simulation keys removed, the smallest daemonset overhead added to the requests, instance types ordered
// by price and truncated, instance-type and capacity-type requirements narrowed to what remains.
import type { EngineOptions, InstanceType, NodeSelectorRequirement, Pod, Requirements, Resources } from '../../domain/types.ts';
import { REQUESTED_DRA_DRIVERS_ANNOTATION } from '../../domain/dra.ts';
import { toMicros } from '../../domain/money.ts';
import { add as addResources } from '../../domain/resources.ts';
import {
  CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, INSTANCE_TYPE_LABEL, SIMULATION_LABELS, schedulingRestrictedReason,
} from '../../scheduling/labels.ts';
import { anyValue, toSelectorRequirements } from '../../scheduling/requirements.ts';
import type { NewNodeClaimPlan } from '../types.ts';
import type { SimNodeClaim } from './nodes.ts';
import { withReservationRequirements } from './reservations.ts';
import { minValuesTruncated } from '../../scheduling/minvalues.ts';
import { cheapestOffering, minValuesAchieved, minValuesUnmet, minValuesUnmetKeys, offeringAllowed, type DaemonGroup, type Template } from './templates.ts';

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

export function finalizeClaim(c: SimNodeClaim, options: EngineOptions, wellKnown: ReadonlySet<string>, held: ReadonlySet<string> = new Set()): Finalized {
  const base: Requirements = new Map([...c.requirements].filter(([k]) => k !== HOSTNAME_LABEL && !SIMULATION_LABELS.has(k)));
  // A NodeClaim holding reservations launches into one of them (§2.15); types left without an offering the
  // final requirements allow are dropped (Karpenter lists them last, priced at MaxFloat64, and its cloud
  // provider skips them at launch).
  const reqs = withReservationRequirements(base, held);
  const its = held.size ? c.instanceTypes.filter((it) => it.offerings.some((o) => offeringAllowed(reqs, o))) : c.instanceTypes;
  const ordered = orderByPrice(reqs, its).slice(0, options.maxInstanceTypes);
  const f = claimPlan(c.template, reqs, ordered, c.pods, options, wellKnown);
  if (!f.ok || c.draDrivers.size === 0) return f;
  // §2.16: the drivers whose node-local devices the NodeClaim's pods were allocated, over the types it keeps;
  // node initialization waits for them to publish (DRADriverPoolsNotPublished).
  const drivers = new Set<string>();
  for (const o of ordered) for (const d of c.draDrivers.get(o.it.name) ?? []) drivers.add(d);
  if (!drivers.size) return f;
  return { ok: true, claim: { ...f.claim, annotations: { [REQUESTED_DRA_DRIVERS_ANNOTATION]: [...drivers].sort().join(',') } } };
}

/**
 * The plan's NodeClaim from its template, final requirements, price-ordered (truncated) instance types
 * and pods. Shared by the reference and the wasm decoder so both finish a NodeClaim the same way.
 */
/** What every NodeClaim with the same final requirements shares: computed once per requirement set. */
interface SetParts {
  readonly reqs: Requirements;
  /** Selector requirements without the instance-type and capacity-type keys (added per NodeClaim). */
  readonly selectors: NodeSelectorRequirement[];
  readonly labels: Readonly<Record<string, string>>;
}
const partsCache = new WeakMap<Requirements, Map<Template, SetParts>>();

function setParts(template: Template, finalReqs: Requirements, wellKnown: ReadonlySet<string>): SetParts {
  let byTemplate = partsCache.get(finalReqs);
  if (!byTemplate) partsCache.set(finalReqs, (byTemplate = new Map()));
  let parts = byTemplate.get(template);
  if (parts) return parts;
  const reqs = new Map([...finalReqs].filter(([k]) => k !== HOSTNAME_LABEL && !SIMULATION_LABELS.has(k))) as Requirements;
  const labels: Record<string, string> = { ...template.pool.template.labels };
  for (const r of reqs.values()) {
    if (wellKnown.has(r.key) || SIMULATION_LABELS.has(r.key) || schedulingRestrictedReason(r.key, wellKnown) || labels[r.key] !== undefined) continue;
    const v = anyValue(r);
    if (v !== undefined) labels[r.key] = v;
  }
  const rest = new Map([...reqs].filter(([k]) => k !== INSTANCE_TYPE_LABEL && k !== CAPACITY_TYPE_LABEL));
  parts = { reqs, selectors: toSelectorRequirements(rest), labels };
  byTemplate.set(template, parts);
  return parts;
}

/** What NodeClaims sharing one instance-type list (and requirement set) share; read-only, so shared safely. */
interface ListParts {
  readonly kept: readonly InstanceType[];
  readonly names: readonly string[];
  readonly options: readonly { name: string; price: number }[];
  readonly capacityTypes: readonly string[];
  /** minValuesUnmet(reqs, kept): a function of these parts' key. */
  readonly unmet: string | undefined;
  /** The NodeClaim requirements for these parts' set (when minValues hold), built on first use; read-only. */
  requirements?: readonly NodeSelectorRequirement[];
}
const listCache = new WeakMap<object, Map<Requirements, ListParts>>();

function listParts(ordered: ReadonlyArray<{ it: InstanceType; micros: number }>, reqs: Requirements): ListParts {
  let byReqs = listCache.get(ordered);
  if (!byReqs) listCache.set(ordered, (byReqs = new Map()));
  let parts = byReqs.get(reqs);
  if (parts) return parts;
  const kept = ordered.map((o) => o.it);
  // The capacity types some kept type can launch as (stop once all three are seen: usually at once).
  const cts = new Set<string>();
  for (const it of kept) {
    for (const o of it.offerings) if (!cts.has(o.capacityType) && offeringAllowed(reqs, o)) cts.add(o.capacityType);
    if (cts.size === 3) break;
  }
  parts = {
    kept,
    names: Object.freeze(kept.map((it) => it.name)),
    options: Object.freeze(ordered.map((o) => Object.freeze({ name: o.it.name, price: o.micros / 1e6 }))),
    capacityTypes: Object.freeze([...cts].sort()),
    unmet: minValuesUnmet(reqs, kept),
  };
  byReqs.set(reqs, parts);
  return parts;
}

/** Per template: its one daemonset group, or null when instance types differ in which daemonsets they run. */
const soleGroup = new WeakMap<Template, DaemonGroup | null>();

/** The smallest daemonset overhead among the kept types (one group for most templates: no lookups then). */
function keptOverhead(template: Template, kept: readonly InstanceType[]): Resources {
  let only = soleGroup.get(template);
  if (only === undefined) {
    const groups = new Set(template.daemonGroupOf.values());
    only = groups.size === 1 ? [...groups][0]! : null;
    soleGroup.set(template, only);
  }
  if (only) return only.overhead;
  return minOverhead([...new Set(kept.map((it) => template.daemonGroupOf.get(it.name)!))].map((g) => g.overhead));
}

/**
 * The plan's NodeClaim from its template, final requirements, price-ordered (truncated) instance types
 * and pods. Shared by the reference and the wasm decoder so both finish a NodeClaim the same way. The
 * instance-type requirement lists the types in price order. `podRequests`, when the caller has them: each
 * pod's requests as (resource, quantity) entries, in pod order (the decoder shares one array per pod class
 * instead of walking 20,000 request objects).
 */
export function claimPlan(
  template: Template,
  finalReqs: Requirements,
  ordered: ReadonlyArray<{ it: InstanceType; micros: number }>,
  pods: readonly Pod[],
  options: EngineOptions,
  wellKnown: ReadonlySet<string>,
  podRequests?: ReadonlyArray<ReadonlyArray<readonly [string, number]>>,
): Finalized {
  const parts = setParts(template, finalReqs, wellKnown);
  let { reqs, selectors } = parts;
  const { labels } = parts;
  const shared = listParts(ordered, reqs);
  const kept = shared.kept;
  let minValuesRelaxed = false;
  const unmet = shared.unmet;
  if (unmet) {
    if (options.minValuesPolicy === 'Strict') return { ok: false, reason: minValuesTruncated(template.pool.name, minValuesUnmetKeys(reqs, kept)) };
    minValuesRelaxed = true;
    reqs = relaxMinValues(reqs, kept);
    selectors = toSelectorRequirements(new Map([...reqs].filter(([k]) => k !== INSTANCE_TYPE_LABEL && k !== CAPACITY_TYPE_LABEL)));
  }
  // The same for every NodeClaim with these parts (4,000 NodeClaims of a solve share a few dozen): shared, frozen.
  let requirements = minValuesRelaxed ? undefined : shared.requirements;
  if (!requirements) {
    const itMin = reqs.get(INSTANCE_TYPE_LABEL)?.minValues;
    const ctMin = reqs.get(CAPACITY_TYPE_LABEL)?.minValues;
    requirements = Object.freeze([
      ...selectors,
      { key: INSTANCE_TYPE_LABEL, operator: 'In' as const, values: shared.names, ...(itMin !== undefined ? { minValues: itMin } : {}) },
      { key: CAPACITY_TYPE_LABEL, operator: 'In' as const, values: shared.capacityTypes, ...(ctMin !== undefined ? { minValues: ctMin } : {}) },
    ]);
    if (!minValuesRelaxed) shared.requirements = requirements;
  }
  const instanceTypes = shared.options;
  const requests: Record<string, number> = { ...keptOverhead(template, kept) };
  if (podRequests) {
    for (let i = 0; i < podRequests.length; i++) {
      const entries = podRequests[i]!;
      for (let j = 0; j < entries.length; j++) {
        const e = entries[j]!;
        requests[e[0]] = (requests[e[0]] ?? 0) + e[1];
      }
    }
  }
  else for (const p of pods) for (const k in p.requests) requests[k] = (requests[k] ?? 0) + p.requests[k]!;
  return {
    ok: true,
    claim: {
      nodePool: template.pool.name,
      pods: pods.map((p) => p.uid),
      requirements,
      instanceTypes,
      requests,
      labels: { ...labels },
      taints: template.pool.template.taints,
      startupTaints: template.pool.template.startupTaints,
      price: instanceTypes[0]?.price ?? 0,
      ...(minValuesRelaxed ? { minValuesRelaxed } : {}),
    },
  };
}
