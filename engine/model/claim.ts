// The plan's NodeClaim from a solve's NodeClaim (docs/karpenter/scheduling.md §1.12, §2.16): hostname and simulation
// keys removed, the smallest daemonset overhead added to the requests, instance types ordered by price and
// truncated, instance-type and capacity-type requirements narrowed to what remains. Shared by the reference
// solver and the wasm decoder so both finish a NodeClaim the same way.
import type {
  EngineOptions,
  InstanceType,
  NodeSelectorRequirement,
  Pod,
  Requirements,
  Resources,
} from '../domain/types.ts';
import { toMicros } from '../domain/money.ts';
import { overlayAnnotations } from '../catalog/overlay.ts';
import {
  CAPACITY_TYPE_LABEL,
  HOSTNAME_LABEL,
  INSTANCE_TYPE_LABEL,
  SIMULATION_LABELS,
  schedulingRestrictedReason,
} from '../scheduling/labels.ts';
import { anyValue, toSelectorRequirements } from '../scheduling/requirements.ts';
import { minValuesTruncated } from '../scheduling/minvalues.ts';
import { cacheSlot, type ModelCaches } from './caches.ts';
import type { NewNodeClaimPlan } from './types.ts';
import {
  cheapestOffering,
  minValuesAchieved,
  minValuesUnmet,
  minValuesUnmetKeys,
  offeringAllowed,
  type DaemonGroup,
  type Template,
} from './templates.ts';

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
export function orderByPrice(
  reqs: Requirements,
  its: readonly InstanceType[],
): Array<{ it: InstanceType; micros: number }> {
  return its
    .map((it, i) => ({ it, i, micros: toMicros(cheapestOffering(reqs, it)?.price ?? Infinity) }))
    .sort((a, b) => a.micros - b.micros || a.i - b.i)
    .map(({ it, micros }) => ({ it, micros }));
}

/**
 * MinValuesPolicy BestEffort (docs/karpenter/scheduling.md §2.14): a minValues the instance types cannot reach is lowered
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

/** What every NodeClaim with the same final requirements shares: computed once per requirement set. */
interface SetParts {
  readonly reqs: Requirements;
  /** Selector requirements without the instance-type and capacity-type keys (added per NodeClaim). */
  readonly selectors: NodeSelectorRequirement[];
  readonly labels: Readonly<Record<string, string>>;
}
const SET_PARTS = cacheSlot<Requirements, Map<Template, SetParts>>('claim requirement parts');

function setParts(
  template: Template,
  finalReqs: Requirements,
  wellKnown: ReadonlySet<string>,
  caches: ModelCaches,
): SetParts {
  const byTemplate = caches.memo(SET_PARTS, finalReqs, () => new Map<Template, SetParts>());
  let parts = byTemplate.get(template);
  if (parts) return parts;
  const reqs = new Map(
    [...finalReqs].filter(([k]) => k !== HOSTNAME_LABEL && !SIMULATION_LABELS.has(k)),
  ) as Requirements;
  const labels: Record<string, string> = { ...template.pool.template.labels };
  for (const r of reqs.values()) {
    if (
      wellKnown.has(r.key) ||
      SIMULATION_LABELS.has(r.key) ||
      schedulingRestrictedReason(r.key, wellKnown) ||
      labels[r.key] !== undefined
    )
      continue;
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
  /** The NodeOverlay annotations the kept types call for (overlayAnnotations). */
  readonly annotations: Readonly<Record<string, string>> | undefined;
  /** The NodeClaim requirements for these parts' set (when minValues hold), built on first use; read-only. */
  requirements?: readonly NodeSelectorRequirement[];
}
const LIST_PARTS = cacheSlot<object, Map<Requirements, ListParts>>('claim instance-type parts');

function listParts(
  ordered: ReadonlyArray<{ it: InstanceType; micros: number }>,
  reqs: Requirements,
  caches: ModelCaches,
): ListParts {
  const byReqs = caches.memo(LIST_PARTS, ordered, () => new Map<Requirements, ListParts>());
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
    annotations: overlayAnnotations(kept),
  };
  byReqs.set(reqs, parts);
  return parts;
}

/** Per template: its one daemonset group, or null when instance types differ in which daemonsets they run. */
const SOLE_GROUP = cacheSlot<Template, { readonly group: DaemonGroup | null }>('sole daemon group', 'catalog');

/** The smallest daemonset overhead among the kept types (one group for most templates: no lookups then). */
function keptOverhead(template: Template, kept: readonly InstanceType[], caches: ModelCaches): Resources {
  const only = caches.memo(SOLE_GROUP, template, () => {
    const groups = new Set(template.daemonGroupOf.values());
    return { group: groups.size === 1 ? [...groups][0]! : null };
  }).group;
  if (only) return only.overhead;
  return minOverhead([...new Set(kept.map((it) => template.daemonGroupOf.get(it.name)!))].map((g) => g.overhead));
}

/** A solve's NodeClaim as both solvers describe it to `claimPlan`. */
interface SolvedClaim {
  readonly template: Template;
  /** Final requirements (hostname and simulation keys are dropped here). */
  readonly requirements: Requirements;
  /** The kept instance types, price-ordered and truncated (see orderByPrice). */
  readonly ordered: ReadonlyArray<{ it: InstanceType; micros: number }>;
  readonly pods: readonly Pod[];
  /**
   * Each pod's requests as (resource, quantity) entries, in pod order, when the caller has them (the decoder
   * shares one array per pod class instead of walking 20,000 request objects).
   */
  readonly podRequests?: ReadonlyArray<ReadonlyArray<readonly [string, number]>>;
}

/**
 * The plan's NodeClaim. The instance-type requirement lists the types in price order. What NodeClaims with
 * the same requirements and instance-type list share is built once and shared (frozen) through `caches`.
 */
export function claimPlan(
  c: SolvedClaim,
  options: EngineOptions,
  wellKnown: ReadonlySet<string>,
  caches: ModelCaches,
): Finalized {
  const parts = setParts(c.template, c.requirements, wellKnown, caches);
  const shared = listParts(c.ordered, parts.reqs, caches);
  let requirements = shared.unmet ? undefined : shared.requirements;
  if (shared.unmet) {
    if (options.minValuesPolicy === 'Strict')
      return {
        ok: false,
        reason: minValuesTruncated(c.template.pool.name, minValuesUnmetKeys(parts.reqs, shared.kept)),
      };
    const relaxed = relaxMinValues(parts.reqs, shared.kept);
    const selectors = toSelectorRequirements(
      new Map([...relaxed].filter(([k]) => k !== INSTANCE_TYPE_LABEL && k !== CAPACITY_TYPE_LABEL)),
    );
    requirements = nodeClaimRequirements(relaxed, selectors, shared);
  }
  // The same for every NodeClaim with these parts (4,000 NodeClaims of a solve share a few dozen): shared, frozen.
  if (!requirements) requirements = shared.requirements = nodeClaimRequirements(parts.reqs, parts.selectors, shared);
  const instanceTypes = shared.options;
  return {
    ok: true,
    claim: {
      nodePool: c.template.pool.name,
      pods: c.pods.map((p) => p.uid),
      requirements,
      instanceTypes,
      requests: claimRequests(c, keptOverhead(c.template, shared.kept, caches)),
      labels: { ...parts.labels },
      taints: c.template.pool.template.taints,
      startupTaints: c.template.pool.template.startupTaints,
      price: instanceTypes[0]?.price ?? 0,
      ...(shared.unmet ? { minValuesRelaxed: true } : {}),
      ...(shared.annotations ? { annotations: shared.annotations } : {}),
    },
  };
}

/** The selector requirements plus instance-type and capacity-type requirements narrowed to the options. */
function nodeClaimRequirements(
  reqs: Requirements,
  selectors: readonly NodeSelectorRequirement[],
  shared: ListParts,
): readonly NodeSelectorRequirement[] {
  const itMin = reqs.get(INSTANCE_TYPE_LABEL)?.minValues;
  const ctMin = reqs.get(CAPACITY_TYPE_LABEL)?.minValues;
  return Object.freeze([
    ...selectors,
    {
      key: INSTANCE_TYPE_LABEL,
      operator: 'In' as const,
      values: shared.names,
      ...(itMin !== undefined ? { minValues: itMin } : {}),
    },
    {
      key: CAPACITY_TYPE_LABEL,
      operator: 'In' as const,
      values: shared.capacityTypes,
      ...(ctMin !== undefined ? { minValues: ctMin } : {}),
    },
  ]);
}

/** The pods' requests plus the daemonset overhead. */
function claimRequests(c: SolvedClaim, overhead: Resources): Record<string, number> {
  const requests: Record<string, number> = { ...overhead };
  const podRequests = c.podRequests;
  if (!podRequests) {
    for (const p of c.pods) for (const k in p.requests) requests[k] = (requests[k] ?? 0) + p.requests[k]!;
    return requests;
  }
  for (let i = 0; i < podRequests.length; i++) {
    const entries = podRequests[i]!;
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j]!;
      requests[e[0]] = (requests[e[0]] ?? 0) + e[1];
    }
  }
  return requests;
}
