// The LP lower bound on the cost of new capacity for a set of pods (docs/lower-bound.md).
//
// Pods are grouped by the set of options they may use: an option is a (NodePool, instance type) pair with
// its cheapest offering the pod's requirements allow and its capacity net of the daemonsets that would run
// there. With n_o nodes of option o and y_{g,o,r} the share of group g's demand for resource r that option o
// serves, the LP asks
//
//   minimise  Σ_o price_o · n_o   subject to   Σ_o y_{g,o,r} >= 1                      (every group, resource)
//                                              Σ_g y_{g,o,r} · demand_{g,r} <= cap_{o,r} · n_o   (every option, resource)
//
// Any real plan gives a feasible point (a node's cpu, memory and pods are shared between the groups it hosts
// by what each uses), so the optimum is a lower bound on the cost of any plan: no packing, however clever,
// can beat it. It ignores
// integrality (whole nodes), topology (spread, affinity), host ports, NodePool limits and existing nodes'
// free capacity, and uses each pod's most permissive form (every required term, no preferences).
import type { ProvisionInput } from '../model/types.ts';
import { toMicros } from '../domain/money.ts';
import type { InstanceType, Pod, Requirements } from '../domain/types.ts';
import { optsOutOfKarpenter, podValidationError, strictPodRequirements } from '../scheduling/pods.ts';
import { add, compatible, intersects } from '../scheduling/requirements.ts';
import { toleratesAll } from '../scheduling/taints.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import { SchedulingModel } from '../model/scheduling.ts';
import { cheapestOffering, type Template } from '../model/templates.ts';

export interface BoundModel {
  readonly numCols: number;
  readonly numRows: number;
  /** Micro-dollars per hour per node. */
  readonly colCost: Float64Array;
  readonly rowLower: Float64Array;
  /** Column-major (CSC) constraint matrix. */
  readonly starts: Int32Array;
  readonly indices: Int32Array;
  readonly values: Float64Array;
}

export interface BoundGroups {
  readonly model: BoundModel;
  readonly groups: number;
  /** Pods no option can host (they are left out of the bound). */
  readonly unplaceable: readonly string[];
  readonly pods: number;
}

interface Option {
  readonly price: number;
  readonly cap: Float64Array;
}

/**
 * The instance types (template-local index, cheapest allowed offering's price in micros) of template `t`
 * that requirements `merged` (the template's plus a pod version's strict requirements, identified by `key`)
 * allow. Cached per template: a template is the same object while its NodePool, instance types and
 * daemonsets are (immutable domain objects), and every what-if and consolidation simulation bounds the same
 * pod classes against the same catalog again.
 */
const ALLOWED = cacheSlot<Template, Map<string, ReadonlyArray<readonly [number, number]>>>('bound options');

function allowedTypes(t: Template, key: string, merged: Requirements, caches: ModelCaches): ReadonlyArray<readonly [number, number]> {
  const byKey = caches.memo(ALLOWED, t, () => new Map<string, ReadonlyArray<readonly [number, number]>>());
  let out = byKey.get(key);
  if (out) return out;
  const list: Array<readonly [number, number]> = [];
  t.instanceTypes.forEach((it: InstanceType, ii) => {
    if (intersects(it.requirements, merged) !== undefined) return;
    const o = cheapestOffering(merged, it);
    if (o) list.push([ii, toMicros(o.price)]);
  });
  byKey.set(key, (out = list));
  return out;
}

/** The options a pod may use: union over its relaxation chain and over the NodePools. */
function optionsOf(pod: Pod, versions: readonly Pod[], model: SchedulingModel, resources: readonly string[], index: Map<string, number>, options: Option[]): number[] {
  const { templates, wellKnown, caches } = model;
  const out = new Set<number>();
  templates.forEach((t, ti) => {
    if (!toleratesAll(pod.tolerations, t.pool.template.taints) && !versions.some((v) => toleratesAll(v.tolerations, t.pool.template.taints))) return;
    const tried = new Set<string>();
    for (const v of versions) {
      const reqs = strictPodRequirements(v);
      const key = JSON.stringify([...reqs.values()].map((r) => [r.key, r.complement, [...r.values].sort(), r.gte, r.lte, r.minValues]));
      if (tried.has(key)) continue;
      tried.add(key);
      if (compatible(t.requirements, reqs, wellKnown) !== undefined) continue;
      for (const [ii, price] of allowedTypes(t, key, add(t.requirements, ...reqs.values()), caches)) {
        const id = `${ti}/${ii}/${price}`;
        let oi = index.get(id);
        if (oi === undefined) {
          const it = t.instanceTypes[ii]!;
          const overhead = t.daemonGroupOf.get(it.name)!.overhead;
          const cap = Float64Array.from(resources, (r) => Math.max(0, (it.allocatable[r] ?? 0) - (overhead[r] ?? 0)));
          oi = options.length;
          options.push({ price, cap });
          index.set(id, oi);
        }
        out.add(oi);
      }
    }
  });
  void pod;
  return [...out].sort((a, b) => a - b);
}

interface PodGroup {
  readonly options: number[];
  readonly demand: Float64Array;
}

export function buildBoundModel(input: ProvisionInput): BoundGroups {
  const pods = input.pods.filter((p) => !optsOutOfKarpenter(p) && podValidationError(p) === undefined);
  const sched = new SchedulingModel({ ...input, nodes: [] }, { pods, representatives: pods.length ? [pods[0]!] : [] });
  const resources = [...new Set(['cpu', 'memory', 'pods', ...pods.flatMap((p) => Object.keys(p.requests))])];
  const options: Option[] = [];
  const { groups, unplaceable } = podGroups(pods, sched, resources, options);
  return { model: coveringLp(groups, options, resources.length), groups: groups.length, unplaceable, pods: pods.length };
}

/** Pods grouped by the set of options they may use, with the group's demand per resource. */
function podGroups(pods: readonly Pod[], sched: SchedulingModel, resources: readonly string[], options: Option[]): { groups: PodGroup[]; unplaceable: string[] } {
  const optionIndex = new Map<string, number>();
  const classOptions = new Map<string, number[]>();
  const groups = new Map<string, PodGroup>();
  const unplaceable: string[] = [];
  for (const p of pods) {
    const ck = JSON.stringify([p.nodeSelector, p.affinity?.nodeAffinity ?? null, p.tolerations, p.volumeRequirements ?? null, p.requests]);
    let opts = classOptions.get(ck);
    if (!opts) {
      // Only options a node of which can hold the pod at all: the LP splits demand, not pods.
      const fits = (oi: number) => resources.every((r, i) => (p.requests[r] ?? 0) <= options[oi]!.cap[i]!);
      opts = optionsOf(p, sched.versions(p), sched, resources, optionIndex, options).filter(fits);
      classOptions.set(ck, opts);
    }
    if (opts.length === 0) {
      unplaceable.push(p.uid);
      continue;
    }
    const gk = opts.join(',');
    let g = groups.get(gk);
    if (!g) groups.set(gk, (g = { options: opts, demand: new Float64Array(resources.length) }));
    resources.forEach((r, i) => { g!.demand[i]! += p.requests[r] ?? 0; });
  }
  return { groups: [...groups.values()], unplaceable };
}

/**
 * Columns: n_o, the (fractional) nodes of each option any group uses, and y_{g,o,r}, the share of group g's
 * demand for resource r served by option o. Rows: each group's demand per resource is covered
 * (Σ_o y_{g,o,r} >= 1), and no option gives away more of a resource than its nodes have
 * (n_o - Σ_g y_{g,o,r} · demand_{g,r} / cap_{o,r} >= 0). Nodes are shared between groups resource by resource,
 * which is what makes this a lower bound even when groups of different shapes share nodes.
 */
function coveringLp(groups: readonly PodGroup[], options: readonly Option[], nres: number): BoundModel {
  const used = [...new Set(groups.flatMap((g) => g.options))].sort((x, y) => x - y);
  const colOfOption = new Map<number, number>();
  const cols: Array<{ cost: number; entries: Array<[number, number]> }> = [];
  for (const oi of used) {
    colOfOption.set(oi, cols.length);
    cols.push({ cost: options[oi]!.price, entries: [] });
  }
  const rowLower: number[] = [];
  const capRow = new Map<string, number>();
  const capacityRow = (oi: number, r: number): number => {
    const key = `${oi}/${r}`;
    let row = capRow.get(key);
    if (row === undefined) {
      row = rowLower.length;
      rowLower.push(0);
      capRow.set(key, row);
      cols[colOfOption.get(oi)!]!.entries.push([row, 1]);
    }
    return row;
  };
  for (const g of groups) {
    for (let r = 0; r < nres; r++) {
      const d = g.demand[r]!;
      if (d <= 0) continue;
      const demandRow = rowLower.length;
      rowLower.push(1);
      for (const oi of g.options) {
        const cap = options[oi]!.cap[r]!;
        if (cap <= 0) continue;
        cols.push({ cost: 0, entries: [[demandRow, 1], [capacityRow(oi, r), -d / cap]] });
      }
    }
  }
  return cscOf(cols, rowLower);
}

/** The columns in compressed sparse column form, rows ascending within each column. */
function cscOf(cols: ReadonlyArray<{ cost: number; entries: Array<[number, number]> }>, rowLower: readonly number[]): BoundModel {
  const colCost: number[] = [];
  const starts: number[] = [0];
  const indices: number[] = [];
  const values: number[] = [];
  for (const c of cols) {
    colCost.push(c.cost);
    for (const [row, v] of c.entries.sort((x, y) => x[0] - y[0])) {
      indices.push(row);
      values.push(v);
    }
    starts.push(indices.length);
  }
  return {
    numCols: colCost.length,
    numRows: rowLower.length,
    colCost: Float64Array.from(colCost),
    rowLower: Float64Array.from(rowLower),
    starts: Int32Array.from(starts),
    indices: Int32Array.from(indices),
    values: Float64Array.from(values),
  };
}
