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
// can beat it. NodePool limits are rows too (addLimitRows). It ignores integrality (whole nodes; the pattern
// bound, patterns.ts, does not), topology (spread, affinity), host ports and existing nodes' free capacity, and
// uses each pod's most permissive form (every required term, no preferences).
import type { ProvisionInput } from '../model/types.ts';
import { toMicros } from '../domain/money.ts';
import type { InstanceType, NodePool, Pod, Requirements, Resources } from '../domain/types.ts';
import { NODES } from '../domain/resources.ts';
import { isExotic } from '../launch/filter.ts';
import { optsOutOfKarpenter, podValidationError, strictPodRequirements } from '../scheduling/pods.ts';
import { add, compatible, intersectsAll } from '../scheduling/requirements.ts';
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
  /** What the integer-aware bound (patterns.ts) needs: the options, and the pods as classes of equal requests. */
  readonly resources: readonly string[];
  readonly options: readonly Option[];
  readonly classes: readonly PodClass[];
  /** The NodePool of each template (an option's `template` indexes it). */
  readonly pools: readonly NodePool[];
}

interface Option {
  /** Micro-dollars per hour per node. */
  readonly price: number;
  /** Capacity net of daemonset overhead, per resource. */
  readonly cap: Float64Array;
  /** Its template (NodePool), and whether its type is exotic (metal or accelerators, engine/launch/filter.ts). */
  readonly template: number;
  readonly exotic: boolean;
  /** The type's capacity (what NodePool limits count). */
  readonly capacity: Resources;
}

/** Pods with the same options and the same requests. */
interface PodClass {
  readonly options: readonly number[];
  readonly requests: Float64Array;
  count: number;
}

/**
 * The instance types (template-local index, cheapest allowed offering's price in micros) of template `t`
 * that requirements `merged` (the template's plus a pod version's strict requirements, identified by `key`)
 * allow. Cached per template: a template is the same object while its NodePool, instance types and
 * daemonsets are (immutable domain objects), and every what-if and consolidation simulation bounds the same
 * pod classes against the same catalog again.
 */
const ALLOWED = cacheSlot<Template, Map<string, ReadonlyArray<readonly [number, number]>>>('bound options', 'catalog');

/**
 * Requirement forms kept per template (the oldest goes first): the template outlives a call in a pool worker's
 * catalog caches, and the forms its jobs' pods bring have no bound of their own.
 */
const FORMS_PER_TEMPLATE = 64;

function allowedTypes(
  t: Template,
  key: string,
  mergedOf: () => Requirements,
  caches: ModelCaches,
): ReadonlyArray<readonly [number, number]> {
  const byKey = caches.memo(ALLOWED, t, () => new Map<string, ReadonlyArray<readonly [number, number]>>());
  let out = byKey.get(key);
  if (out) return out;
  const merged = mergedOf();
  const list: Array<readonly [number, number]> = [];
  t.instanceTypes.forEach((it: InstanceType, ii) => {
    if (!intersectsAll(it.requirements, merged)) return;
    const o = cheapestOffering(merged, it);
    if (o) list.push([ii, toMicros(o.price)]);
  });
  if (byKey.size >= FORMS_PER_TEMPLATE) byKey.delete(byKey.keys().next().value!);
  byKey.set(key, (out = list));
  return out;
}

/**
 * The options made so far, by template, template-local type index and price: numbers, not a string per pod class
 * and allowed type (garbage two pool workers collect, docs/benchmarks.md).
 */
class OptionIndex {
  /** By type (template and template-local index): the first option made for it. */
  private readonly first = new Map<number, number>();
  /** Options of a type at another price than its first (a form that allows other offerings): rare. */
  private readonly more = new Map<string, number>();

  constructor(private readonly options: readonly Option[]) {}

  /** The option for type `ii` of template `ti` at `price`, if it was made. */
  get(ti: number, ii: number, price: number): number | undefined {
    const typeKey = ti * 2 ** 21 + ii;
    const oi = this.first.get(typeKey);
    if (oi === undefined || this.options[oi]!.price === price) return oi;
    return this.more.get(`${typeKey}/${price}`);
  }

  set(ti: number, ii: number, price: number, oi: number): void {
    const typeKey = ti * 2 ** 21 + ii;
    if (!this.first.has(typeKey)) this.first.set(typeKey, oi);
    else this.more.set(`${typeKey}/${price}`, oi);
  }
}

/** Equal lists of numbers as one id, compared whole (not a string of every number per list). */
class ListIds {
  private readonly buckets = new Map<string, Array<{ readonly list: readonly number[]; readonly id: number }>>();
  private count = 0;

  id(list: readonly number[]): number {
    const key = `${list.length},${list[0]},${list[list.length - 1]}`;
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = []));
    for (const e of bucket) if (sameList(e.list, list)) return e.id;
    bucket.push({ list, id: this.count });
    return this.count++;
  }
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A pod's relaxation chain as its distinct strict requirements, each with its key, in the chain's order. */
function strictForms(versions: readonly Pod[]): { readonly reqs: Requirements; readonly key: string }[] {
  const seen = new Set<string>();
  const out: { reqs: Requirements; key: string }[] = [];
  for (const v of versions) {
    const reqs = strictPodRequirements(v);
    const key = JSON.stringify(
      [...reqs.values()].map((r) => [r.key, r.complement, [...r.values].sort(), r.gte, r.lte, r.minValues]),
    );
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ reqs, key });
  }
  return out;
}

/**
 * The options a pod may use: union over its relaxation chain and over the NodePools, ascending, marked in `seen`
 * (one mark per option, cleared before return) rather than gathered in a Set and sorted: this runs once per pod class
 * over every allowed type, and what it allocates is garbage two pool workers collect (docs/benchmarks.md).
 */
function optionsOf(
  pod: Pod,
  versions: readonly Pod[],
  model: SchedulingModel,
  resources: readonly string[],
  index: OptionIndex,
  options: Option[],
  seen: Marks,
): number[] {
  const { templates, wellKnown, caches } = model;
  const forms = strictForms(versions);
  for (let ti = 0; ti < templates.length; ti++) {
    const t = templates[ti]!;
    if (
      !toleratesAll(pod.tolerations, t.pool.template.taints) &&
      !versions.some((v) => toleratesAll(v.tolerations, t.pool.template.taints))
    )
      continue;
    for (const { reqs, key } of forms) {
      if (compatible(t.requirements, reqs, wellKnown) !== undefined) continue;
      const allowed = allowedTypes(t, key, () => add(t.requirements, ...reqs.values()), caches);
      for (let j = 0; j < allowed.length; j++) {
        const ii = allowed[j]![0];
        const price = allowed[j]![1];
        let oi = index.get(ti, ii, price);
        if (oi === undefined) {
          oi = options.length;
          options.push(newOption(t, ti, ii, price, resources));
          index.set(ti, ii, price, oi);
        }
        seen.mark(oi);
      }
    }
  }
  return seen.drain();
}

/** Option: type `ii` of template `t` at `price`, its capacity net of the daemonsets' overhead. */
function newOption(t: Template, ti: number, ii: number, price: number, resources: readonly string[]): Option {
  const it = t.instanceTypes[ii]!;
  const overhead = t.daemonGroupOf.get(it.name)!.overhead;
  const cap = new Float64Array(resources.length);
  for (let r = 0; r < resources.length; r++)
    cap[r] = Math.max(0, (it.allocatable[resources[r]!] ?? 0) - (overhead[resources[r]!] ?? 0));
  return { price, cap, template: ti, exotic: isExotic(it), capacity: it.capacity };
}

/** A set of small non-negative numbers as marks in a reused byte array, read back ascending. */
class Marks {
  private bits = new Uint8Array(1024);
  private lo = Infinity;
  private hi = -1;

  mark(i: number): void {
    if (i >= this.bits.length) {
      const grown = new Uint8Array(Math.max(2 * this.bits.length, i + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[i] = 1;
    if (i < this.lo) this.lo = i;
    if (i > this.hi) this.hi = i;
  }

  /** The marked numbers, ascending, in an array of their count (not grown by pushing); clears every mark. */
  drain(): number[] {
    let count = 0;
    for (let i = this.lo; i <= this.hi; i++) count += this.bits[i]!;
    const out = new Array<number>(count);
    for (let i = this.lo, k = 0; i <= this.hi; i++)
      if (this.bits[i]) {
        out[k++] = i;
        this.bits[i] = 0;
      }
    this.lo = Infinity;
    this.hi = -1;
    return out;
  }
}

/**
 * The options a node of these pods could launch as: an exotic type (metal, accelerators) is left out when a generic
 * option of the same NodePool, open to the same pods, is as large in every resource. A node that would launch as
 * the exotic type would fit the generic one, which the launch takes first (engine/launch/filter.ts); so no plan's
 * node costs what the exotic type costs, and leaving it out keeps the bound valid while its price (a metal type's
 * spot market can be far below its generic twin's) would not.
 */
function launchable(opts: number[], options: readonly Option[]): number[] {
  // Loops, not closures: this runs for every pod class over pairs of options, and a closure per pair was a third of
  // what a what-if job allocated (garbage collection is work that two pool workers pay for: docs/benchmarks.md).
  // Without an exotic option, the list itself.
  let exotic = 0;
  for (const o of opts) if (options[o]!.exotic) exotic++;
  if (exotic === 0) return opts;
  // Sized to the list and cut to what is kept: no growing by pushing.
  const out = new Array<number>(opts.length);
  let n = 0;
  for (const o of opts) {
    const e = options[o]!;
    if (!e.exotic || !coveredIn(opts, options, e)) out[n++] = o;
  }
  out.length = n;
  return out;
}

/** Some option of `opts` covers exotic option e. */
function coveredIn(opts: readonly number[], options: readonly Option[], e: Option): boolean {
  for (const g of opts) if (covers(options[g]!, e)) return true;
  return false;
}

/** Generic option g of exotic option e's NodePool is as large in every resource. */
function covers(g: Option, e: Option): boolean {
  if (g.exotic || g.template !== e.template) return false;
  for (let i = 0; i < g.cap.length; i++) if (!(g.cap[i]! >= e.cap[i]!)) return false;
  return true;
}

/** What NodePool `pool`'s limit on k leaves for new nodes after its active nodes (Infinity: no limit on k). */
export function limitLeft(input: ProvisionInput, pool: NodePool, k: string): number {
  let left = pool.limits[k] ?? Infinity;
  for (const n of input.nodes) {
    if (n.nodePoolName !== pool.name || n.markedForDeletion || n.deleting) continue;
    left -= k === NODES ? 1 : (n.capacity[k] ?? 0);
  }
  return left;
}

/**
 * NodePool limits: the new nodes of a pool take at most what its limits leave after its active nodes, in every
 * limited resource and in nodes. Any plan within the limits meets these rows (a node takes at least its own type's
 * capacity, Karpenter counts its largest option), so the bound stays valid and learns where a pool's room ends.
 * Written as >= rows, scaled: -Σ n_o · cap_o / left >= -1.
 */
function addLimitRows(
  input: ProvisionInput,
  templates: readonly Template[],
  options: readonly Option[],
  lp: LpColumns,
): void {
  templates.forEach((t, ti) => {
    const pool = t.pool;
    for (const k of Object.keys(pool.limits)) {
      const left = limitLeft(input, pool, k);
      const mine = lp.used.filter(
        (oi) => options[oi]!.template === ti && (k === NODES || (options[oi]!.capacity[k] ?? 0) > 0),
      );
      if (!mine.length || left === Infinity) continue;
      const row = lp.rowLower.length;
      lp.rowLower.push(-1);
      for (const oi of mine)
        lp.cols[lp.colOfOption.get(oi)!]!.entries.push(
          row,
          -(k === NODES ? 1 : options[oi]!.capacity[k]!) / Math.max(left, 1e-9),
        );
    }
  });
}

/**
 * Karpenter's NodePool order (docs/lower-bound.md): a pod's new node is in the highest-weight NodePool that can take
 * it (its home, the first template with an option for it), or in a later one only when the NodePools before it are
 * at their limits. So a pod whose home has no limits keeps only its home's options, and one whose home has limits
 * keeps its home and the templates after it up to the first without limits. Plans that keep this order (every plan
 * this engine makes) meet the narrower model, and the bound learns, for example, that CPU pods whose home is a
 * general NodePool cannot fill the spare room of a lower-weight GPU NodePool's nodes.
 */
function inOrder(opts: number[], options: readonly Option[], templates: readonly Template[]): number[] {
  if (!opts.length) return opts;
  let home = Infinity;
  for (const o of opts) home = Math.min(home, options[o]!.template);
  let last = home;
  while (last < templates.length - 1 && Object.values(templates[last]!.pool.limits).some((v) => v < Infinity)) last++;
  const within = (o: number) => options[o]!.template >= home && options[o]!.template <= last;
  // Most often every option is within: the list itself, not a copy.
  return opts.every(within) ? opts : opts.filter(within);
}

/** Keeps, in place, the options a node of which can hold requests `req` at all. */
function keepFitting(opts: number[], req: Float64Array, options: readonly Option[]): number[] {
  let n = 0;
  for (const oi of opts) {
    const cap = options[oi]!.cap;
    let fits = true;
    for (let i = 0; i < req.length; i++) if (!(req[i]! <= cap[i]!)) fits = false;
    if (fits) opts[n++] = oi;
  }
  opts.length = n;
  return opts;
}

interface PodGroup {
  readonly options: number[];
  readonly demand: Float64Array;
}

/** The covering LP's columns and rows before they are packed (coveringLp, addLimitRows, cscOf). */
interface LpColumns {
  readonly used: readonly number[];
  readonly colOfOption: ReadonlyMap<number, number>;
  /**
   * The node columns n_o, one per used option in `used` order: its price and its entries, flat (row, value, row,
   * value, ...; rows ascending, as rows are numbered in the order they are made).
   */
  readonly cols: Array<{ cost: number; entries: number[] }>;
  /**
   * The share columns y_{g,o,r} after them, cost 0, two entries each, rows ascending: column j's are at 2j and
   * 2j + 1 of `shareRows` and `shareValues` (flat: an object and three arrays per column were most of what the
   * bound model allocated, docs/benchmarks.md). Plain arrays, not typed ones sized up front: as typed arrays (their bytes
   * outside the JavaScript heap, kept through the LP solve) they brought the pool workers more mark-compacts, not
   * fewer (docs/benchmarks.md, shift 15).
   */
  readonly shareRows: number[];
  readonly shareValues: number[];
  readonly rowLower: number[];
}

/** The bound model of the input's pods; `limits: false` leaves the NodePools' limits out. */
export function buildBoundModel(input: ProvisionInput, opts: { limits?: boolean } = {}): BoundGroups {
  const pods = input.pods.filter((p) => !optsOutOfKarpenter(p) && podValidationError(p) === undefined);
  const sched = new SchedulingModel({ ...input, nodes: [] }, { pods, representatives: pods.length ? [pods[0]!] : [] });
  const resources = [...new Set(['cpu', 'memory', 'pods', ...pods.flatMap((p) => Object.keys(p.requests))])];
  const options: Option[] = [];
  const { groups, classes, unplaceable } = podGroups(pods, sched, resources, options);
  const lp = coveringLp(groups, options, resources.length);
  if (opts.limits !== false) addLimitRows(input, sched.templates, options, lp);
  return {
    model: cscOf(lp),
    groups: groups.length,
    unplaceable,
    pods: pods.length,
    resources,
    options,
    classes,
    pools: sched.templates.map((t) => t.pool),
  };
}

/** Pods grouped by the set of options they may use, with the group's demand per resource. */
function podGroups(
  pods: readonly Pod[],
  sched: SchedulingModel,
  resources: readonly string[],
  options: Option[],
): { groups: PodGroup[]; classes: PodClass[]; unplaceable: string[] } {
  const optionIndex = new OptionIndex(options);
  const listIds = new ListIds();
  const seen = new Marks();
  /** Per pod class (the key's fields decide a pod's options): its options, their key, its requests, its class key. */
  const classOf = new Map<string, { opts: number[]; gk: number; requests: Float64Array; key: string }>();
  const groups = new Map<number, PodGroup>();
  const classes = new Map<string, PodClass>();
  const unplaceable: string[] = [];
  for (const p of pods) {
    const ck = JSON.stringify([
      p.nodeSelector,
      p.affinity?.nodeAffinity ?? null,
      p.tolerations,
      p.volumeRequirements ?? null,
      p.requests,
    ]);
    let c = classOf.get(ck);
    if (!c) {
      const requests = Float64Array.from(resources, (r) => p.requests[r] ?? 0);
      const versions = sched.versions(p);
      // Only options a node of which can hold the pod at all: the LP splits demand, not pods.
      const all = keepFitting(optionsOf(p, versions, sched, resources, optionIndex, options, seen), requests, options);
      // Only for a pod that is never relaxed: otherwise the generic type may be open to a form it does not take,
      // and a relaxed form may find a home its strict form does not have.
      const opts = versions.length === 1 ? inOrder(launchable(all, options), options, sched.templates) : all;
      const gk = listIds.id(opts);
      classOf.set(ck, (c = { opts, gk, requests, key: `${gk}|${requests.join(',')}` }));
    }
    if (c.opts.length === 0) {
      unplaceable.push(p.uid);
      continue;
    }
    let g = groups.get(c.gk);
    if (!g) groups.set(c.gk, (g = { options: c.opts, demand: new Float64Array(resources.length) }));
    for (let i = 0; i < resources.length; i++) g.demand[i]! += c.requests[i]!;
    const cls = classes.get(c.key);
    if (cls) cls.count++;
    else classes.set(c.key, { options: c.opts, requests: c.requests, count: 1 });
  }
  return { groups: [...groups.values()], classes: [...classes.values()], unplaceable };
}

/**
 * Columns: n_o, the (fractional) nodes of each option any group uses, and y_{g,o,r}, the share of group g's
 * demand for resource r served by option o. Rows: each group's demand per resource is covered
 * (Σ_o y_{g,o,r} >= 1), and no option gives away more of a resource than its nodes have
 * (n_o - Σ_g y_{g,o,r} · demand_{g,r} / cap_{o,r} >= 0). Nodes are shared between groups resource by resource,
 * which is what makes this a lower bound even when groups of different shapes share nodes.
 */
function coveringLp(groups: readonly PodGroup[], options: readonly Option[], nres: number): LpColumns {
  const marks = new Marks();
  for (const g of groups) for (const oi of g.options) marks.mark(oi);
  const used = marks.drain();
  const colOfOption = new Map<number, number>();
  const cols: Array<{ cost: number; entries: number[] }> = [];
  for (const oi of used) {
    colOfOption.set(oi, cols.length);
    cols.push({ cost: options[oi]!.price, entries: [] });
  }
  const rowLower: number[] = [];
  const shareRows: number[] = [];
  const shareValues: number[] = [];
  // By option and resource: its capacity row, or -1 before it is made.
  const capRow = new Int32Array(options.length * nres).fill(-1);
  for (const g of groups) {
    for (let r = 0; r < nres; r++) {
      const d = g.demand[r]!;
      if (d <= 0) continue;
      const demandRow = rowLower.length;
      rowLower.push(1);
      for (const oi of g.options) {
        const cap = options[oi]!.cap[r]!;
        if (cap <= 0) continue;
        let row = capRow[oi * nres + r]!;
        if (row < 0) {
          row = capRow[oi * nres + r] = rowLower.length;
          rowLower.push(0);
          cols[colOfOption.get(oi)!]!.entries.push(row, 1);
        }
        // The capacity row is older than the demand row, or made just now (after it).
        if (row < demandRow) {
          shareRows.push(row, demandRow);
          shareValues.push(-d / cap, 1);
        } else {
          shareRows.push(demandRow, row);
          shareValues.push(1, -d / cap);
        }
      }
    }
  }
  return { used, colOfOption, cols, shareRows, shareValues, rowLower };
}

/** The columns in compressed sparse column form, rows ascending within each column: node columns, then shares. */
function cscOf(lp: LpColumns): BoundModel {
  const { cols, shareRows, shareValues, rowLower } = lp;
  const shares = shareRows.length / 2;
  const numCols = cols.length + shares;
  let nz = shareRows.length;
  for (const c of cols) nz += c.entries.length / 2;
  const colCost = new Float64Array(numCols);
  const starts = new Int32Array(numCols + 1);
  const indices = new Int32Array(nz);
  const values = new Float64Array(nz);
  let k = 0;
  cols.forEach((c, j) => {
    colCost[j] = c.cost;
    // Rows are numbered as they are made and a column's entries are added as its rows are: already ascending.
    for (let e = 0; e < c.entries.length; e += 2) {
      indices[k] = c.entries[e]!;
      values[k++] = c.entries[e + 1]!;
    }
    starts[j + 1] = k;
  });
  indices.set(shareRows, k);
  values.set(shareValues, k);
  for (let j = 1; j <= shares; j++) starts[cols.length + j] = k + 2 * j;
  return { numCols, numRows: rowLower.length, colCost, rowLower: Float64Array.from(rowLower), starts, indices, values };
}
