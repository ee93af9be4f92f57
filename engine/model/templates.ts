// NodeClaim templates (one per NodePool), daemonset overhead groups and the instance-type filter a solver
// applies every time a pod joins a new NodeClaim (docs/karpenter/scheduling.md §1.11, §2.9, §2.10).
import type {
  DaemonSet,
  InstanceType,
  NodePool,
  Offering,
  Pod,
  Requirement,
  Requirements,
  Resources,
  Toleration,
} from '../domain/types.ts';
import { add as addResources, CPU, fits, formatResources, MEMORY } from '../domain/resources.ts';
import {
  CAPACITY_TYPE_LABEL,
  INITIALIZED_LABEL,
  NODEPOOL_LABEL,
  REGISTERED_LABEL,
  RESERVATION_ID_LABEL,
  WELL_KNOWN_LABELS,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import {
  add,
  allows,
  compatible,
  formatRequirement,
  fromLabels,
  fromSelector,
  get,
  has,
  intersectsAll,
  operatorOf,
  req,
} from '../scheduling/requirements.ts';
import { toleratesAll } from '../scheduling/taints.ts';
import { cacheSlot, type ModelCaches } from './caches.ts';

export function nodeClassLabel(pool: NodePool): [string, string] {
  return [
    `${pool.template.nodeClassRef.group}/${pool.template.nodeClassRef.kind.toLowerCase()}`,
    pool.template.nodeClassRef.name,
  ];
}

const TEMPLATE_REQUIREMENTS = cacheSlot<NodePool, Requirements>('template requirements', 'catalog');

/**
 * Template requirements (§1.11): requirements, labels, nodepool and node-class labels, simulation keys.
 * Remembered per NodePool object in `caches` (domain objects are immutable).
 */
export function templateRequirements(pool: NodePool, caches?: ModelCaches): Requirements {
  return caches
    ? caches.memo(TEMPLATE_REQUIREMENTS, pool, () => computeTemplateRequirements(pool))
    : computeTemplateRequirements(pool);
}

function computeTemplateRequirements(pool: NodePool): Requirements {
  const [ncKey, ncVal] = nodeClassLabel(pool);
  return add(
    add(new Map(), ...pool.template.requirements.map(fromSelector)),
    ...fromLabels(pool.template.labels).values(),
    req(NODEPOOL_LABEL, false, [pool.name]),
    req(ncKey, false, [ncVal]),
    req(REGISTERED_LABEL, false, ['true']),
    req(INITIALIZED_LABEL, false, ['true']),
  );
}

/** The NodePools that provision, in scheduling order: weight descending, then name descending (§2.1). */
export function provisioningPools(pools: readonly NodePool[]): NodePool[] {
  return pools
    .filter((p) => p.ready && !p.deleting && p.replicas === undefined)
    .sort((a, b) => b.weight - a.weight || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
}

export function offeringAllowed(reqs: Requirements, o: Offering): boolean {
  if (!o.available) return false;
  if (!allows(reqs, ZONE_LABEL, o.zone) || !allows(reqs, CAPACITY_TYPE_LABEL, o.capacityType)) return false;
  // Offerings without a reservation carry `reservation-id DoesNotExist`, which only a NotIn or DoesNotExist
  // requirement accepts (Intersects, §1.8).
  const rid = reqs.get(RESERVATION_ID_LABEL);
  if (!rid) return true;
  if (o.reservationId === undefined) return operatorOf(rid) === 'NotIn' || operatorOf(rid) === 'DoesNotExist';
  return has(rid, o.reservationId);
}

/** Some offering of the type is compatible with the requirements (available or not: offeringAllowed). */
function anyOfferingAllowed(reqs: Requirements, it: InstanceType): boolean {
  for (const o of it.offerings) if (offeringAllowed(reqs, o)) return true;
  return false;
}

/** Cheapest available offering compatible with the requirements, or undefined. */
export function cheapestOffering(reqs: Requirements, it: InstanceType): Offering | undefined {
  let best: Offering | undefined;
  for (const o of it.offerings) if (offeringAllowed(reqs, o) && (!best || o.price < best.price)) best = o;
  return best;
}

export interface DaemonGroup {
  /** Summed requests of the daemon pods compatible with these instance types (incl. pods: count). */
  readonly overhead: Resources;
  readonly daemons: readonly Pod[];
}

/** A template: the pool, its requirements, its instance types and their daemon overhead. */
export interface Template {
  readonly pool: NodePool;
  readonly requirements: Requirements;
  readonly instanceTypes: readonly InstanceType[];
  /** Index in `instanceTypes` -> daemon group. */
  readonly daemonGroupOf: ReadonlyMap<string, DaemonGroup>;
  readonly hasPreferNoSchedule: boolean;
}

function daemonCompatible(
  pool: NodePool,
  tmplReqs: Requirements,
  it: InstanceType,
  pod: Pod,
  wellKnown: ReadonlySet<string>,
): boolean {
  const tolerations: Toleration[] = [...pod.tolerations, { operator: 'Exists', effect: 'PreferNoSchedule' }];
  if (!toleratesAll(tolerations, pool.template.taints)) return false;
  const terms = pod.affinity?.nodeAffinity?.required ?? [];
  for (let drop = 0; drop <= Math.max(terms.length - 1, 0); drop++) {
    let reqs = fromLabels(pod.nodeSelector);
    const term = terms[drop];
    if (term) reqs = add(reqs, ...term.matchExpressions.map(fromSelector));
    if (compatible(tmplReqs, reqs, wellKnown) === undefined && intersectsAll(it.requirements, reqs)) return true;
  }
  return false;
}

/** Templates of one NodePool: by instance-type list, daemonset list, well-known labels and minValues policy. */
type TemplatesOf = WeakMap<
  readonly InstanceType[],
  WeakMap<readonly DaemonSet[], WeakMap<ReadonlySet<string>, Map<boolean, Template>>>
>;
const TEMPLATES = cacheSlot<NodePool, TemplatesOf>('templates', 'catalog');

function level<K extends object, V>(m: WeakMap<K, V>, k: K, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) m.set(k, (v = make()));
  return v;
}

/**
 * A template for a NodePool, remembered in `caches` by the identity of its inputs: a solve again with the same
 * NodePool, instance types and daemonsets (immutable domain objects) skips filtering 800 instance types and
 * grouping their daemonset overhead.
 */
export function buildTemplate(
  pool: NodePool,
  its: readonly InstanceType[],
  daemonSets: readonly DaemonSet[],
  wellKnown: ReadonlySet<string> = WELL_KNOWN_LABELS,
  strictMinValues = true,
  caches?: ModelCaches,
): Template {
  if (!caches) return computeTemplate(pool, its, daemonSets, wellKnown, strictMinValues);
  const byStrict = level(
    level(
      level(
        level(caches.map(TEMPLATES), pool, () => new WeakMap() as TemplatesOf),
        its,
        () => new WeakMap(),
      ),
      daemonSets,
      () => new WeakMap(),
    ),
    wellKnown,
    () => new Map<boolean, Template>(),
  );
  let t = byStrict.get(strictMinValues);
  caches.record(TEMPLATES, t !== undefined);
  if (!t)
    byStrict.set(strictMinValues, (t = computeTemplate(pool, its, daemonSets, wellKnown, strictMinValues, caches)));
  return t;
}

function computeTemplate(
  pool: NodePool,
  its: readonly InstanceType[],
  daemonSets: readonly DaemonSet[],
  wellKnown: ReadonlySet<string>,
  strictMinValues: boolean,
  caches?: ModelCaches,
): Template {
  const requirements = templateRequirements(pool, caches);
  const kept: InstanceType[] = [];
  for (const it of its)
    if (intersectsAll(it.requirements, requirements) && anyOfferingAllowed(requirements, it)) kept.push(it);
  const groups = new Map<string, DaemonGroup>();
  const daemonGroupOf = new Map<string, DaemonGroup>();
  // The type's compatible daemons, gathered in a reused list: most types share a group, and this runs for every type.
  const daemons: Pod[] = [];
  for (const it of kept) {
    daemons.length = 0;
    for (const d of daemonSets) if (daemonCompatible(pool, requirements, it, d.pod, wellKnown)) daemons.push(d.pod);
    const key = daemons.length
      ? daemons
          .map((p) => `${p.namespace}/${p.name}`)
          .sort()
          .join(',')
      : '';
    let g = groups.get(key);
    if (!g) {
      const own = daemons.slice();
      groups.set(
        key,
        (g = { overhead: own.reduce<Resources>((acc, p) => addResources(acc, p.requests), {}), daemons: own }),
      );
    }
    daemonGroupOf.set(it.name, g);
  }
  return {
    pool,
    requirements,
    instanceTypes: !strictMinValues || minValuesOk(requirements, kept) ? kept : [],
    daemonGroupOf,
    hasPreferNoSchedule: pool.template.taints.some((t) => t.effect === 'PreferNoSchedule'),
  };
}

/** Checks minValues over the ordered instance types (§2.14); returns the first unmet key, or undefined. */
export function minValuesUnmet(reqs: Requirements, its: readonly InstanceType[]): string | undefined {
  for (const r of reqs.values()) {
    if (r.minValues === undefined) continue;
    const seen = new Set<string>();
    for (const it of its) {
      const ir = it.requirements.get(r.key);
      if (!ir || ir.complement) continue;
      for (const v of ir.values) if (has(r, v)) seen.add(v);
      if (seen.size >= r.minValues) break;
    }
    if (seen.size < r.minValues) return r.key;
  }
  return undefined;
}

/** Every key whose minValues the instance types do not meet (minValuesUnmet stops at the first). */
export function minValuesUnmetKeys(reqs: Requirements, its: readonly InstanceType[]): string[] {
  const out: string[] = [];
  for (const r of reqs.values()) {
    if (r.minValues !== undefined && minValuesAchieved(r, its) < r.minValues) out.push(r.key);
  }
  return out;
}

/** How many distinct values of the requirement's key the instance types offer within the requirement. */
export function minValuesAchieved(r: Requirement, its: readonly InstanceType[]): number {
  const seen = new Set<string>();
  for (const it of its) {
    const ir = it.requirements.get(r.key);
    if (!ir || ir.complement) continue;
    for (const v of ir.values) if (has(r, v)) seen.add(v);
  }
  return seen.size;
}

function minValuesOk(reqs: Requirements, its: readonly InstanceType[]): boolean {
  return minValuesUnmet(reqs, its) === undefined;
}

interface FilterResult {
  readonly kept: InstanceType[];
  /** When nothing is kept: the most specific reason. */
  readonly reason?: string;
}

/**
 * Keeps the instance types that are compatible with the requirements, have an available compatible offering,
 * and fit `requests` plus their daemon overhead (§2.9). Explains an empty result specifically.
 */
export function filterInstanceTypes(
  tmpl: Template,
  candidates: readonly InstanceType[],
  reqs: Requirements,
  requests: Resources,
  hostPortConflict?: (g: DaemonGroup) => boolean,
): FilterResult {
  const kept: InstanceType[] = [];
  let compat = 0;
  let compatFit = 0;
  let compatOffer = 0;
  // Requests plus overhead, once per daemonset group (a template has a few groups and hundreds of types).
  const withOverhead = new Map<DaemonGroup, Resources>();
  for (const it of candidates) {
    const g = tmpl.daemonGroupOf.get(it.name)!;
    if (hostPortConflict?.(g)) continue;
    // Only compatible types are counted or kept: the offering and fit checks are skipped for the rest.
    if (!intersectsAll(it.requirements, reqs)) continue;
    compat++;
    let total = withOverhead.get(g);
    if (!total) withOverhead.set(g, (total = addResources(requests, g.overhead)));
    const f = fits(total, it.allocatable);
    const o = it.offerings.some((of) => offeringAllowed(reqs, of));
    if (f) compatFit++;
    if (o) compatOffer++;
    if (o && f) kept.push(it);
  }
  if (kept.length) return { kept };
  return { kept, reason: explainEmpty(tmpl, candidates, reqs, requests, compat, compatFit, compatOffer) };
}

function explainEmpty(
  tmpl: Template,
  candidates: readonly InstanceType[],
  reqs: Requirements,
  requests: Resources,
  compat: number,
  compatFit: number,
  compatOffer: number,
): string {
  if (compat === 0) {
    // Name the requirement that rules the instance types out.
    for (const r of reqs.values()) {
      if (candidates.some((it) => intersectsAll(it.requirements, new Map([[r.key, r]])))) continue;
      return `no instance type met all requirements, none satisfies ${formatRequirement(r)}`;
    }
    return `no instance type met all requirements taken together`;
  }
  if (compatFit === 0) {
    const compatible = candidates.filter((it) => intersectsAll(it.requirements, reqs));
    for (const [k, v] of Object.entries(requests)) {
      let best = 0;
      for (const it of compatible)
        best = Math.max(best, (it.allocatable[k] ?? 0) - (tmpl.daemonGroupOf.get(it.name)?.overhead[k] ?? 0));
      if (best < v) {
        return best === 0
          ? `no instance type has enough resources, requires ${formatResources({ [k]: v })} and no compatible instance type has ${k}`
          : `no instance type has enough resources, requires ${formatResources({ [k]: v })} and the largest compatible instance type offers ${formatResources({ [k]: best })} after daemonset overhead`;
      }
    }
    return `no instance type has enough resources, none compatible fits ${formatResources({ [CPU]: requests[CPU] ?? 0, [MEMORY]: requests[MEMORY] ?? 0 })} together with its daemonset overhead`;
  }
  if (compatOffer === 0) {
    return `no instance type has the required offering, none compatible is available in ${formatRequirement(get(reqs, ZONE_LABEL))} with ${formatRequirement(get(reqs, CAPACITY_TYPE_LABEL))}`;
  }
  const zone = get(reqs, ZONE_LABEL);
  return `no instance type which met the scheduling requirements and had enough resources, had a required offering, none fits ${formatResources(requests)} in ${formatRequirement(zone)}`;
}

/** The PreferNoSchedule toleration the last relaxation step adds. */
export const PREFER_NO_SCHEDULE_TOLERATION: Toleration = { operator: 'Exists', effect: 'PreferNoSchedule' };
