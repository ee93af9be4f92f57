// Snapshot -> the solver's input block (solver-as/abi.ts).
//
// The preparation that is the same for both solvers — which NodePools provision and their templates,
// daemonset overhead groups, existing nodes' remaining resources, topology groups and their initial
// counts, the relaxation chain of each pod — is done by the reference solver's own code (ReferenceScheduler),
// so the two solvers start from identical state; the solver then runs the search. Pods are grouped into
// classes: identical pods share one chain of versions, so 10,000 replicas cost one class.
import * as A from '../../solver-as/abi.ts';
import type { Pod, Requirements, Taint } from '../domain/types.ts';
import { NODES } from '../domain/resources.ts';
import { CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { podRequirements, strictPodRequirements } from '../scheduling/pods.ts';
import { fromSelector, add } from '../scheduling/requirements.ts';
import { toleratesAll } from '../scheduling/taints.ts';
import type { PodError, ProvisionInput } from '../solver/types.ts';
import { hostPortsConflict } from '../solver/reference/nodes.ts';
import { ReferenceScheduler } from '../solver/reference/scheduler.ts';
import type { DaemonGroup, Template } from '../solver/reference/templates.ts';
import type { TopologyGroup } from '../solver/reference/topology.ts';
import { appendChunk, catalogValues, RESERVATION_ID_LABEL, reservationCounts, templateTypes, withoutHostname, type TypesChunk } from './catalog.ts';
import { PodShapes, queueClasses } from './classes.ts';
import { KeySpace } from './keyspace.ts';
import { nodeLabelSet, nodeTaintsKey, taintsKey } from './nodes.ts';
import { Block, bytesOf, encodePort, F64s, Words } from './writer.ts';


/** What decoding needs to map the result back to pods, NodeClaims and requirements. */
export interface EncodeContext {
  readonly input: ProvisionInput;
  readonly scheduler: ReferenceScheduler;
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

export interface EncodeOptions {
  readonly improve: boolean;
  /** The improvement phase's wall-clock safety net, ms (0: none); its budget is `improveWork`. */
  readonly improveMs?: number;
  /** The improvement phase's work budget, in work units (solver-as/assembly/budget.ts). */
  readonly improveWork?: number;
  /** Reuse each template's encoded instance types and offerings (engine/abi/catalog.ts); default true. */
  readonly catalogCache?: boolean;
}

/**
 * The improvement phase's default work budget (units of solver-as/assembly/budget.ts). Sized so that the phase
 * converges on the benchmark scenarios (docs/solver.md, "Budget"); a decision rarely needs more.
 */
export const DEFAULT_IMPROVE_WORK = 2e8;
/** The default wall-clock safety net of the improvement phase, ms: far above what the work budget takes. */
export const DEFAULT_IMPROVE_SAFETY_MS = 20_000;

export function encodeProvision(input: ProvisionInput, opts: EncodeOptions): Encoded {
  // Topology, node requirements and validation are worked out per shape (classes that differ only in requests).
  const shapes = new PodShapes();
  const { pods, keys, representatives, ignored } = queueClasses(input.pods, shapes);
  const shapeOf = (p: Pod) => shapes.shapeOf(p);
  const sched = new ReferenceScheduler(input, pods, representatives, shapeOf);
  const policy = input.options.preferencePolicy;
  const topo = sched.topology;
  const groupList: TopologyGroup[] = [...topo.groups.values(), ...topo.inverse.values()];
  const groupIndex = new Map<string, number>();
  [...topo.groups.keys()].forEach((id, i) => groupIndex.set(id, i));
  [...topo.inverse.keys()].forEach((id, i) => groupIndex.set('inv:' + id, topo.groups.size + i));

  // ---- pod classes and their relaxation chains ----
  interface Shape { reqs: Requirements; strict: Requirements; volumes: Requirements[]; lists?: Int32Array }
  interface Version { pod: Pod; shape: Shape; reqs: Requirements; strict: Requirements; volumes: Requirements[]; next: number; first: number }
  const versions: Version[] = [];
  // One requirements object per shape, so equal requirements share one dense set (setId goes by identity).
  const shapeList = new Map<Pod, Shape>();
  const shapeParts = (vp: Pod): Shape => {
    const s = shapeOf(vp);
    let sp = shapeList.get(s);
    if (sp === undefined) {
      sp = {
        reqs: withoutHostname(podRequirements(s, policy)),
        strict: withoutHostname(strictPodRequirements(s)),
        volumes: (s.volumeRequirements ?? []).map((alt) => add(new Map(), ...alt.map(fromSelector))),
      };
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
      const chain = sched.versions(pods[i]!);
      chain.forEach((vp, j) => {
        const shape = shapeParts(vp);
        versions.push({ pod: vp, shape, reqs: shape.reqs, strict: shape.strict, volumes: shape.volumes, next: j + 1 < chain.length ? first + j + 1 : -1, first });
      });
    }
    podVersion[i] = v0;
  }

  // ---- keys and values ----
  const excluded = new Set([HOSTNAME_LABEL]);
  const relevant = new Set<string>([ZONE_LABEL, CAPACITY_TYPE_LABEL, RESERVATION_ID_LABEL]);
  const mention = (r: Requirements) => { for (const k of r.keys()) relevant.add(k); };
  for (const t of sched.templates) mention(t.requirements);
  for (const v of shapeList.values()) {
    mention(v.reqs);
    mention(v.strict);
    for (const a of v.volumes) mention(a);
  }
  for (const g of groupList) {
    relevant.add(g.key);
    for (const alt of g.nodeFilter?.alternatives ?? []) mention(alt);
  }
  const ks = new KeySpace(sched.wellKnown, excluded, relevant);
  ks.addValues(ZONE_LABEL, []);
  ks.addValues(CAPACITY_TYPE_LABEL, []);
  for (const t of sched.templates) {
    ks.addRequirements(t.requirements);
    for (const [k, vs] of catalogValues(t)) ks.addValues(k, vs);
  }
  for (const v of shapeList.values()) {
    ks.addRequirements(v.reqs);
    ks.addRequirements(v.strict);
    for (const a of v.volumes) ks.addRequirements(a);
  }
  // Nodes of one type, zone and pool share their labels but for the hostname: share one set.
  const labelSets = new Map<string, Requirements>();
  const nodeReqs = sched.existing.map((e) => {
    const { set, key } = nodeLabelSet(e.requirements);
    const seen = labelSets.get(key);
    if (seen) return seen;
    labelSets.set(key, set);
    return set;
  });
  for (const r of nodeReqs) ks.addRequirements(r);
  for (const g of groupList) {
    if (g.key !== HOSTNAME_LABEL) ks.addValues(g.key, g.domains.keys());
    for (const alt of g.nodeFilter?.alternatives ?? []) ks.addRequirements(alt);
  }
  ks.freeze();

  // ---- dense sets ----
  const setList: Requirements[] = [];
  const setCache = new Map<Requirements, number>();
  const setId = (r: Requirements): number => {
    let id = setCache.get(r);
    if (id === undefined) {
      id = setList.length;
      setList.push(r);
      setCache.set(r, id);
    }
    return id;
  };
  const words = new Words();
  const f64 = new F64s();

  // ---- resources ----
  const resSet = new Set<string>(['cpu', 'memory', 'pods']);
  for (const v of versions) for (const k of Object.keys(v.pod.requests)) resSet.add(k);
  for (const ds of input.daemonSets) for (const k of Object.keys(ds.pod.requests)) resSet.add(k);
  const resources = [...resSet];
  const vec = (r: Readonly<Record<string, number>>) => resources.map((k) => r[k] ?? 0);
  const limitDims = new Set<string>();
  for (const t of sched.templates) for (const k of Object.keys(t.pool.limits)) if (k !== NODES) limitDims.add(k);
  const lds = [...limitDims];

  // ---- taint sets ----
  const taintSets: Array<readonly Taint[]> = [];
  const taintKey = new Map<string, number>();
  const taintSet = (ts: readonly Taint[], k = taintsKey(ts)): number => {
    let id = taintKey.get(k);
    if (id === undefined) {
      id = taintSets.length;
      taintSets.push(ts);
      taintKey.set(k, id);
    }
    return id;
  };

  // ---- daemon groups ----
  const dgIndex = new Map<DaemonGroup, number>();
  const dgRecords: number[] = [];
  const dgs: DaemonGroup[] = [];
  const dgOf = (g: DaemonGroup): number => {
    let id = dgIndex.get(g);
    if (id === undefined) {
      id = dgs.length;
      dgIndex.set(g, id);
      dgs.push(g);
    }
    return id;
  };

  // ---- templates and instance types ----
  const ips = new Map<string, number>();
  const tmplRecords = new Int32Array(sched.templates.length * A.T_STRIDE);
  const itRecords = new Int32Array(sched.templates.reduce((n, t) => n + t.instanceTypes.length, 0) * A.IT_STRIDE);
  const itTemplate: number[] = [];
  const itStart: number[] = [];
  const chunks: TypesChunk[] = [];
  let nit = 0;
  let nOffs = 0;
  sched.templates.forEach((t, ti) => {
    const base = ti * A.T_STRIDE;
    tmplRecords[base + A.T_SET] = setId(withoutHostname(t.requirements));
    tmplRecords[base + A.T_ITS] = nit;
    tmplRecords[base + A.T_NITS] = t.instanceTypes.length;
    tmplRecords[base + A.T_TAINTSET] = taintSet(t.pool.template.taints);
    const remaining = sched.remainingLimits(t.pool.name) ?? {};
    tmplRecords[base + A.T_LIMITS] = f64.vector([remaining[NODES] ?? Infinity, ...lds.map((d) => remaining[d] ?? Infinity)]);
    itStart.push(nit);
    const c = templateTypes(t, ks, resources, lds, opts.catalogCache ?? true);
    appendChunk(c, ti, words, f64, nOffs, dgOf, itRecords, nit);
    chunks.push(c);
    for (let i = 0; i < t.instanceTypes.length; i++) itTemplate.push(ti);
    nit += t.instanceTypes.length;
    nOffs += c.offeringCount;
  });
  for (const g of dgs) dgRecords.push(f64.vector(vec(g.overhead)), words.list(g.daemons.flatMap((d) => d.hostPorts.map((p) => encodePort(p, ips)))));

  // ---- versions ----
  const verRecords = new Int32Array(versions.length * A.V_STRIDE);
  const forwardGroups = [...topo.groups.values()];
  const inverseGroups = [...topo.inverse.values()];
  // The lists of a version are functions of its shape: written once per shape, shared by offset.
  const SL_RECORD = 0, SL_INV_SELECT = 1, SL_PORTS = 2, SL_OWNED = 3, SL_INV_OWNED = 4, SL_VOLUMES = 5, SL_DG = 6;
  const shapeLists = (v: Version): Int32Array => {
    const sh = v.shape;
    if (sh.lists) return sh.lists;
    const l = new Int32Array(7);
    const ids = topo.groupIds(v.pod);
    l[SL_PORTS] = words.list(v.pod.hostPorts.map((p) => encodePort(p, ips)));
    l[SL_OWNED] = words.list(ids.owned.map((id) => groupIndex.get(id)!));
    l[SL_INV_OWNED] = words.list(ids.inverseOwned.map((id) => groupIndex.get('inv:' + id)!));
    l[SL_VOLUMES] = words.list(v.volumes.map(setId));
    l[SL_DG] = words.list(dgs.map((g, gi) => (g.daemons.some((d) => hostPortsConflict(v.pod.hostPorts, d.hostPorts)) ? gi : -1)).filter((x) => x >= 0));
    // Which groups select the pod: only first versions ask (below); relaxed ones share their class's answer.
    l[SL_RECORD] = -2;
    return (sh.lists = l);
  };
  versions.forEach((v, i) => {
    const b = i * A.V_STRIDE;
    verRecords[b + A.V_REQS] = setId(v.reqs);
    verRecords[b + A.V_STRICT] = setId(v.strict);
    const l = shapeLists(v);
    // Relaxation keeps a pod's namespace and labels: which groups select it is decided once per class.
    if (v.first === i) {
      if (l[SL_RECORD] === -2) {
        const recordGroups: number[] = [];
        const inverseSelect: number[] = [];
        forwardGroups.forEach((g, gi) => { if (g.selects(v.pod)) recordGroups.push(gi); });
        inverseGroups.forEach((g, gi) => { if (g.selects(v.pod)) inverseSelect.push(forwardGroups.length + gi); });
        l[SL_RECORD] = words.list(recordGroups);
        l[SL_INV_SELECT] = words.list(inverseSelect);
      }
      verRecords[b + A.V_RECORD] = l[SL_RECORD]!;
      verRecords[b + A.V_INV_SELECT] = l[SL_INV_SELECT]!;
    } else {
      verRecords[b + A.V_RECORD] = verRecords[v.first * A.V_STRIDE + A.V_RECORD]!;
      verRecords[b + A.V_INV_SELECT] = verRecords[v.first * A.V_STRIDE + A.V_INV_SELECT]!;
    }
    verRecords[b + A.V_REQUESTS] = f64.vector(vec(v.pod.requests));
    verRecords[b + A.V_PORTS] = l[SL_PORTS]!;
    verRecords[b + A.V_OWNED] = l[SL_OWNED]!;
    verRecords[b + A.V_INV_OWNED] = l[SL_INV_OWNED]!;
    verRecords[b + A.V_VOLUMES] = l[SL_VOLUMES]!;
    verRecords[b + A.V_NEXT] = v.next;
    verRecords[b + A.V_DG_CONFLICT] = l[SL_DG]!;
    verRecords[b + A.V_SELF] = -1;
  });

  // ---- pods ----
  const podRecords = new Int32Array(pods.length * A.P_STRIDE);
  const moved = input.consolidation?.movedPods;
  const stride = A.P_STRIDE;
  const fVersion = A.P_VERSION;
  const fMoved = A.P_MOVED;
  for (let i = 0; i < pods.length; i++) {
    podRecords[i * stride + fVersion] = podVersion[i]!;
    if (moved?.has(pods[i]!.uid)) podRecords[i * stride + fMoved] = 1;
  }

  // ---- existing nodes ----
  const blocked = input.consolidation?.blockedDestinations;
  const nodeRecords = new Int32Array(sched.existing.length * A.N_STRIDE);
  sched.existing.forEach((e, i) => {
    const b = i * A.N_STRIDE;
    nodeRecords[b + A.N_SET] = setId(nodeReqs[i]!);
    nodeRecords[b + A.N_REMAINING] = f64.vector(vec(e.remaining));
    nodeRecords[b + A.N_TAINTSET] = taintSet(e.taints, nodeTaintsKey(e.node, e.taints));
    nodeRecords[b + A.N_FLAGS] = (blocked?.has(e.node.name) ? A.NF_BLOCKED_FOR_MOVED : 0) | (e.node.initialized ? A.NF_INITIALIZED : 0);
    nodeRecords[b + A.N_PORTS] = words.list(e.hostPorts.map((p) => encodePort(p, ips)));
  });

  // ---- topology groups ----
  const hostOf = sched.existing.map((e) => e.hostname);
  const grpRecords = new Int32Array(groupList.length * A.G_STRIDE);
  groupList.forEach((g, gi) => {
    const b = gi * A.G_STRIDE;
    const inverse = gi >= topo.groups.size;
    const hostname = g.key === HOSTNAME_LABEL;
    const k = hostname ? -1 : ks.index.get(g.key) ?? -1;
    grpRecords[b + A.G_TYPE] = g.type === 'spread' ? A.GT_SPREAD : g.type === 'affinity' ? A.GT_AFFINITY : A.GT_ANTI;
    grpRecords[b + A.G_KEY] = k;
    grpRecords[b + A.G_MAX_SKEW] = Math.min(g.maxSkew, 0x7fffffff);
    grpRecords[b + A.G_MIN_DOMAINS] = g.minDomains ?? 0;
    if (hostname) {
      grpRecords[b + A.G_COUNTS] = words.list(hostOf.map((h) => g.domains.get(h) ?? 0));
      grpRecords[b + A.G_REGISTERED] = -1;
    } else {
      const counts = new Array<number>(k >= 0 ? ks.values[k]!.length : 0).fill(0);
      const registered: number[] = [];
      for (const [d, c] of g.domains) {
        const vi = ks.value(g.key, d);
        if (vi < 0) continue;
        counts[vi] = c;
        registered.push(vi);
      }
      grpRecords[b + A.G_COUNTS] = words.list(counts);
      grpRecords[b + A.G_REGISTERED] = words.list(registered);
    }
    const filter = g.nodeFilter;
    grpRecords[b + A.G_FILTER] = words.list((filter?.alternatives ?? []).map((alt) => setId(withoutHostname(alt))));
    grpRecords[b + A.G_FLAGS] = (inverse ? A.GF_INVERSE : 0) | (filter?.honorTaints ? A.GF_HONOR_TAINTS : 0) | (filter && filter.alternatives.length ? A.GF_HAS_FILTER : 0);
    grpRecords[b + A.G_TOL] = -1;
    if (filter?.honorTaints) grpRecords[b + A.G_TOL] = words.list(taintSets.map((ts) => (toleratesAll(filter.tolerations, ts) ? 1 : 0)));
  });
  // Every taint set exists by now (templates and nodes added theirs): build the tolerance table.
  const tol = new Uint8Array(versions.length * taintSets.length);
  versions.forEach((v, i) => taintSets.forEach((ts, j) => { tol[i * taintSets.length + j] = toleratesAll(v.pod.tolerations, ts) ? 1 : 0; }));

  // ---- the block ----
  const setBuf = new ArrayBuffer(setList.length * ks.setBytes);
  setList.forEach((r, i) => ks.writeSet(r, setBuf, i * ks.setBytes));
  const offerings = new Uint8Array(nOffs * A.O_STRIDE * 4);
  let offAt = 0;
  for (const c of chunks) {
    offerings.set(c.offerings, offAt);
    offAt += c.offerings.byteLength;
  }

  const header = new Int32Array(A.H_WORDS);
  const block = new Block();
  block.add(bytesOf(header));
  const put = (h: number, bytes: Uint8Array) => { header[h] = block.add(bytes); };
  header[A.H_MAGIC] = A.MAGIC;
  header[A.H_VERSION] = A.ABI_VERSION;
  header[A.H_NR] = resources.length;
  header[A.H_NLD] = lds.length;
  header[A.H_NK] = ks.keys.length;
  header[A.H_SET_WORDS] = ks.setWords;
  put(A.H_KEYS, bytesOf(ks.keyTable()));
  header[A.H_NS] = setList.length;
  put(A.H_SETS, new Uint8Array(setBuf));
  header[A.H_NT] = sched.templates.length;
  put(A.H_TMPLS, bytesOf(tmplRecords));
  header[A.H_NIT] = nit;
  put(A.H_ITS, bytesOf(itRecords));
  header[A.H_NO] = nOffs;
  put(A.H_OFFS, offerings);
  header[A.H_NV] = versions.length;
  put(A.H_VERS, bytesOf(verRecords));
  header[A.H_NP] = pods.length;
  put(A.H_PODS, bytesOf(podRecords));
  header[A.H_NN] = sched.existing.length;
  put(A.H_NODES, bytesOf(nodeRecords));
  header[A.H_NG] = groupList.length;
  put(A.H_GROUPS, bytesOf(grpRecords));
  header[A.H_NDG] = dgs.length;
  put(A.H_DGROUPS, bytesOf(Int32Array.from(dgRecords)));
  header[A.H_NTS] = taintSets.length;
  put(A.H_TOL, tol);
  put(A.H_LISTS, bytesOf(words.view().slice()));
  put(A.H_F64S, bytesOf(f64.view().slice()));
  header[A.H_FLAGS] = (input.options.minValuesPolicy === 'Strict' ? A.FLAG_STRICT_MIN_VALUES : 0) | (opts.improve ? A.FLAG_IMPROVE : 0) | (input.consolidation ? A.FLAG_CONSOLIDATION : 0);
  header[A.H_MAX_ITS] = input.options.maxInstanceTypes;
  header[A.H_HOSTNAME_KEY] = -1;
  header[A.H_ZONE_KEY] = ks.index.get(ZONE_LABEL) ?? -1;
  header[A.H_CT_KEY] = ks.index.get(CAPACITY_TYPE_LABEL) ?? -1;
  header[A.H_RESV_KEY] = ks.index.get(RESERVATION_ID_LABEL) ?? -1;
  header[A.H_IMPROVE_MS] = opts.improveMs ?? 0;
  header[A.H_IMPROVE_WORK] = Math.min(0x7fffffff, Math.ceil((opts.improveWork ?? DEFAULT_IMPROVE_WORK) / 1000));
  const resv = reservationCounts(ks, (id) => sched.reservations.manager.remainingOf(id));
  header[A.H_NRV] = resv.length;
  put(A.H_RESV, bytesOf(resv));
  header[A.H_CT_RESERVED] = ks.value(CAPACITY_TYPE_LABEL, 'reserved');
  header[A.H_CT_SPOT] = ks.value(CAPACITY_TYPE_LABEL, 'spot');
  header[A.H_CT_ON_DEMAND] = ks.value(CAPACITY_TYPE_LABEL, 'on-demand');
  if (input.reservedOfferingMode !== 'Fallback') header[A.H_FLAGS] |= A.FLAG_RESERVED_STRICT;
  // The header was added first; its bytes are copied at build time, after these writes.
  return {
    block: block.build(),
    ctx: { input, scheduler: sched, keys: ks, pods, podClass: podVersion, ignored, templates: sched.templates, itTemplate: Int32Array.from(itTemplate), itStart, resources },
  };
}
