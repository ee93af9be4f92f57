// The scheduling simulation disruption runs (docs/karpenter/disruption.md §2.7): "if these nodes were gone, where would
// their pods go?", answered by the provisioning solver over the rest of the cluster, with the consolidation
// destination rule, the uninitialized-node rule and "only non-pending pods count".
import type { Pod, Snapshot, StateNode } from '../domain/types.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import { provisionInput } from '../model/input.ts';
import type { ProvisionInput, ProvisionPlan, ProvisionSolver } from '../model/types.ts';
import { HOSTNAME_LABEL } from '../scheduling/labels.ts';
import { podKey } from '../scheduling/pods.ts';
import { movablePods, provisionablePending } from './pods.ts';

export interface SimContext {
  readonly solver: ProvisionSolver;
  readonly caches: ModelCaches;
  readonly wellKnownLabels?: ReadonlySet<string>;
  /** Set when a simulation's plan says `truncated` (the solver's wall-clock safety net fired). */
  readonly truncation?: Truncation;
}

/** Whether a wall-clock safety net fired during a call: a plan made then may depend on the machine's load. */
export interface Truncation {
  fired: boolean;
}

export interface Simulation {
  readonly input: ProvisionInput;
  readonly plan: ProvisionPlan;
  /** The candidates' pods that were simulated (currently reschedulable). */
  readonly moved: readonly Pod[];
  /** Errors of pods that were not pending before (these block a disruption), uid -> reason. */
  readonly errors: ReadonlyMap<string, string>;
  /** A candidate is already deleting or marked: the move is void. */
  readonly candidateDeleting: boolean;
  /**
   * The simulated pods by uid, made on first use: the repack runs many simulations of tens of thousands of pods
   * and reads none of them by uid (its units find a pod's node in podNodes), so a map per simulation was waste.
   */
  readonly pods: ReadonlyMap<string, Pod>;
}

/**
 * A volume's node affinity on kubernetes.io/hostname pins it to a node that is going away (a local PV);
 * like Karpenter's volume topology, the simulation ignores that term so the pod can move.
 */
function withoutHostnameVolumes(p: Pod): Pod {
  const alts = p.volumeRequirements;
  if (!alts?.some((alt) => alt.some((r) => r.key === HOSTNAME_LABEL))) return p;
  return { ...p, volumeRequirements: alts.map((alt) => alt.filter((r) => r.key !== HOSTNAME_LABEL)) };
}

/**
 * Existing nodes that may not receive pods moved off candidates: initialized nodes of a pool with a
 * non-zero consolidateAfter that saw a pod event (or initialized) less than consolidateAfter ago.
 */
function blockedDestinations(s: Snapshot, exclude: ReadonlySet<string>, caches: ModelCaches): Set<string> {
  const out = new Set<string>();
  for (const name of recentlyActive(s, caches)) if (!exclude.has(name)) out.add(name);
  return out;
}

// Which nodes are within their consolidateAfter is a function of the node list, the NodePools and the time:
// worked out once per snapshot node list, not over every node for each of the hundreds of simulations.
const RECENT = cacheSlot<
  readonly StateNode[],
  { readonly pools: Snapshot['nodePools']; readonly now: number; readonly names: readonly string[] }
>('recently active nodes');

function recentlyActive(s: Snapshot, caches: ModelCaches): readonly string[] {
  const hit = caches.get(RECENT, s.nodes);
  if (hit && hit.pools === s.nodePools && hit.now === s.now) return hit.names;
  const pools = new Map(s.nodePools.map((p) => [p.name, p]));
  const names: string[] = [];
  for (const n of s.nodes) {
    if (!n.initialized || n.nodePoolName === undefined) continue;
    const after = pools.get(n.nodePoolName)?.disruption.consolidateAfter;
    if (after === null || after === undefined || after <= 0) continue;
    const ref = n.lastPodEventTime ?? n.conditions.initializedAt;
    if (ref !== undefined && s.now - ref < after) names.push(n.name);
  }
  return caches.set(RECENT, s.nodes, { pools: s.nodePools, now: s.now, names }).names;
}

const DELETING = cacheSlot<readonly StateNode[], readonly StateNode[]>('deleting nodes');

/** The nodes already deleting or marked for deletion, once per (immutable) node list. */
const deletingNodes = (nodes: readonly StateNode[], caches: ModelCaches): readonly StateNode[] =>
  caches.memo(DELETING, nodes, () => nodes.filter((n) => n.markedForDeletion || n.deleting));

const PENDING = cacheSlot<readonly Pod[], readonly Pod[]>('provisionable pending pods');

/** provisionablePending, once per (immutable) pending list: every simulation of a call starts from it. */
const pendingOf = (s: Snapshot, caches: ModelCaches): readonly Pod[] =>
  caches.memo(PENDING, s.pendingPods, () => provisionablePending(s));

/** The nodes' movable pods, in node order (a simulation's moved pods run to tens of thousands). */
function podsOf(nodes: readonly StateNode[], s: Snapshot, caches: ModelCaches): Pod[] {
  const out: Pod[] = [];
  for (const n of nodes) for (const p of movablePods(n, s.pdbs, s.now, caches)) out.push(p);
  return out;
}

function uids(pods: readonly Pod[]): Set<string> {
  const out = new Set<string>();
  for (const p of pods) out.add(p.uid);
  return out;
}

// A disruption call simulates the same candidates many times: one marked copy per node object, instead
// of a fresh copy of thousands of nodes per simulation.
const MARKED = cacheSlot<StateNode, StateNode>('marked nodes');

const marked = (n: StateNode, caches: ModelCaches): StateNode =>
  caches.memo(MARKED, n, () => ({ ...n, markedForDeletion: true }));

/**
 * Simulates removing `candidates`; `consolidation` turns on the destination rule (not for drift), and
 * `avoid` adds nodes the moved pods may not land on (nodes a multi-step plan removes later).
 */
export async function simulate(
  s: Snapshot,
  candidates: readonly StateNode[],
  ctx: SimContext,
  consolidation: boolean,
  avoid?: ReadonlySet<string>,
): Promise<Simulation> {
  const names = new Set(candidates.map((c) => c.name));
  const candidateDeleting = candidates.some((c) => c.markedForDeletion || c.deleting);
  const nodes = s.nodes.map((n) => (names.has(n.name) ? marked(n, ctx.caches) : n));
  const pending = pendingOf(s, ctx.caches);
  const moved = podsOf(candidates, s, ctx.caches);
  const fromDeleting = podsOf(
    deletingNodes(s.nodes, ctx.caches).filter((n) => !names.has(n.name)),
    s,
    ctx.caches,
  );
  const all: Pod[] = [];
  for (const list of [pending, moved, fromDeleting]) for (const p of list) all.push(withoutHostnameVolumes(p));
  // DRA: the candidates are marked for deletion, so provisionInput frees what their moving pods hold and
  // leaves their slices out (engine/model/input.ts).
  const sim: Snapshot = { ...s, nodes };
  const input = provisionInput(sim, all, {
    caches: ctx.caches,
    ...(ctx.wellKnownLabels ? { wellKnownLabels: ctx.wellKnownLabels } : {}),
    ...(consolidation
      ? {
          consolidation: {
            blockedDestinations: new Set([...blockedDestinations(s, names, ctx.caches), ...(avoid ?? [])]),
            movedPods: uids(moved),
          },
        }
      : {}),
    // Disruption simulations may fall back from contended reserved capacity (docs/karpenter/disruption.md §2.7 step 4).
    reservedOfferingMode: 'Fallback',
  });
  const plan = await ctx.solver.solve(input);
  if (plan.truncated && ctx.truncation) ctx.truncation.fired = true;
  const errors = nonPendingErrors(s, plan, all, pendingUids(pending, ctx.caches), uids(fromDeleting), ctx.caches);
  let pods: Map<string, Pod> | undefined;
  return {
    input,
    plan,
    moved,
    errors,
    candidateDeleting,
    get pods() {
      if (!pods) {
        pods = new Map();
        for (const p of all) pods.set(p.uid, p);
      }
      return pods;
    },
  };
}

const PENDING_UIDS = cacheSlot<readonly Pod[], ReadonlySet<string>>('pending pod uids');

/** The uids of the provisionable pending pods, once per (memoised) pending list. */
const pendingUids = (pending: readonly Pod[], caches: ModelCaches): ReadonlySet<string> =>
  caches.memo(PENDING_UIDS, pending, () => uids(pending));

const POD_NODES = cacheSlot<readonly StateNode[], ReadonlyMap<string, string>>('pod nodes');

/**
 * uid -> the node a pod is bound to, over a snapshot's (immutable) node list, built once per list: every
 * simulation of a repack asks where its planned NodeClaims' pods came from (repackunits.ts).
 */
export function podNodes(nodes: readonly StateNode[], caches: ModelCaches): ReadonlyMap<string, string> {
  return caches.memo(POD_NODES, nodes, () => {
    const out = new Map<string, string>();
    for (const n of nodes) for (const p of n.pods) if (p.nodeName !== undefined) out.set(p.uid, p.nodeName);
    return out;
  });
}

const BY_NAME = cacheSlot<readonly StateNode[], ReadonlyMap<string, StateNode>>('nodes by name');

/** Name -> node over a snapshot's (immutable) node list, built once per list. */
const nodesByName = (nodes: readonly StateNode[], caches: ModelCaches): ReadonlyMap<string, StateNode> =>
  caches.memo(BY_NAME, nodes, () => new Map(nodes.map((n) => [n.name, n])));

/**
 * Errors of the simulated pods that were bound (moving off candidates or deleting nodes; `pending` holds the
 * others' uids): the solver's errors, placements on uninitialized nodes (except pods of deleting nodes),
 * and pods the plan leaves out. Every simulated pod is placed or has a solver error unless the plan left
 * some out, so placements are counted and only looked through when the count falls short.
 */
function nonPendingErrors(
  s: Snapshot,
  plan: ProvisionPlan,
  pods: readonly Pod[],
  pending: ReadonlySet<string>,
  fromDeleting: ReadonlySet<string>,
  caches: ModelCaches,
): Map<string, string> {
  const errors = new Map<string, string>();
  let accounted = 0;
  for (const e of [...plan.unschedulable, ...plan.ignored]) {
    accounted++;
    if (!pending.has(e.uid)) errors.set(e.uid, e.reason);
  }
  const byName = nodesByName(s.nodes, caches);
  for (const [name, uids] of plan.existing) {
    accounted += uids.length;
    const node = byName.get(name);
    if (!node || node.initialized) continue;
    for (const uid of uids) {
      if (pending.has(uid) || fromDeleting.has(uid)) continue;
      errors.set(uid, `would schedule against uninitialized nodeclaim/${node.nodeClaimName ?? ''}, node/${node.name}`);
    }
  }
  for (const c of plan.newNodeClaims) accounted += c.pods.length;
  if (accounted < pods.length) {
    const placed = new Set([...[...plan.existing.values()].flat(), ...plan.newNodeClaims.flatMap((c) => c.pods)]);
    for (const { uid } of pods)
      if (!pending.has(uid) && !placed.has(uid) && !errors.has(uid)) errors.set(uid, 'the solver did not place it');
  }
  return errors;
}

/** "ns/a => reason, ns/b => reason": Karpenter's scheduling-error summary. */
export function describeErrors(sim: Simulation, limit = 3): string {
  const parts: string[] = [];
  for (const [uid, reason] of sim.errors) {
    if (parts.length >= limit) break;
    const p = sim.pods.get(uid);
    parts.push(`${p ? podKey(p) : uid} => ${reason}`);
  }
  const more = sim.errors.size - parts.length;
  return parts.join(', ') + (more > 0 ? ` (and ${more} more)` : '');
}
