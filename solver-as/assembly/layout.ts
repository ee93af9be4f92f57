// Pointer arithmetic over the input block (solver-as/abi.ts): the only file that knows section offsets.
// Section base addresses are cached in globals when a solve starts (bind()).
import {
  H_DGROUPS, H_F64S, H_FLAGS, H_GROUPS, H_ITS, H_KEYS, H_LISTS, H_DAEMON_GROUP_COUNT, H_TOPOLOGY_GROUP_COUNT, H_INSTANCE_TYPE_COUNT, H_LABEL_KEY_COUNT, H_NODE_COUNT, H_NODES, H_OFFERING_COUNT, H_POD_COUNT,
  H_RESOURCE_COUNT, H_LIMIT_DIM_COUNT, H_INPUT_SET_COUNT, H_TEMPLATE_COUNT, H_TAINT_SET_COUNT, H_POD_VERSION_COUNT, H_OFFS, H_PODS, H_SETS, H_SET_WORDS, H_TMPLS, H_TOL, H_VERS, H_MAX_ITS,
  H_HOSTNAME_KEY, H_ZONE_KEY, H_CT_KEY, H_RESV_KEY, H_IMPROVE_MS, H_IMPROVE_WORK, H_RESERVATION_COUNT, H_RESV, H_CT_RESERVED, H_CT_SPOT, H_CT_ON_DEMAND, SREC_BYTES, KEY_STRIDE, KEY_WORDS, KEY_BITOFF,
  KEY_FLAGS, T_STRIDE, IT_STRIDE, O_STRIDE, V_STRIDE, P_STRIDE, N_STRIDE, G_STRIDE, DG_STRIDE,
} from '../abi';

/** The input block's address. */
let IN: usize = 0;
// The section counts of the header (H_*_COUNT), one global each, named for what they count.
/** Resource dimensions of every request, capacity and limit vector (cpu, memory, pods, ...). */
export let RESOURCES: i32 = 0;
/** Dimensions a NodePool limit can bound (the resources and the node count). */
export let LIMIT_DIMS: i32 = 0;
/** Interned label keys: one record per key in every dense requirement set. */
export let LABEL_KEYS: i32 = 0;
export let SET_WORDS: i32 = 0;
export let SET_BYTES: i32 = 0;
/** Requirement sets of the input (templates', pods', nodes' requirements), stored densely. */
export let INPUT_SETS: i32 = 0;
/** NodeClaim templates (one per NodePool and node class). */
export let TEMPLATES: i32 = 0;
/** Instance types of all templates together (each template lists its own). */
export let INSTANCE_TYPES: i32 = 0;
let OFFERINGS: i32 = 0;
/** Pod class versions: pods that schedule alike share one. */
export let POD_VERSIONS: i32 = 0;
export let PODS: i32 = 0;
/** Existing (and in-flight) nodes of the cluster: node ids 0 .. EXISTING_NODES - 1; the solve's NodeClaims follow as hosts. */
export let EXISTING_NODES: i32 = 0;
/** Topology spread, affinity and anti-affinity groups. */
export let TOPOLOGY_GROUPS: i32 = 0;
/** DaemonSet overhead groups (what a new node of a template must leave for its daemons). */
let DAEMON_GROUPS: i32 = 0;
/** Distinct taint sets (the tolerates matrix is POD_VERSIONS x TAINT_SETS). */
let TAINT_SETS: i32 = 0;
export let FLAGS: i32 = 0;
export let MAX_ITS: i32 = 0;
let HOSTNAME_KEY: i32 = -1;
export let ZONE_KEY: i32 = -1;
export let CT_KEY: i32 = -1;
export let RESV_KEY: i32 = -1;
export let IMPROVE_MS: i32 = 0;
/** Work budget of the improvement phase, thousands of units (budget.ts). */
export let IMPROVE_WORK: i32 = 0;
/** Reservations (values of the reservation-id key) and the capacity-type value `reserved` (-1: none). */
export let RESERVATIONS: i32 = 0;
export let CT_RESERVED: i32 = -1;
/** The capacity-type values spot and on-demand (-1: absent). */
export let CT_SPOT: i32 = -1;
export let CT_ON_DEMAND: i32 = -1;

let pKeys: usize = 0;
let pSets: usize = 0;
let pTmpls: usize = 0;
let pIts: usize = 0;
let pOffs: usize = 0;
let pVers: usize = 0;
let pPods: usize = 0;
let pNodes: usize = 0;
let pGroups: usize = 0;
let pDgroups: usize = 0;
let pTol: usize = 0;
let pLists: usize = 0;
let pF64s: usize = 0;
let pResv: usize = 0;

@inline function hdr(i: i32): i32 {
  return load<i32>(IN + (<usize>i << 2));
}

export function bind(base: usize): void {
  IN = base;
  RESOURCES = hdr(H_RESOURCE_COUNT);
  LIMIT_DIMS = hdr(H_LIMIT_DIM_COUNT);
  LABEL_KEYS = hdr(H_LABEL_KEY_COUNT);
  SET_WORDS = hdr(H_SET_WORDS);
  SET_BYTES = LABEL_KEYS * SREC_BYTES + SET_WORDS * 4;
  INPUT_SETS = hdr(H_INPUT_SET_COUNT);
  TEMPLATES = hdr(H_TEMPLATE_COUNT);
  INSTANCE_TYPES = hdr(H_INSTANCE_TYPE_COUNT);
  OFFERINGS = hdr(H_OFFERING_COUNT);
  POD_VERSIONS = hdr(H_POD_VERSION_COUNT);
  PODS = hdr(H_POD_COUNT);
  EXISTING_NODES = hdr(H_NODE_COUNT);
  TOPOLOGY_GROUPS = hdr(H_TOPOLOGY_GROUP_COUNT);
  DAEMON_GROUPS = hdr(H_DAEMON_GROUP_COUNT);
  TAINT_SETS = hdr(H_TAINT_SET_COUNT);
  FLAGS = hdr(H_FLAGS);
  MAX_ITS = hdr(H_MAX_ITS);
  HOSTNAME_KEY = hdr(H_HOSTNAME_KEY);
  ZONE_KEY = hdr(H_ZONE_KEY);
  CT_KEY = hdr(H_CT_KEY);
  RESV_KEY = hdr(H_RESV_KEY);
  IMPROVE_MS = hdr(H_IMPROVE_MS);
  IMPROVE_WORK = hdr(H_IMPROVE_WORK);
  RESERVATIONS = hdr(H_RESERVATION_COUNT);
  CT_RESERVED = hdr(H_CT_RESERVED);
  CT_SPOT = hdr(H_CT_SPOT);
  CT_ON_DEMAND = hdr(H_CT_ON_DEMAND);
  pKeys = base + <usize>hdr(H_KEYS);
  pSets = base + <usize>hdr(H_SETS);
  pTmpls = base + <usize>hdr(H_TMPLS);
  pIts = base + <usize>hdr(H_ITS);
  pOffs = base + <usize>hdr(H_OFFS);
  pVers = base + <usize>hdr(H_VERS);
  pPods = base + <usize>hdr(H_PODS);
  pNodes = base + <usize>hdr(H_NODES);
  pGroups = base + <usize>hdr(H_GROUPS);
  pDgroups = base + <usize>hdr(H_DGROUPS);
  pTol = base + <usize>hdr(H_TOL);
  pLists = base + <usize>hdr(H_LISTS);
  pF64s = base + <usize>hdr(H_F64S);
  pResv = base + <usize>hdr(H_RESV);
}

/** Instances reservation r has left when the solve starts. */
@inline export function resvCapacity(r: i32): i32 {
  return load<i32>(pResv + (<usize>r << 2));
}

// ---- keys ----
@inline export function keyWords(k: i32): i32 {
  return load<i32>(pKeys + (<usize>(k * KEY_STRIDE + KEY_WORDS) << 2));
}
@inline export function keyBitOff(k: i32): i32 {
  return load<i32>(pKeys + (<usize>(k * KEY_STRIDE + KEY_BITOFF) << 2));
}
@inline export function keyFlags(k: i32): i32 {
  return load<i32>(pKeys + (<usize>(k * KEY_STRIDE + KEY_FLAGS) << 2));
}

/** Address of input set i (input sets are stored densely, one after the other). */
@inline export function inputSet(i: i32): usize {
  return pSets + <usize>i * <usize>SET_BYTES;
}

// ---- generic record access: section base + index * stride + field ----
@inline export function tmpl(t: i32, f: i32): i32 {
  return load<i32>(pTmpls + (<usize>(t * T_STRIDE + f) << 2));
}
@inline export function it(i: i32, f: i32): i32 {
  return load<i32>(pIts + (<usize>(i * IT_STRIDE + f) << 2));
}
@inline export function off(o: i32, f: i32): i32 {
  return load<i32>(pOffs + (<usize>(o * O_STRIDE + f) << 2));
}
@inline export function offPrice(o: i32, f: i32): f64 {
  // prices are stored as an f64 in two i32 words (8-byte aligned by the encoder)
  return load<f64>(pOffs + (<usize>(o * O_STRIDE + f) << 2));
}
@inline export function ver(v: i32, f: i32): i32 {
  return load<i32>(pVers + (<usize>(v * V_STRIDE + f) << 2));
}
@inline export function pod(p: i32, f: i32): i32 {
  return load<i32>(pPods + (<usize>(p * P_STRIDE + f) << 2));
}
@inline export function node(n: i32, f: i32): i32 {
  return load<i32>(pNodes + (<usize>(n * N_STRIDE + f) << 2));
}
@inline export function grp(g: i32, f: i32): i32 {
  return load<i32>(pGroups + (<usize>(g * G_STRIDE + f) << 2));
}
@inline export function dg(d: i32, f: i32): i32 {
  return load<i32>(pDgroups + (<usize>(d * DG_STRIDE + f) << 2));
}
@inline export function tolerates(v: i32, ts: i32): bool {
  return load<u8>(pTol + <usize>(v * TAINT_SETS + ts)) != 0;
}

// ---- pools ----
/** Length of the list at word index `l` (-1 = empty list). */
@inline export function listLen(l: i32): i32 {
  return l < 0 ? 0 : load<i32>(pLists + (<usize>l << 2));
}
@inline export function listAt(l: i32, i: i32): i32 {
  return load<i32>(pLists + (<usize>(l + 1 + i) << 2));
}
/** Address of word `i` in the list pool (for sparse requirement entries). */
@inline export function listAddr(i: i32): usize {
  return pLists + (<usize>i << 2);
}
@inline export function f64At(i: i32): f64 {
  return load<f64>(pF64s + (<usize>i << 3));
}
@inline export function f64Addr(i: i32): usize {
  return pF64s + (<usize>i << 3);
}
