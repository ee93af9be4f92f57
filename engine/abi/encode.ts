// Snapshot -> the solver's input block (solver-as/abi.ts).
//
// The preparation that is the same for both solvers (which NodePools provision and their templates,
// daemonset overhead groups, existing nodes' remaining resources, topology groups and their initial counts,
// the relaxation chain of each pod) is the scheduling model's (engine/model), so the two solvers start from
// identical state; the solver then runs the search. Pods are grouped into classes: identical pods share one
// chain of versions, so 10,000 replicas cost one class.
//
// The block is built section by section, in the order of the ABI's header: key space, templates with their
// instance types and offerings, daemon groups, pod versions, pods, existing nodes, topology groups, the
// tolerance table. Records point into shared pools (i32 lists, f64 vectors, dense requirement sets, taint
// sets), which `Pools` numbers in first-use order.
import * as A from '../../solver-as/abi.ts';
import type { Pod, PreferencePolicy, Requirements, Taint } from '../domain/types.ts';
import { NODES } from '../domain/resources.ts';
import { cacheSlot, keepEntry, keptEntry, ModelCaches } from '../model/caches.ts';
import { hostPortsConflict } from '../model/places.ts';
import type { NodeTable } from '../model/nodetable.ts';
import type { ExistingNode } from '../model/places.ts';
import { SchedulingModel } from '../model/scheduling.ts';
import type { DaemonGroup, Template } from '../model/templates.ts';
import type { Topology, TopologyGroup } from '../model/topology.ts';
import type { PodError, ProvisionInput } from '../model/types.ts';
import { CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { podRequirements, strictPodRequirements } from '../scheduling/pods.ts';
import { add, fromSelector } from '../scheduling/requirements.ts';
import { toleratesAll } from '../scheduling/taints.ts';
import {
  appendChunk,
  catalogValues,
  RESERVATION_ID_LABEL,
  reservationCounts,
  templateTypes,
  withoutHostname,
  type TypesChunk,
} from './catalog.ts';
import { PodShapes, queueClasses } from './classes.ts';
import { KeySpace } from './keyspace.ts';
import { nodeTaintsKey, SharedLabelSets, taintsKey } from './nodes.ts';
import { Block, bytesOf, encodePort, F64s, Words } from './writer.ts';

/** What decoding needs to map the result back to pods, NodeClaims and requirements. */
export interface EncodeContext {
  readonly input: ProvisionInput;
  readonly model: SchedulingModel;
  readonly keys: KeySpace;
  /** Pods in queue order (the solver's pod index). */
  readonly pods: readonly Pod[];
  /** The class (first version index) of each pod: identical pods share explanations. */
  readonly podClass: Int32Array;
  readonly ignored: readonly PodError[];
  readonly templates: readonly Template[];
  /** Global instance-type index -> [template, local index]. */
  readonly itTemplate: Int32Array;
  readonly itStart: readonly number[];
  readonly resources: readonly string[];
}

export interface Encoded {
  readonly block: Uint8Array;
  readonly ctx: EncodeContext;
}

/** An encoded solve with its block as sections, to be written where it goes (writer.ts, Block). */
interface EncodedSections {
  readonly block: Block;
  readonly ctx: EncodeContext;
}

export interface EncodeOptions {
  readonly improve: boolean;
  /** The improvement phase's wall-clock safety net, ms (0: none); its budget is `improveWork`. */
  readonly improveMs?: number;
  /** The improvement phase's work budget, in work units (solver-as/assembly/budget.ts). */
  readonly improveWork?: number;
  /** Reuse each template's encoded instance types and offerings (engine/abi/catalog.ts); default true. */
  readonly catalogCache?: boolean;
  /** Keep the existing nodes' part by position for the next solve over the same list (model/nodetable.ts); default true. */
  readonly nodeTable?: boolean;
  /**
   * Writers to fill instead of new ones: the caller's own, emptied here and reused from solve to solve (a solver
   * instance's). The block points into them until it is written, so they serve one encode at a time.
   */
  readonly scratch?: EncodeScratch;
}

/** The writers of a block's list and vector pools (Pools), kept by a caller that encodes one block at a time. */
export interface EncodeScratch {
  readonly words: Words;
  readonly f64: F64s;
}

/**
 * The improvement phase's default work budget (units of solver-as/assembly/budget.ts). Sized so that the phase
 * converges on the benchmark scenarios (docs/solver.md, "Budget"); a decision rarely needs more.
 */
export const DEFAULT_IMPROVE_WORK = 1e9;
/** The default wall-clock safety net of the improvement phase, ms: far above what the work budget takes. */
export const DEFAULT_IMPROVE_SAFETY_MS = 20_000;

/** The requirement parts of a pod shape: one object per shape, so equal requirements share one dense set. */
interface Shape {
  readonly reqs: Requirements;
  readonly strict: Requirements;
  readonly volumes: Requirements[];
  /** The shape's list offsets, once written (see versionRecords). */
  lists?: Int32Array;
}

/** One pod version: a class's pod or one of its relaxations. */
interface Version {
  readonly pod: Pod;
  readonly shape: Shape;
  /** Index of the next relaxation, -1 for the last. */
  readonly next: number;
  /** Index of the class's first version. */
  readonly first: number;
}

/** Resource dimensions of the block: request and capacity vectors, and the limit dimensions. */
interface Dims {
  readonly resources: readonly string[];
  readonly limits: readonly string[];
  vec(r: Readonly<Record<string, number>>): number[];
}

/** The pools records point into, each numbered in first-use order. */
class Pools {
  readonly words: Words;
  readonly f64: F64s;
  readonly sets: Requirements[] = [];
  readonly taintSets: Array<readonly Taint[]> = [];
  readonly daemonGroups: DaemonGroup[] = [];
  private readonly setIds = new Map<Requirements, number>();
  private readonly taintIds = new Map<string, number>();
  private readonly groupIds = new Map<DaemonGroup, number>();
  private readonly ips = new Map<string, number>();

  constructor(scratch: EncodeScratch | undefined) {
    this.words = scratch?.words ?? new Words();
    this.f64 = scratch?.f64 ?? new F64s();
    this.words.clear();
    this.f64.clear();
  }

  /** The dense set of these requirements (by identity). */
  set(r: Requirements): number {
    let id = this.setIds.get(r);
    if (id === undefined) {
      id = this.sets.length;
      this.sets.push(r);
      this.setIds.set(r, id);
    }
    return id;
  }

  taintSet(ts: readonly Taint[], key = taintsKey(ts)): number {
    let id = this.taintIds.get(key);
    if (id === undefined) {
      id = this.taintSets.length;
      this.taintSets.push(ts);
      this.taintIds.set(key, id);
    }
    return id;
  }

  daemonGroup(g: DaemonGroup): number {
    let id = this.groupIds.get(g);
    if (id === undefined) {
      id = this.daemonGroups.length;
      this.groupIds.set(g, id);
      this.daemonGroups.push(g);
    }
    return id;
  }

  ports(ps: readonly { ip: string; port: number; protocol: string }[]): number {
    if (ps.length === 0) return -1;
    return this.words.list(ps.map((p) => encodePort(p, this.ips)));
  }
}

export function encodeProvision(given: ProvisionInput, opts: EncodeOptions): Encoded {
  const { block, ctx } = encodeProvisionSections(given, opts);
  return { block: block.build(), ctx };
}

/** encodeProvision, its block left as sections: the solver writes them straight into its linear memory. */
export function encodeProvisionSections(given: ProvisionInput, opts: EncodeOptions): EncodedSections {
  const input = given.caches ? given : { ...given, caches: new ModelCaches() };
  // Topology, node requirements and validation are worked out per shape (classes that differ only in requests).
  const shapes = new PodShapes(input.caches);
  const { pods, keys, representatives, ignored } = queueClasses(input.pods, shapes, input.caches);
  const shapeOf = (p: Pod) => shapes.shapeOf(p);
  const model = new SchedulingModel(input, { pods, representatives, shapeOf, nodeTable: opts.nodeTable ?? true });
  const topo = model.topology;
  const groups = topologyGroups(topo);
  const { versions, shapeList, podVersion } = versionChains(model, pods, keys, shapeOf);
  const { ks, nodeReqs } = keySpace(model, shapeList.values(), groups.list);
  const pools = new Pools(opts.scratch);
  const dims = dimensions(input, model, versions);
  const tmpl = templateRecords(model, ks, dims, pools, opts.catalogCache ?? true);
  const dgRecords = daemonGroupRecords(pools, dims);
  const verRecords = versionRecords(versions, topo, groups.index, pools, dims);
  const podRecords = podRecordsOf(pods, podVersion, input);
  const nodeRecords = nodeRecordsOf(model, nodeReqs, pools, dims);
  const grpRecords = groupRecords(groups.list, topo.groups.size, model, ks, pools);
  const tol = toleranceTable(versions, pools.taintSets);
  const block = assemble(input, opts, model, {
    ks,
    pools,
    dims,
    tmpl,
    dgRecords,
    verRecords,
    podRecords,
    nodeRecords,
    grpRecords,
    tol,
    versions: versions.length,
    pods: pods.length,
  });
  return {
    block,
    ctx: {
      input,
      model,
      keys: ks,
      pods,
      podClass: podVersion,
      ignored,
      templates: model.templates,
      itTemplate: Int32Array.from(tmpl.itTemplate),
      itStart: tmpl.itStart,
      resources: dims.resources,
    },
  };
}

/** Forward groups then inverse groups, and each one's index ('inv:' prefix for inverse ids). */
function topologyGroups(topo: Topology): { list: TopologyGroup[]; index: Map<string, number> } {
  const index = new Map<string, number>();
  [...topo.groups.keys()].forEach((id, i) => index.set(id, i));
  [...topo.inverse.keys()].forEach((id, i) => index.set('inv:' + id, topo.groups.size + i));
  return { list: [...topo.groups.values(), ...topo.inverse.values()], index };
}

interface ShapeRequirements {
  readonly policy: PreferencePolicy;
  readonly reqs: Requirements;
  readonly strict: Requirements;
  readonly volumes: Requirements[];
}

/** Shape requirements and the parts they were worked out of (beside the node selector they are kept by). */
interface KeptShapeRequirements extends ShapeRequirements {
  readonly affinity: Pod['affinity'];
  readonly volumeRequirements: Pod['volumeRequirements'];
}

// A shape's requirements are a function of the pod's node selector, affinity and volume topology and of the
// preference policy, so they are kept by those parts (one entry for all the shapes that have the same ones), not
// by the pod: the pods leading their shapes change from one simulation to the next, and over a disruption pass
// nearly every pod of the cluster led one, each with an entry of its own. Parts are compared by identity: a warm
// model's pods of one workload share them (engine/cluster/intern.ts). Never written to: the encoder only reads
// them (a set's identity is its place in the block, per solve).
const SHAPE_REQUIREMENTS = cacheSlot<object, KeptShapeRequirements[]>('shape requirements');

function shapeRequirements(s: Pod, policy: PreferencePolicy, caches: ModelCaches): ShapeRequirements {
  const hit = keptEntry(
    caches,
    SHAPE_REQUIREMENTS,
    s.nodeSelector,
    (e) => e.policy === policy && e.affinity === s.affinity && e.volumeRequirements === s.volumeRequirements,
  );
  return (
    hit ??
    keepEntry(caches, SHAPE_REQUIREMENTS, s.nodeSelector, {
      policy,
      affinity: s.affinity,
      volumeRequirements: s.volumeRequirements,
      reqs: withoutHostname(podRequirements(s, policy)),
      strict: withoutHostname(strictPodRequirements(s)),
      volumes: (s.volumeRequirements ?? []).map((alt) => add(new Map(), ...alt.map(fromSelector))),
    })
  );
}

/** Pod classes and their relaxation chains: the versions, and the version of each pod's class. */
function versionChains(
  model: SchedulingModel,
  pods: readonly Pod[],
  keys: readonly number[],
  shapeOf: (p: Pod) => Pod,
): { versions: Version[]; shapeList: Map<Pod, Shape>; podVersion: Int32Array } {
  const policy = model.input.options.preferencePolicy;
  const versions: Version[] = [];
  const shapeList = new Map<Pod, Shape>();
  const shapeParts = (vp: Pod): Shape => {
    const s = shapeOf(vp);
    let sp = shapeList.get(s);
    if (sp === undefined) {
      const r = shapeRequirements(s, policy, model.caches);
      sp = { reqs: r.reqs, strict: r.strict, volumes: r.volumes };
      shapeList.set(s, sp);
    }
    return sp;
  };
  const classOf = new Map<number, number>();
  const podVersion = new Int32Array(pods.length);
  for (let i = 0; i < pods.length; i++) {
    const key = keys[i]!;
    let v0 = classOf.get(key);
    if (v0 === undefined) {
      const first = versions.length;
      v0 = first;
      classOf.set(key, v0);
      const chain = model.versions(pods[i]!);
      chain.forEach((vp, j) =>
        versions.push({ pod: vp, shape: shapeParts(vp), next: j + 1 < chain.length ? first + j + 1 : -1, first }),
      );
    }
    podVersion[i] = v0;
  }
  return { versions, shapeList, podVersion };
}

/**
 * The key space: the keys some requirement on the pod or NodePool side mentions (plus the offering keys and
 * topology keys), with every value templates, instance types, pods, nodes and group domains use. Existing
 * nodes of one type, zone and pool share their labels but for the hostname: they share one set.
 */
function keySpace(
  model: SchedulingModel,
  shapes: Iterable<Shape>,
  groups: readonly TopologyGroup[],
): { ks: KeySpace; nodeReqs: Requirements[] } {
  const shapeList = [...shapes];
  const relevant = new Set<string>([ZONE_LABEL, CAPACITY_TYPE_LABEL, RESERVATION_ID_LABEL]);
  const mention = (r: Requirements) => {
    for (const k of r.keys()) relevant.add(k);
  };
  for (const t of model.templates) mention(t.requirements);
  for (const v of shapeList) {
    mention(v.reqs);
    mention(v.strict);
    for (const a of v.volumes) mention(a);
  }
  for (const g of groups) {
    relevant.add(g.key);
    for (const alt of g.nodeFilter?.alternatives ?? []) mention(alt);
  }
  const ks = new KeySpace(model.wellKnown, new Set([HOSTNAME_LABEL]), relevant);
  ks.addValues(ZONE_LABEL, []);
  ks.addValues(CAPACITY_TYPE_LABEL, []);
  for (const t of model.templates) {
    ks.addRequirements(t.requirements);
    for (const [k, vs] of catalogValues(t, model.caches)) ks.addValues(k, vs);
  }
  for (const v of shapeList) {
    ks.addRequirements(v.reqs);
    ks.addRequirements(v.strict);
    for (const a of v.volumes) ks.addRequirements(a);
  }
  const nodeReqs = sharedNodeLabelSets(model);
  // Thousands of nodes share a few dozen label sets; the key space collects values, so each set once is enough.
  for (const r of new Set(nodeReqs)) ks.addRequirements(r);
  for (const g of groups) {
    if (g.key !== HOSTNAME_LABEL) ks.addValues(g.key, g.domains.keys());
    for (const alt of g.nodeFilter?.alternatives ?? []) ks.addRequirements(alt);
  }
  ks.freeze();
  return { ks, nodeReqs };
}

// With a node table (engine/model/nodetable.ts): each position's label set, one object per distinct set across
// the table, so a solve over the table's list maps positions to sets without a lookup per node.
const TABLE_LABEL_SETS = cacheSlot<NodeTable, SharedLabelSets>('node table label sets');

/** Each existing node's label set without its hostname, one object per distinct set. */
function sharedNodeLabelSets(model: SchedulingModel): Requirements[] {
  const table = model.nodeTable;
  const at = model.existingAt;
  if (table && at) {
    const sets = model.caches.memo(TABLE_LABEL_SETS, table, () => new SharedLabelSets(model.caches));
    const out: Requirements[] = new Array(at.length);
    const existing = model.existing;
    const compute = (_: unknown, j: number) => sets.of(existing[j]!.requirements);
    for (let j = 0; j < at.length; j++) out[j] = table.at('label set', at[j]!, compute, j);
    return out;
  }
  const sets = new SharedLabelSets(model.caches);
  return model.existing.map((e) => sets.of(e.requirements));
}

function dimensions(input: ProvisionInput, model: SchedulingModel, versions: readonly Version[]): Dims {
  const resSet = new Set<string>(['cpu', 'memory', 'pods']);
  for (const v of versions) for (const k of Object.keys(v.pod.requests)) resSet.add(k);
  for (const ds of input.daemonSets) for (const k of Object.keys(ds.pod.requests)) resSet.add(k);
  const resources = [...resSet];
  const limitDims = new Set<string>();
  for (const t of model.templates) for (const k of Object.keys(t.pool.limits)) if (k !== NODES) limitDims.add(k);
  return { resources, limits: [...limitDims], vec: (r) => resources.map((k) => r[k] ?? 0) };
}

interface TemplateSection {
  readonly tmplRecords: Int32Array;
  readonly itRecords: Int32Array;
  readonly itTemplate: number[];
  readonly itStart: number[];
  readonly chunks: TypesChunk[];
  readonly offerings: number;
}

/** Template records, their instance types (encoded once per template and key space) and offerings. */
function templateRecords(
  model: SchedulingModel,
  ks: KeySpace,
  dims: Dims,
  pools: Pools,
  catalogCache: boolean,
): TemplateSection {
  const templates = model.templates;
  const tmplRecords = new Int32Array(templates.length * A.T_STRIDE);
  const itRecords = new Int32Array(templates.reduce((n, t) => n + t.instanceTypes.length, 0) * A.IT_STRIDE);
  const itTemplate: number[] = [];
  const itStart: number[] = [];
  const chunks: TypesChunk[] = [];
  let nit = 0;
  let nOffs = 0;
  templates.forEach((t, ti) => {
    const base = ti * A.T_STRIDE;
    tmplRecords[base + A.T_SET] = pools.set(withoutHostname(t.requirements));
    tmplRecords[base + A.T_ITS] = nit;
    tmplRecords[base + A.T_NITS] = t.instanceTypes.length;
    tmplRecords[base + A.T_TAINTSET] = pools.taintSet(t.pool.template.taints);
    const remaining = model.remainingLimits(t.pool.name) ?? {};
    tmplRecords[base + A.T_LIMITS] = pools.f64.vector([
      remaining[NODES] ?? Infinity,
      ...dims.limits.map((d) => remaining[d] ?? Infinity),
    ]);
    itStart.push(nit);
    const c = templateTypes(t, ks, dims.resources, dims.limits, catalogCache ? model.caches : undefined);
    appendChunk(c, ti, pools.words, pools.f64, nOffs, (g) => pools.daemonGroup(g), itRecords, nit);
    chunks.push(c);
    for (let i = 0; i < t.instanceTypes.length; i++) itTemplate.push(ti);
    nit += t.instanceTypes.length;
    nOffs += c.offeringCount;
  });
  return { tmplRecords, itRecords, itTemplate, itStart, chunks, offerings: nOffs };
}

/** Per daemon group: its overhead vector and the host ports its daemons take. */
function daemonGroupRecords(pools: Pools, dims: Dims): Int32Array {
  const out: number[] = [];
  for (const g of pools.daemonGroups)
    out.push(pools.f64.vector(dims.vec(g.overhead)), pools.ports(g.daemons.flatMap((d) => d.hostPorts)));
  return Int32Array.from(out);
}

// The lists of a version that are functions of its shape (written once per shape, shared by offset).
const SL_RECORD = 0,
  SL_INV_SELECT = 1,
  SL_PORTS = 2,
  SL_OWNED = 3,
  SL_INV_OWNED = 4,
  SL_VOLUMES = 5,
  SL_DG = 6;
/** SL_RECORD before a class's first version asked which groups select it. */
const UNASKED = -2;

function shapeLists(v: Version, topo: Topology, groupIndex: ReadonlyMap<string, number>, pools: Pools): Int32Array {
  const sh = v.shape;
  if (sh.lists) return sh.lists;
  const l = new Int32Array(7);
  const ids = topo.groupIds(v.pod);
  l[SL_PORTS] = pools.ports(v.pod.hostPorts);
  l[SL_OWNED] = pools.words.list(ids.owned.map((id) => groupIndex.get(id)!));
  l[SL_INV_OWNED] = pools.words.list(ids.inverseOwned.map((id) => groupIndex.get('inv:' + id)!));
  l[SL_VOLUMES] = pools.words.list(sh.volumes.map((r) => pools.set(r)));
  l[SL_DG] = pools.words.list(
    pools.daemonGroups
      .map((g, gi) => (g.daemons.some((d) => hostPortsConflict(v.pod.hostPorts, d.hostPorts)) ? gi : -1))
      .filter((x) => x >= 0),
  );
  // Which groups select the pod: only first versions ask (versionRecords); relaxed ones share their class's answer.
  l[SL_RECORD] = UNASKED;
  return (sh.lists = l);
}

/** Which forward groups a pod's placement counts in, and which inverse groups select it. */
function selectingGroups(pod: Pod, topo: Topology, pools: Pools): { record: number; inverseSelect: number } {
  const forward = [...topo.groups.values()];
  const recordGroups: number[] = [];
  const inverseSelect: number[] = [];
  forward.forEach((g, gi) => {
    if (g.selects(pod)) recordGroups.push(gi);
  });
  [...topo.inverse.values()].forEach((g, gi) => {
    if (g.selects(pod)) inverseSelect.push(forward.length + gi);
  });
  return { record: pools.words.list(recordGroups), inverseSelect: pools.words.list(inverseSelect) };
}

function versionRecords(
  versions: readonly Version[],
  topo: Topology,
  groupIndex: ReadonlyMap<string, number>,
  pools: Pools,
  dims: Dims,
): Int32Array {
  const out = new Int32Array(versions.length * A.V_STRIDE);
  versions.forEach((v, i) => {
    const b = i * A.V_STRIDE;
    out[b + A.V_REQS] = pools.set(v.shape.reqs);
    out[b + A.V_STRICT] = pools.set(v.shape.strict);
    const l = shapeLists(v, topo, groupIndex, pools);
    // Relaxation keeps a pod's namespace and labels: which groups select it is decided once per class.
    if (v.first === i) {
      if (l[SL_RECORD] === UNASKED) {
        const sel = selectingGroups(v.pod, topo, pools);
        l[SL_RECORD] = sel.record;
        l[SL_INV_SELECT] = sel.inverseSelect;
      }
      out[b + A.V_RECORD] = l[SL_RECORD]!;
      out[b + A.V_INV_SELECT] = l[SL_INV_SELECT]!;
    } else {
      out[b + A.V_RECORD] = out[v.first * A.V_STRIDE + A.V_RECORD]!;
      out[b + A.V_INV_SELECT] = out[v.first * A.V_STRIDE + A.V_INV_SELECT]!;
    }
    out[b + A.V_REQUESTS] = pools.f64.vector(dims.vec(v.pod.requests));
    out[b + A.V_PORTS] = l[SL_PORTS]!;
    out[b + A.V_OWNED] = l[SL_OWNED]!;
    out[b + A.V_INV_OWNED] = l[SL_INV_OWNED]!;
    out[b + A.V_VOLUMES] = l[SL_VOLUMES]!;
    out[b + A.V_NEXT] = v.next;
    out[b + A.V_DG_CONFLICT] = l[SL_DG]!;
    out[b + A.V_SELF] = -1;
  });
  return out;
}

function podRecordsOf(pods: readonly Pod[], podVersion: Int32Array, input: ProvisionInput): Int32Array {
  const out = new Int32Array(pods.length * A.P_STRIDE);
  const moved = input.consolidation?.movedPods;
  for (let i = 0; i < pods.length; i++) {
    out[i * A.P_STRIDE + A.P_VERSION] = podVersion[i]!;
    if (moved?.has(pods[i]!.uid)) out[i * A.P_STRIDE + A.P_MOVED] = 1;
  }
  return out;
}

function nodeRecordsOf(
  model: SchedulingModel,
  nodeReqs: readonly Requirements[],
  pools: Pools,
  dims: Dims,
): Int32Array {
  const blocked = model.input.consolidation?.blockedDestinations;
  const out = new Int32Array(model.existing.length * A.N_STRIDE);
  const table = model.nodeTable;
  const at = model.existingAt;
  // With a node table, a position's vector and taint key are worked out once per table (and resource list).
  const vecColumn = `remaining ${dims.resources.join(' ')}`;
  const vec = (e: ExistingNode, i: number) =>
    table && at ? table.at(vecColumn, at[i]!, () => dims.vec(e.remaining)) : dims.vec(e.remaining);
  const taintKey = (e: ExistingNode, i: number) =>
    table && at
      ? table.at('taint key', at[i]!, () => nodeTaintsKey(e.node, e.taints))
      : nodeTaintsKey(e.node, e.taints, model.caches);
  model.existing.forEach((e, i) => {
    const b = i * A.N_STRIDE;
    out[b + A.N_SET] = pools.set(nodeReqs[i]!);
    out[b + A.N_REMAINING] = pools.f64.vector(vec(e, i));
    out[b + A.N_TAINTSET] = pools.taintSet(e.taints, taintKey(e, i));
    out[b + A.N_FLAGS] =
      (blocked?.has(e.node.name) ? A.NF_BLOCKED_FOR_MOVED : 0) | (e.node.initialized ? A.NF_INITIALIZED : 0);
    out[b + A.N_PORTS] = pools.ports(e.hostPorts);
  });
  return out;
}

function groupRecords(
  groups: readonly TopologyGroup[],
  forward: number,
  model: SchedulingModel,
  ks: KeySpace,
  pools: Pools,
): Int32Array {
  const hostOf = model.existing.map((e) => e.hostname);
  const out = new Int32Array(groups.length * A.G_STRIDE);
  groups.forEach((g, gi) => {
    const b = gi * A.G_STRIDE;
    const hostname = g.key === HOSTNAME_LABEL;
    const k = hostname ? -1 : (ks.index.get(g.key) ?? -1);
    out[b + A.G_TYPE] = g.type === 'spread' ? A.GT_SPREAD : g.type === 'affinity' ? A.GT_AFFINITY : A.GT_ANTI;
    out[b + A.G_KEY] = k;
    out[b + A.G_MAX_SKEW] = Math.min(g.maxSkew, 0x7fffffff);
    out[b + A.G_MIN_DOMAINS] = g.minDomains ?? 0;
    const counts = hostname
      ? { counts: pools.words.list(hostOf.map((h) => g.domains.get(h) ?? 0)), registered: -1 }
      : domainCounts(g, k, ks, pools);
    out[b + A.G_COUNTS] = counts.counts;
    out[b + A.G_REGISTERED] = counts.registered;
    const filter = g.nodeFilter;
    out[b + A.G_FILTER] = pools.words.list((filter?.alternatives ?? []).map((alt) => pools.set(withoutHostname(alt))));
    out[b + A.G_FLAGS] =
      (gi >= forward ? A.GF_INVERSE : 0) |
      (filter?.honorTaints ? A.GF_HONOR_TAINTS : 0) |
      (filter && filter.alternatives.length ? A.GF_HAS_FILTER : 0);
    out[b + A.G_TOL] = filter?.honorTaints
      ? pools.words.list(pools.taintSets.map((ts) => (toleratesAll(filter.tolerations, ts) ? 1 : 0)))
      : -1;
  });
  return out;
}

/** A group's count per value of its key and the values registered as domains. */
function domainCounts(g: TopologyGroup, k: number, ks: KeySpace, pools: Pools): { counts: number; registered: number } {
  const counts = new Array<number>(k >= 0 ? ks.values[k]!.length : 0).fill(0);
  const registered: number[] = [];
  for (const [d, c] of g.domains) {
    const vi = ks.value(g.key, d);
    if (vi < 0) continue;
    counts[vi] = c;
    registered.push(vi);
  }
  return { counts: pools.words.list(counts), registered: pools.words.list(registered) };
}

/** Whether each version tolerates each taint set (every taint set exists by now: templates and nodes added theirs). */
function toleranceTable(versions: readonly Version[], taintSets: ReadonlyArray<readonly Taint[]>): Uint8Array {
  const tol = new Uint8Array(versions.length * taintSets.length);
  versions.forEach((v, i) =>
    taintSets.forEach((ts, j) => {
      tol[i * taintSets.length + j] = toleratesAll(v.pod.tolerations, ts) ? 1 : 0;
    }),
  );
  return tol;
}

interface Sections {
  readonly ks: KeySpace;
  readonly pools: Pools;
  readonly dims: Dims;
  readonly tmpl: TemplateSection;
  readonly dgRecords: Int32Array;
  readonly verRecords: Int32Array;
  readonly podRecords: Int32Array;
  readonly nodeRecords: Int32Array;
  readonly grpRecords: Int32Array;
  readonly tol: Uint8Array;
  readonly versions: number;
  readonly pods: number;
}

/** The header and the sections, each at an 8-byte aligned offset the header records. */
function assemble(input: ProvisionInput, opts: EncodeOptions, model: SchedulingModel, s: Sections): Block {
  const { ks, pools } = s;
  const setBuf = new ArrayBuffer(pools.sets.length * ks.setBytes);
  pools.sets.forEach((r, i) => ks.writeSet(r, setBuf, i * ks.setBytes));
  const header = new Int32Array(A.H_WORDS);
  const block = new Block();
  block.add(bytesOf(header));
  const put = (h: number, bytes: Uint8Array) => {
    header[h] = block.add(bytes);
  };
  header[A.H_MAGIC] = A.MAGIC;
  header[A.H_VERSION] = A.ABI_VERSION;
  header[A.H_RESOURCE_COUNT] = s.dims.resources.length;
  header[A.H_LIMIT_DIM_COUNT] = s.dims.limits.length;
  header[A.H_LABEL_KEY_COUNT] = ks.keys.length;
  header[A.H_SET_WORDS] = ks.setWords;
  put(A.H_KEYS, bytesOf(ks.keyTable()));
  header[A.H_INPUT_SET_COUNT] = pools.sets.length;
  put(A.H_SETS, new Uint8Array(setBuf));
  header[A.H_TEMPLATE_COUNT] = model.templates.length;
  put(A.H_TMPLS, bytesOf(s.tmpl.tmplRecords));
  header[A.H_INSTANCE_TYPE_COUNT] = s.tmpl.itTemplate.length;
  put(A.H_ITS, bytesOf(s.tmpl.itRecords));
  header[A.H_OFFERING_COUNT] = s.tmpl.offerings;
  header[A.H_OFFS] = block.addParts(s.tmpl.chunks.map((c) => c.offerings));
  header[A.H_POD_VERSION_COUNT] = s.versions;
  put(A.H_VERS, bytesOf(s.verRecords));
  header[A.H_POD_COUNT] = s.pods;
  put(A.H_PODS, bytesOf(s.podRecords));
  header[A.H_NODE_COUNT] = model.existing.length;
  put(A.H_NODES, bytesOf(s.nodeRecords));
  header[A.H_TOPOLOGY_GROUP_COUNT] = s.grpRecords.length / A.G_STRIDE;
  put(A.H_GROUPS, bytesOf(s.grpRecords));
  header[A.H_DAEMON_GROUP_COUNT] = pools.daemonGroups.length;
  put(A.H_DGROUPS, bytesOf(s.dgRecords));
  header[A.H_TAINT_SET_COUNT] = pools.taintSets.length;
  put(A.H_TOL, s.tol);
  put(A.H_LISTS, bytesOf(pools.words.view()));
  put(A.H_F64S, bytesOf(pools.f64.view()));
  writeSettings(header, input, opts, ks);
  const resv = reservationCounts(ks, (id) => model.reservations.manager.remainingOf(id));
  header[A.H_RESERVATION_COUNT] = resv.length;
  put(A.H_RESV, bytesOf(resv));
  // The header was added first; its bytes are copied when the block is written, after these writes.
  return block;
}

/** Flags, options and the key indices the search looks up directly. */
function writeSettings(header: Int32Array, input: ProvisionInput, opts: EncodeOptions, ks: KeySpace): void {
  header[A.H_FLAGS] =
    (input.options.minValuesPolicy === 'Strict' ? A.FLAG_STRICT_MIN_VALUES : 0) |
    (opts.improve ? A.FLAG_IMPROVE : 0) |
    (input.consolidation ? A.FLAG_CONSOLIDATION : 0);
  if (input.reservedOfferingMode !== 'Fallback') header[A.H_FLAGS] |= A.FLAG_RESERVED_STRICT;
  header[A.H_MAX_ITS] = input.options.maxInstanceTypes;
  header[A.H_HOSTNAME_KEY] = -1;
  header[A.H_ZONE_KEY] = ks.index.get(ZONE_LABEL) ?? -1;
  header[A.H_CT_KEY] = ks.index.get(CAPACITY_TYPE_LABEL) ?? -1;
  header[A.H_RESV_KEY] = ks.index.get(RESERVATION_ID_LABEL) ?? -1;
  header[A.H_IMPROVE_MS] = opts.improveMs ?? 0;
  header[A.H_IMPROVE_WORK] = Math.min(0x7fffffff, Math.ceil((opts.improveWork ?? DEFAULT_IMPROVE_WORK) / 1000));
  header[A.H_CT_RESERVED] = ks.value(CAPACITY_TYPE_LABEL, 'reserved');
  header[A.H_CT_SPOT] = ks.value(CAPACITY_TYPE_LABEL, 'spot');
  header[A.H_CT_ON_DEMAND] = ks.value(CAPACITY_TYPE_LABEL, 'on-demand');
}
