// The solver ABI: integer constants shared by asc (solver-as/assembly) and tsc (engine/abi).
// Only `export const NAME = <integer literal>` lines belong here. docs/solver.md explains the algorithm.
//
// One solve = one input block copied into linear memory, one call, one result block read back:
//
//   input block (written by engine/abi/encode.ts); offsets are bytes from the block start, and X_COUNT below is
//   the header word H_X_COUNT
//   +--------------------------------------------------------------------------+
//   | header     H_WORDS x i32 (counts and section offsets, H_* below)          |
//   +--------------------------------------------------------------------------+
//   | keys       LABEL_KEY_COUNT x KEY_STRIDE i32: words, bit offset, flags    |
//   | sets       INPUT_SET_COUNT x setBytes: dense requirement sets            |
//   |            setBytes = LABEL_KEY_COUNT x SREC_BYTES + H_SET_WORDS x 4     |
//   | templates  TEMPLATE_COUNT x T_STRIDE i32                                 |
//   | its        INSTANCE_TYPE_COUNT x IT_STRIDE i32: per template inst. type  |
//   | offerings  OFFERING_COUNT x O_STRIDE i32                                 |
//   | versions   POD_VERSION_COUNT x V_STRIDE i32: pod class versions          |
//   | pods       POD_COUNT x P_STRIDE i32: in queue order                      |
//   | nodes      NODE_COUNT x N_STRIDE i32: existing / in-flight nodes         |
//   | groups     TOPOLOGY_GROUP_COUNT x G_STRIDE i32: topology groups          |
//   | dgroups    DAEMON_GROUP_COUNT x DG_STRIDE i32: daemonset overhead groups |
//   | tol        POD_VERSION_COUNT x TAINT_SET_COUNT u8: version tolerates set |
//   | lists      i32 pool: variable-length lists                               |
//   | f64s       f64 pool: vectors (resources, limits)                         |
//   | resv       RESERVATION_COUNT x i32: instances left per reservation       |
//   +--------------------------------------------------------------------------+
//
// Reservations are the values of the reservation-id key (H_RESV_KEY), in interned order: resv[r] is the count of
// instances reservation r has left when the solve starts (0 for an ID no reserved offering carries). A reserved
// offering is one whose capacity type is the value H_CT_RESERVED of the capacity-type key and whose O_RESV >= 0.
//
// A dense requirement set holds one record per label key (defined / complement / reports-NotIn flags,
// minValues, integer bounds) followed by the value bits of every key (values interned per key; bounds
// already applied to the bits). A list in the i32 pool is [count, item...]; a list field holds the
// list's word index in the pool, or -1 for an empty list.
//
//   result block (allocated by the solver; solve() returns its address)
//   +--------------------------------------------------------------------------+
//   | R_WORDS x i32 header: status, claim count, section pointers              |
//   | placements  POD_COUNT x i32: >= 0 node index; claim i as                 |
//   |             PLACED_CLAIM_BASE - i; PLACED_NOWHERE                        |
//   | errors      POD_COUNT x i32: failure code of unplaced pods; a pod with   |
//   |             E_MIN_VALUES keeps its claim in placements (no pods in it)   |
//   | claims      claim count x C_STRIDE i32                                   |
//   | claim its   i32 lists (live instance types, catalog order)               |
//   | claim resv  i32 lists (reservations each claim holds)                    |
//   | sets        dense sets referenced by claims (copied)                     |
//   +--------------------------------------------------------------------------+

export const ABI_VERSION = 6;
export const MAGIC = 0x4b545331;

// ---- input header (i32 word indices) ----
export const H_MAGIC = 0;
export const H_VERSION = 1;
export const H_RESOURCE_COUNT = 2;
export const H_LIMIT_DIM_COUNT = 3;
export const H_LABEL_KEY_COUNT = 4;
export const H_SET_WORDS = 5;
export const H_KEYS = 6;
export const H_INPUT_SET_COUNT = 7;
export const H_SETS = 8;
export const H_TEMPLATE_COUNT = 9;
export const H_TMPLS = 10;
export const H_INSTANCE_TYPE_COUNT = 11;
export const H_ITS = 12;
export const H_OFFERING_COUNT = 13;
export const H_OFFS = 14;
export const H_POD_VERSION_COUNT = 15;
export const H_VERS = 16;
export const H_POD_COUNT = 17;
export const H_PODS = 18;
export const H_NODE_COUNT = 19;
export const H_NODES = 20;
export const H_TOPOLOGY_GROUP_COUNT = 21;
export const H_GROUPS = 22;
export const H_DAEMON_GROUP_COUNT = 23;
export const H_DGROUPS = 24;
export const H_TAINT_SET_COUNT = 25;
export const H_TOL = 26;
export const H_LISTS = 27;
export const H_F64S = 28;
export const H_FLAGS = 29;
export const H_MAX_ITS = 30;
export const H_HOSTNAME_KEY = 31;
export const H_ZONE_KEY = 32;
export const H_CT_KEY = 33;
export const H_RESV_KEY = 34;
export const H_IMPROVE_MS = 35;
export const H_RESERVATION_COUNT = 36;
export const H_RESV = 37;
export const H_CT_RESERVED = 38;
/** Work budget of the improvement phase, in thousands of work units (solver-as/assembly/budget.ts). */
export const H_IMPROVE_WORK = 39;
/** Values of the capacity-type key for spot and on-demand (-1: absent), for the launch rules of the improvement phase. */
export const H_CT_SPOT = 40;
export const H_CT_ON_DEMAND = 41;
export const H_WORDS = 44;

// H_FLAGS bits
export const FLAG_STRICT_MIN_VALUES = 1;
export const FLAG_IMPROVE = 2;
export const FLAG_CONSOLIDATION = 4;
/** Reserved capacity in Strict mode (provisioning); without it, Fallback (disruption simulations). */
export const FLAG_RESERVED_STRICT = 8;

// ---- keys ----
export const KEY_WORDS = 0;
export const KEY_BITOFF = 1;
export const KEY_FLAGS = 2;
export const KEY_STRIDE = 4;
export const KEYF_WELL_KNOWN = 1;

// ---- set records (bytes within a dense set) ----
export const SREC_FLAGS = 0;
export const SREC_MINV = 4;
export const SREC_GTE = 8;
export const SREC_LTE = 16;
export const SREC_BYTES = 24;
export const SF_DEFINED = 1;
export const SF_COMPLEMENT = 2;
export const SF_EXCL = 4;

// ---- templates (i32 words) ----
export const T_SET = 0;
export const T_ITS = 1;
export const T_NITS = 2;
export const T_TAINTSET = 3;
export const T_LIMITS = 4;
export const T_STRIDE = 8;

// ---- template instance types (i32 words); f64 fields are indices into the f64 pool ----
export const IT_REQS = 0;
export const IT_ALLOC = 1;
export const IT_CAP = 2;
export const IT_DG = 3;
export const IT_OFFS = 4;
export const IT_NOFFS = 5;
export const IT_TMPL = 6;
/** ITF_* bits. */
export const IT_FLAGS = 7;
export const IT_STRIDE = 8;
/** A metal size or a type with GPUs or accelerators: a launch drops it while generic types remain (engine/launch). */
export const ITF_EXOTIC = 1;

// IT_REQS is a list of sparse requirement entries: [key, flags, value words...]

// ---- offerings (i32 words) ----
export const O_ZONE = 0;
export const O_CT = 1;
export const O_RESV = 2;
export const O_AVAILABLE = 3;
export const O_PRICE = 4;
export const O_STRIDE = 6;

// ---- pod class versions (i32 words) ----
export const V_REQS = 0;
export const V_STRICT = 1;
export const V_REQUESTS = 2;
export const V_PORTS = 3;
export const V_OWNED = 4;
export const V_RECORD = 5;
export const V_INV_OWNED = 6;
export const V_INV_SELECT = 7;
export const V_VOLUMES = 8;
export const V_NEXT = 9;
export const V_DG_CONFLICT = 10;
export const V_SELF = 11;
export const V_STRIDE = 12;

// ---- pods ----
export const P_VERSION = 0;
export const P_MOVED = 1;
export const P_STRIDE = 2;

// ---- existing nodes ----
export const N_SET = 0;
export const N_REMAINING = 1;
export const N_TAINTSET = 2;
export const N_FLAGS = 3;
export const N_PORTS = 4;
export const N_STRIDE = 6;
export const NF_BLOCKED_FOR_MOVED = 1;
export const NF_INITIALIZED = 2;

// ---- topology groups ----
export const G_TYPE = 0;
export const G_KEY = 1;
export const G_MAX_SKEW = 2;
export const G_MIN_DOMAINS = 3;
export const G_COUNTS = 4;
export const G_REGISTERED = 5;
export const G_FILTER = 6;
export const G_FLAGS = 7;
export const G_TOL = 8;
export const G_STRIDE = 10;
export const GT_SPREAD = 0;
export const GT_AFFINITY = 1;
export const GT_ANTI = 2;
export const GF_INVERSE = 1;
export const GF_HONOR_TAINTS = 2;
export const GF_HAS_FILTER = 4;

// ---- daemon overhead groups ----
export const DG_OVERHEAD = 0;
export const DG_PORTS = 1;
export const DG_STRIDE = 2;

// ---- placements (result block) ----
/** A pod the solve did not place. */
export const PLACED_NOWHERE = -1;
/** A pod placed on the solve's NodeClaim i is written as PLACED_CLAIM_BASE - i (-2, -3, ...); nodes are >= 0. */
export const PLACED_CLAIM_BASE = -2;

// ---- result header (i32 words) ----
export const R_STATUS = 0;
export const R_NCLAIMS = 1;
export const R_PLACEMENTS = 2;
export const R_ERRORS = 3;
export const R_CLAIMS = 4;
export const R_NSETS = 5;
export const R_SETS = 6;
export const R_IMPROVED = 7;
/** 1 when the improvement phase's wall-clock safety net fired (the plan may depend on the machine). */
export const R_TRUNCATED = 8;
/** Work the improvement phase spent, in thousands of units. */
export const R_WORK = 9;
export const R_WORDS = 10;

// ---- claims (i32 words) ----
export const C_TMPL = 0;
export const C_SET = 1;
export const C_ITS = 2;
export const C_NPODS = 3;
export const C_CHEAPEST = 4;
/** Word index of the list of reservations the claim holds, or -1. Such claims' instance types are not truncated. */
export const C_RESV = 5;
/** CF_* bits. */
export const C_FLAGS = 6;
export const C_STRIDE = 8;
/**
 * The claim of a solve with the improvement phase: the decoder names and prices its types as the launch would pick
 * them (engine/launch/filter.ts). Without the phase, claims keep Karpenter's naming (the exact path).
 */
export const CF_LAUNCH = 1;

// ---- status and failure codes ----
export const S_OK = 0;
export const S_BAD_INPUT = 1;
export const E_NO_TEMPLATES = 1;
export const E_FAILED = 2;
export const E_MIN_VALUES = 3;
/** Waits for reserved capacity other claims hold (Strict mode): not relaxed, no fallback to later templates. */
export const E_RESERVED = 4;

// ---- the integer-aware lower bound (solver-as/assembly/boundcg.ts, engine/bound/patterns.ts) ----
//
//   input block: BH_WORDS x i32 header, then the sections at the byte offsets it gives
//   +--------------------------------------------------------------+
//   | reqs     C x R f64   item requests per class                 |
//   | caps     X x R f64   node capacity per option                |
//   | prices   X f64       price per option (micro-dollars/h)      |
//   | counts   C i32       items per class                         |
//   | allowed  C x X u8    1 when class c may use option x         |
//   +--------------------------------------------------------------+
//   result: BR_WORDS f64 (status, bound, LP value, work, rounds)
export const BOUND_MAGIC = 0x4b544231;
export const BH_MAGIC = 0;
export const BH_VERSION = 1;
export const BH_R = 2;
export const BH_C = 3;
export const BH_X = 4;
/** Work budget, thousands of units. */
export const BH_WORK = 5;
export const BH_REQS = 6;
export const BH_CAPS = 7;
export const BH_PRICES = 8;
export const BH_COUNTS = 9;
export const BH_ALLOWED = 10;
export const BH_WORDS = 12;
export const BR_STATUS = 0;
/** Farley's bound on the configuration LP (micro-dollars/h): no plan costs less. */
export const BR_BOUND = 1;
/** The master LP's value at the end (an upper bound on the configuration LP unless proven optimal). */
export const BR_LP = 2;
export const BR_WORK = 3;
export const BR_ROUNDS = 4;
export const BR_WORDS = 6;
/** BR_STATUS: the LP was proven optimal (the bound is within the pricing tolerance of it); stopped by budget; failed. */
export const BS_OPTIMAL = 0;
export const BS_STOPPED = 1;
export const BS_FAILED = 2;
export const BS_BAD_INPUT = 3;
