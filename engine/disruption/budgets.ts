// Disruption budgets (docs/karpenter/disruption.md §3): how many nodes of a NodePool may be disrupted for a reason now.
// A budget is a count or a percentage (rounded up), optionally limited to reasons and to a cron window in
// UTC; the pool's allowance is the minimum over its active budgets, minus nodes already disrupting. Any
// invalid budget closes the pool (0) for every reason; a pool without budgets is unlimited.
import type { Budget, DisruptionReason, NodePool, Snapshot } from '../domain/types.ts';
import { nextAfter, parseCron, scheduleActive, type CronSchedule } from './cron.ts';
import type { Explanation } from './types.ts';
import { explanation, utcTime } from './words.ts';

export const MAX_INT32 = 2_147_483_647;

const NODES_PATTERN = /^((100|[0-9]{1,2})%|[0-9]+)$/;

type BudgetCheck =
  | { readonly ok: true; readonly schedule?: CronSchedule }
  | { readonly ok: false; readonly message: string };

/** Checks one budget's nodes value and schedule/duration pair. */
export function checkBudget(b: Budget): BudgetCheck {
  if (!NODES_PATTERN.test(b.nodes))
    return { ok: false, message: `nodes "${b.nodes}" is neither a count nor a percentage 0-100%` };
  if ((b.schedule === undefined) !== (b.duration === undefined))
    return { ok: false, message: 'schedule and duration must be set together' };
  if (b.schedule === undefined) return { ok: true };
  const c = parseCron(b.schedule);
  if (!c.ok) return { ok: false, message: `schedule "${b.schedule}": ${c.message}` };
  return { ok: true, schedule: c.schedule };
}

/** The budget's node count for a pool of `numNodes` nodes (percentages round up, like PDB maxUnavailable). */
export function budgetNodes(b: Budget, numNodes: number): number {
  if (b.nodes.endsWith('%')) return Math.ceil((Number(b.nodes.slice(0, -1)) * numNodes) / 100);
  return Number(b.nodes);
}

function appliesTo(b: Budget, reason: DisruptionReason): boolean {
  return b.reasons === undefined || b.reasons.length === 0 || b.reasons.includes(reason);
}

/** Whether a (valid) budget is active at `now`: no schedule = always; else a hit within the last duration. */
export function budgetActive(b: Budget, now: number, schedule?: CronSchedule): boolean {
  if (b.schedule === undefined || b.duration === undefined) return true;
  return scheduleActive(schedule ?? b.schedule, b.duration, now);
}

/**
 * When the active window containing `now` ends (overlapping windows chain), or undefined for a budget
 * without a schedule. Gives up after `maxHits` chained hits (a window that never closes) and returns null.
 */
export function windowEnd(b: Budget, now: number, maxHits = 20_000): number | null | undefined {
  if (b.schedule === undefined || b.duration === undefined) return undefined;
  const c = parseCron(b.schedule);
  if (!c.ok) return undefined;
  let hit = nextAfter(c.schedule, now - b.duration);
  if (hit === null || hit > now) return undefined;
  for (let i = 0; i < maxHits; i++) {
    const next = nextAfter(c.schedule, hit);
    if (next === null || next > hit + b.duration) return hit + b.duration;
    hit = next;
  }
  return null;
}

export interface PoolBudget {
  readonly nodePool: string;
  readonly reason: DisruptionReason;
  /** Managed, initialized, not instance-terminating nodes of the pool. */
  readonly numNodes: number;
  /** Of those, nodes not Ready or marked/deleting: they consume the budget. */
  readonly disrupting: number;
  /** Minimum over the active budgets for the reason, before subtracting `disrupting`. */
  readonly allowed: number;
  /** max(allowed − disrupting, 0): what a method may still take. */
  readonly available: number;
  /** The budget that gives `allowed` (index into the pool's budgets), when one does. */
  readonly limiting?: { readonly index: number; readonly budget: Budget };
  /** Why the pool is closed because a budget is invalid. */
  readonly invalid?: string;
}

function nodeCounts(s: Snapshot): Map<string, { num: number; disrupting: number }> {
  const out = new Map<string, { num: number; disrupting: number }>();
  for (const n of s.nodes) {
    if (!n.hasNodeClaim || !n.initialized || n.instanceTerminating) continue;
    const pool = n.labels['karpenter.sh/nodepool'] ?? n.nodePoolName;
    if (pool === undefined) continue;
    const c = out.get(pool) ?? { num: 0, disrupting: 0 };
    c.num++;
    if (!n.ready || n.markedForDeletion || n.deleting) c.disrupting++;
    out.set(pool, c);
  }
  return out;
}

export function poolBudget(
  pool: NodePool,
  reason: DisruptionReason,
  numNodes: number,
  disrupting: number,
  now: number,
): PoolBudget {
  const base = { nodePool: pool.name, reason, numNodes, disrupting };
  const checks = pool.disruption.budgets.map(checkBudget);
  const bad = checks.findIndex((c) => !c.ok);
  if (bad >= 0) {
    const c = checks[bad] as { ok: false; message: string };
    return { ...base, allowed: 0, available: 0, invalid: `budget ${bad}: ${c.message}` };
  }
  let allowed = MAX_INT32;
  let limiting: PoolBudget['limiting'];
  pool.disruption.budgets.forEach((b, index) => {
    if (!appliesTo(b, reason)) return;
    const sched = (checks[index] as { ok: true; schedule?: CronSchedule }).schedule;
    const value = budgetActive(b, now, sched) ? budgetNodes(b, numNodes) : MAX_INT32;
    if (value < allowed) {
      allowed = value;
      limiting = { index, budget: b };
    }
  });
  return { ...base, allowed, available: Math.max(allowed - disrupting, 0), ...(limiting ? { limiting } : {}) };
}

/** Allowed disruptions per NodePool for the reason (§3.1). */
export function budgetMapping(s: Snapshot, reason: DisruptionReason): Map<string, PoolBudget> {
  const counts = nodeCounts(s);
  const out = new Map<string, PoolBudget>();
  for (const pool of s.nodePools) {
    const c = counts.get(pool.name) ?? { num: 0, disrupting: 0 };
    out.set(pool.name, poolBudget(pool, reason, c.num, c.disrupting, s.now));
  }
  return out;
}

/**
 * Why a pool's budget keeps a node: "budget for Underutilized allows 0 of 10 nodes until 10:00 UTC",
 * with the end of the blocking window when the limiting budget is scheduled, the nodes already disrupting,
 * or (when `used` > 0) the share this loop already took.
 */
export function budgetExplanation(node: string, pb: PoolBudget, now: number, used = 0): Explanation {
  const data: Record<string, unknown> = {
    nodePool: pb.nodePool,
    reason: pb.reason,
    allowed: pb.allowed,
    disrupting: pb.disrupting,
    nodes: pb.numNodes,
  };
  if (pb.invalid) {
    return explanation(
      node,
      'budget',
      `nodepool ${pb.nodePool} has an invalid budget (${pb.invalid}); disruption is closed until it is fixed`,
      data,
    );
  }
  let msg = `budget for ${pb.reason} allows ${Math.min(pb.allowed, pb.numNodes)} of ${pb.numNodes} nodes`;
  if (pb.disrupting > 0) msg += `, ${pb.disrupting} already disrupting`;
  if (used > 0) msg += `, ${used} already picked this loop`;
  const limiting = pb.limiting?.budget;
  const end = limiting ? windowEnd(limiting, now) : undefined;
  if (end) {
    msg += ` until ${utcTime(end, now)}`;
    data['until'] = end;
  }
  return explanation(node, 'budget', msg, data);
}
