// The promises a disruption drill checks, watched over the whole run of a simulated cluster:
//
//   pdb     no pod covered by a PodDisruptionBudget starts terminating on a node that is being disrupted
//           (tainted karpenter.sh/disrupted or deleting) while that takes the budget below its
//           desiredHealthy. Deletions past a node's terminationGracePeriod deadline are allowed (spec
//           §5.3: they bypass PDBs on purpose), as are deletions the drill makes itself (scale-down).
//   budget  no NodeClaim starts a voluntary disruption (gets DisruptionReason=True) while its NodePool's
//           budget for that reason, at that moment, is already used up: nodes disrupting (DisruptionReason,
//           deleting, or not Ready) must stay within the minimum of the active budgets (spec §3.1). A NodeClaim
//           with no NodePool to take budgets from (no label, NodePool gone or invalid) is allowed none.
//   unbound no pod (outside kube-system, not a DaemonSet's) stays without a node longer than allowed.
//
// It listens to the simulated API server's store, so it sees every change in order and needs no timer:
//
//   const inv = watchInvariants(sim, { maxUnboundMs: 120_000 });
//   ... drive the drill ...
//   expect(inv.violations()).toEqual([]);
//   inv.stop();
import {
  budgetActive,
  budgetNodes,
  checkBudget,
  formatFieldError,
  NODEPOOL_LABEL,
  parseNodePool,
  type Budget,
  type DisruptionReason,
} from '../../engine/index.ts';
import type { Clock } from '../../controller/operator/clock.ts';
import { computePdbStatus, type KObject, type StoreEvent } from '../../sim/apiserver/index.ts';
import { budgetsFor, isPodReady } from '../../sim/apiserver/pdb.ts';
import type { SimCluster } from '../../sim/cluster/cluster.ts';

type ViolationKind = 'pdb' | 'budget' | 'unbound';

interface Violation {
  /** Simulated ms since the epoch. */
  readonly at: number;
  readonly kind: ViolationKind;
  readonly message: string;
}

/** A voluntary disruption the checker saw start: a NodeClaim that got DisruptionReason=True. */
interface DisruptionStart {
  readonly at: number;
  readonly nodeClaim: string;
  readonly nodePool: string;
  readonly reason: string;
  /** Nodes of the pool disrupting at that moment, this one included. */
  readonly disrupting: number;
  readonly allowed: number;
}

interface InvariantOptions {
  /** Longest a pod may stay unbound, from its creation (default 3 min). */
  readonly maxUnboundMs?: number;
  /** Pod deletions the drill makes itself and that are not a disruption (default: none exempt). */
  readonly exemptPod?: (pod: KObject) => boolean;
}

export interface InvariantChecker {
  /** Every violation so far, including pods unbound too long right now. */
  violations(): Violation[];
  /** Voluntary disruptions seen starting, in order. */
  disruptions(): readonly DisruptionStart[];
  /** The longest any pod was (or still is) unbound, ms. */
  longestUnboundMs(): number;
  stop(): void;
}

const DISRUPTED_TAINT_KEY = 'karpenter.sh/disrupted';
const TERMINATION_TIMESTAMP = 'karpenter.sh/nodeclaim-termination-timestamp';

type Condition = { type: string; status?: string; reason?: string };
const conditionOf = (o: KObject | undefined, type: string): Condition | undefined =>
  ((o?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
const nodeNameOf = (p: KObject): string | undefined => (p.spec as { nodeName?: string } | undefined)?.nodeName;
const providerIdOf = (o: KObject): string | undefined =>
  (o.status as { providerID?: string } | undefined)?.providerID ??
  (o.spec as { providerID?: string } | undefined)?.providerID;
const taintsOf = (n: KObject): Array<{ key: string; effect: string }> =>
  (n.spec as { taints?: Array<{ key: string; effect: string }> } | undefined)?.taints ?? [];
const isDaemonPod = (p: KObject): boolean => (p.metadata.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet');
const podKey = (p: KObject): string => `${p.metadata.namespace}/${p.metadata.name}`;

/** The fewest disruptions any active budget of the pool allows for the reason (spec §3.1; invalid -> 0). */
export function allowedByBudgets(budgets: readonly Budget[], reason: string, numNodes: number, now: number): number {
  if (!budgets.length) return Number.MAX_SAFE_INTEGER;
  let allowed = Number.MAX_SAFE_INTEGER;
  for (const b of budgets) {
    const check = checkBudget(b);
    if (!check.ok) return 0;
    if (b.reasons?.length && !b.reasons.includes(reason as DisruptionReason)) continue;
    if (budgetActive(b, now, check.schedule)) allowed = Math.min(allowed, budgetNodes(b, numNodes));
  }
  return allowed;
}

type Store = SimCluster['store'];

/** What the checker keeps between store events. */
interface Watch {
  readonly store: Store;
  readonly exemptPod: InvariantOptions['exemptPod'];
  readonly maxUnbound: number;
  readonly found: Violation[];
  readonly starts: DisruptionStart[];
  /** pod uid -> when it was created unbound (only while unbound). */
  readonly unboundSince: Map<string, { since: number; key: string }>;
  readonly reportedUnbound: Set<string>;
  longest: number;
}

function nodeOfClaim(store: Store, claim: KObject): KObject | undefined {
  const pid = providerIdOf(claim);
  return pid ? store.list('nodes').find((n) => providerIdOf(n) === pid) : undefined;
}

/** The pool's nodes that count for its budgets (initialized, not terminating), and how many of them are disrupting. */
function poolDisruption(store: Store, poolName: string): { numNodes: number; disrupting: number } {
  let numNodes = 0;
  let disrupting = 0;
  for (const c of store.list('nodeclaims.karpenter.sh')) {
    if (c.metadata.labels?.[NODEPOOL_LABEL] !== poolName) continue;
    if (conditionOf(c, 'Initialized')?.status !== 'True' || conditionOf(c, 'InstanceTerminating')?.status === 'True')
      continue;
    numNodes++;
    const node = nodeOfClaim(store, c);
    const ready = conditionOf(node, 'Ready')?.status === 'True';
    if (
      c.metadata.deletionTimestamp ||
      conditionOf(c, 'DisruptionReason')?.status === 'True' ||
      !ready ||
      node?.metadata.deletionTimestamp
    )
      disrupting++;
  }
  return { numNodes, disrupting };
}

/**
 * The budgets that govern a NodeClaim's voluntary disruptions, or why it has none to check against: no NodePool
 * label, a NodePool that does not exist (a legitimate state while a NodePool is being deleted and its NodeClaims
 * go with it), or a NodePool that does not parse.
 */
function budgetsOfClaim(
  store: Store,
  claim: KObject,
): { ok: true; pool: string; budgets: readonly Budget[] } | { ok: false; pool: string; why: string } {
  const pool = claim.metadata.labels?.[NODEPOOL_LABEL];
  if (!pool) return { ok: false, pool: '', why: `it has no ${NODEPOOL_LABEL} label` };
  const obj = store.get('nodepools.karpenter.sh', '', pool);
  if (!obj) return { ok: false, pool, why: `its nodepool ${pool} does not exist` };
  const parsed = parseNodePool(obj);
  if (!parsed.ok)
    return {
      ok: false,
      pool,
      why: `its nodepool ${pool} is invalid (${parsed.errors.map(formatFieldError).join('; ')})`,
    };
  return { ok: true, pool, budgets: parsed.value.disruption.budgets };
}

/**
 * A NodeClaim starts a voluntary disruption: was its pool's budget for the reason already used up? A claim without
 * a NodePool to take budgets from counts as allowed 0 (budgets fail closed) and is reported as such: the controller
 * never makes such a node a candidate ("nodepool not found"), so starting one is a broken promise, not a skip.
 */
function budgetAtStart(w: Watch, claim: KObject, reason: string, now: number): void {
  const found = budgetsOfClaim(w.store, claim);
  const { numNodes, disrupting } = poolDisruption(w.store, found.pool);
  const allowed = found.ok ? allowedByBudgets(found.budgets, reason, numNodes, now) : 0;
  const name = claim.metadata.name!;
  w.starts.push({ at: now, nodeClaim: name, nodePool: found.pool, reason, disrupting, allowed });
  if (!found.ok) {
    w.found.push({
      at: now,
      kind: 'budget',
      message: `nodeclaim ${name} started a ${reason} disruption, but ${found.why}: no budget allows it`,
    });
  } else if (disrupting > allowed) {
    w.found.push({
      at: now,
      kind: 'budget',
      message: `nodeclaim ${name} started a ${reason} disruption with ${disrupting} node(s) of nodepool ${found.pool} disrupting; its budgets allow ${allowed} (of ${numNodes} nodes)`,
    });
  }
}

/** The node the pod is on, when that node is being disrupted (deleting, or tainted karpenter.sh/disrupted). */
function disruptedNodeOf(store: Store, pod: KObject): KObject | undefined {
  const nodeName = nodeNameOf(pod);
  const node = nodeName ? store.get('nodes', '', nodeName) : undefined;
  if (!node) return undefined;
  const disrupted =
    node.metadata.deletionTimestamp !== undefined || taintsOf(node).some((t) => t.key === DISRUPTED_TAINT_KEY);
  return disrupted ? node : undefined;
}

/** Whether the node's termination deadline leaves the pod less than its grace period (spec §5.3: PDBs bypassed). */
function pastDeadline(store: Store, node: KObject, pod: KObject, now: number): boolean {
  const claim = store.list('nodeclaims.karpenter.sh').find((c) => providerIdOf(c) === providerIdOf(node));
  const deadline = claim?.metadata.annotations?.[TERMINATION_TIMESTAMP];
  const grace =
    ((pod.spec as { terminationGracePeriodSeconds?: number } | undefined)?.terminationGracePeriodSeconds ?? 30) * 1000;
  return Boolean(deadline && now >= Date.parse(deadline) - grace);
}

/** A pod starts terminating (or is deleted outright): was a PDB broken by a disruption? */
function checkPdb(w: Watch, before: KObject, now: number): void {
  if (!isPodReady(before) || w.exemptPod?.(before)) return;
  const node = disruptedNodeOf(w.store, before);
  if (!node || pastDeadline(w.store, node, before, now)) return;
  for (const pdb of budgetsFor(w.store, before)) {
    const status = computePdbStatus(w.store, pdb, now);
    if (status.currentHealthy < status.desiredHealthy) {
      w.found.push({
        at: now,
        kind: 'pdb',
        message: `pod ${podKey(before)} on disrupted node ${nodeNameOf(before)} went while PodDisruptionBudget ${pdb.metadata.namespace}/${pdb.metadata.name} had ${status.currentHealthy} healthy of ${status.desiredHealthy} desired`,
      });
    }
  }
}

function recordUnbound(w: Watch, uid: string, u: { since: number; key: string }, now: number): void {
  if (w.reportedUnbound.has(uid)) return;
  w.reportedUnbound.add(uid);
  w.found.push({
    at: now,
    kind: 'unbound',
    message: `pod ${u.key} was without a node for ${Math.round((now - u.since) / 1000)} s (allowed ${w.maxUnbound / 1000} s)`,
  });
}

/** A pod waiting for a node got one or is gone: how long it waited, and whether that was too long. */
function unboundEnded(w: Watch, uid: string, gone: boolean, now: number): void {
  const u = w.unboundSince.get(uid);
  if (!u) return;
  w.longest = Math.max(w.longest, now - u.since);
  if (now - u.since > w.maxUnbound && !gone) recordUnbound(w, uid, u, now);
  w.unboundSince.delete(uid);
}

function podEvent(w: Watch, e: StoreEvent, now: number): void {
  const pod = e.object;
  const uid = pod.metadata.uid!;
  if (pod.metadata.namespace === 'kube-system' || isDaemonPod(pod)) return;
  if (e.type === 'ADDED' && !nodeNameOf(pod)) {
    const created = pod.metadata.creationTimestamp ? Date.parse(pod.metadata.creationTimestamp) : now;
    w.unboundSince.set(uid, { since: created, key: podKey(pod) });
  }
  const gone = e.type === 'DELETED';
  const startedTerminating =
    e.type === 'MODIFIED' &&
    pod.metadata.deletionTimestamp !== undefined &&
    e.old?.metadata.deletionTimestamp === undefined;
  if ((gone && !e.old?.metadata.deletionTimestamp && !pod.metadata.deletionTimestamp) || startedTerminating)
    checkPdb(w, e.old ?? pod, now);
  if (gone || nodeNameOf(pod)) unboundEnded(w, uid, gone, now);
}

function claimEvent(w: Watch, e: StoreEvent, now: number): void {
  if (e.type !== 'MODIFIED') return;
  const cond = conditionOf(e.object, 'DisruptionReason');
  if (cond?.status !== 'True' || conditionOf(e.old, 'DisruptionReason')?.status === 'True') return;
  budgetAtStart(w, e.object, cond.reason ?? '', now);
}

/** Pods already waiting when the watch starts count from their creation. */
function seedUnbound(w: Watch, clock: Clock): void {
  for (const p of w.store.list('pods')) {
    if (!nodeNameOf(p) && p.metadata.namespace !== 'kube-system' && !isDaemonPod(p) && !p.metadata.deletionTimestamp) {
      w.unboundSince.set(p.metadata.uid!, {
        since: p.metadata.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : clock.now(),
        key: podKey(p),
      });
    }
  }
}

export function watchInvariants(
  sim: { readonly cluster: SimCluster; readonly clock: Clock },
  opts: InvariantOptions = {},
): InvariantChecker {
  const w: Watch = {
    store: sim.cluster.store,
    exemptPod: opts.exemptPod,
    maxUnbound: opts.maxUnboundMs ?? 180_000,
    found: [],
    starts: [],
    unboundSince: new Map(),
    reportedUnbound: new Set(),
    longest: 0,
  };
  const unsubscribe = w.store.subscribe((e) => {
    const now = sim.clock.now();
    if (e.resource === 'pods') podEvent(w, e, now);
    else if (e.resource === 'nodeclaims.karpenter.sh') claimEvent(w, e, now);
  });
  seedUnbound(w, sim.clock);
  return {
    violations() {
      const now = sim.clock.now();
      for (const [uid, u] of w.unboundSince) if (now - u.since > w.maxUnbound) recordUnbound(w, uid, u, now);
      return [...w.found].sort((a, b) => a.at - b.at);
    },
    disruptions: () => w.starts,
    longestUnboundMs() {
      const now = sim.clock.now();
      return Math.max(w.longest, ...[...w.unboundSince.values()].map((u) => now - u.since));
    },
    stop: unsubscribe,
  };
}
