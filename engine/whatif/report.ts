// The report's data model from the plan: per-node rows (before -> after), moves in execution order, costs.
// Pure bookkeeping over what run.ts computed; rendering lives in cli/whatif.
import { CPU, MEMORY } from '../domain/resources.ts';
import type { InstanceType, Pod, StateNode } from '../domain/types.ts';
import { podKey } from '../scheduling/pods.ts';
import type { ProvisionPlan } from '../model/types.ts';
import type { ConsolidationCommand } from './consolidation.ts';
import { nodePrice } from './prices.ts';
import { requested, type VirtualNode } from './state.ts';
import type { Move, NodeRow, ReportPodMove } from './types.ts';

export interface Ledger {
  readonly catalog: ReadonlyMap<string, InstanceType>;
  readonly podsByUid: ReadonlyMap<string, Pod>;
  readonly warnings: string[];
}

function usageOf(node: StateNode, pods: readonly Pod[]): Pick<NodeRow, 'cpu' | 'memory' | 'pods'> {
  const r = requested({ ...node, pods });
  const active = pods.filter(
    (p) => p.phase !== 'Succeeded' && p.phase !== 'Failed' && p.deletionTimestamp === undefined,
  );
  return {
    cpu: { requested: r[CPU] ?? 0, allocatable: node.allocatable[CPU] ?? 0 },
    memory: { requested: r[MEMORY] ?? 0, allocatable: node.allocatable[MEMORY] ?? 0 },
    pods: active.length,
  };
}

/** A row for a node of the input, with the pods it holds after the plan. */
export function existingRow(node: StateNode, fate: 'kept' | 'removed', podsAfter: readonly Pod[], l: Ledger): NodeRow {
  const price = nodePrice(node, l.catalog);
  if (price.note) l.warnings.push(price.note);
  return {
    name: node.name,
    fate,
    ...(node.nodePoolName ? { nodePool: node.nodePoolName } : {}),
    ...(price.instanceType ? { instanceType: price.instanceType } : {}),
    ...(price.zone ? { zone: price.zone } : {}),
    ...(price.capacityType ? { capacityType: price.capacityType } : {}),
    pricePerHour: price.price,
    priceKnown: price.known,
    managed: node.managed,
    ...usageOf(node, podsAfter),
  };
}

/** A row for a node the plan launches (requests include the daemonsets that would run there). */
export function newRow(v: VirtualNode, podsAfter: readonly Pod[]): NodeRow {
  const daemonOverhead = Math.max(0, (v.claim.requests['pods'] ?? 0) - v.claim.pods.length);
  const u = usageOf(v.node, podsAfter);
  const share = (k: string): number =>
    (v.claim.requests[k] ?? 0) -
    v.claim.pods.reduce((a, uid) => a + (v.node.pods.find((p) => p.uid === uid)?.requests[k] ?? 0), 0);
  return {
    name: v.name,
    fate: 'new',
    nodePool: v.claim.nodePool,
    ...(v.instanceType ? { instanceType: v.instanceType.name } : {}),
    ...(v.zone ? { zone: v.zone } : {}),
    ...(v.capacityType ? { capacityType: v.capacityType } : {}),
    pricePerHour: v.claim.price,
    priceKnown: Number.isFinite(v.claim.price) && v.claim.price > 0,
    managed: true,
    cpu: { ...u.cpu, requested: u.cpu.requested + Math.max(0, share(CPU)) },
    memory: { ...u.memory, requested: u.memory.requested + Math.max(0, share(MEMORY)) },
    pods: u.pods + daemonOverhead,
  };
}

const key = (l: Ledger, uid: string): string => {
  const p = l.podsByUid.get(uid);
  return p ? podKey(p) : uid;
};

/** The provisioning step: pending pods onto existing nodes and new nodes. */
export function launchMove(plan: ProvisionPlan, virtual: readonly VirtualNode[], l: Ledger): Move | undefined {
  const pods: ReportPodMove[] = [];
  for (const [node, uids] of plan.existing) for (const u of uids) pods.push({ pod: key(l, u), from: null, to: node });
  for (const v of virtual) for (const u of v.claim.pods) pods.push({ pod: key(l, u), from: null, to: v.name });
  if (pods.length === 0 && virtual.length === 0) return undefined;
  return {
    step: 0,
    kind: 'launch',
    remove: [],
    add: virtual.map((v) => v.name),
    pods,
    savingsPerHour: -virtual.reduce((a, v) => a + v.claim.price, 0),
    reason: `${pods.length} pending pod(s) placed: ${virtual.length} new node(s), ${pods.length - virtual.reduce((a, v) => a + v.claim.pods.length, 0)} onto existing nodes`,
  };
}

/** One consolidation command as a move: only the pods on its candidates move now. */
export function commandMove(
  step: number,
  c: ConsolidationCommand,
  names: readonly string[],
  homeOf: (uid: string) => string | undefined,
  l: Ledger,
): Move {
  const leaving = new Set(c.candidates);
  const pods: ReportPodMove[] = [];
  const moves = (u: string): boolean => leaving.has(homeOf(u) ?? '');
  c.replacements.forEach((r, i) =>
    r.pods.filter(moves).forEach((u) => pods.push({ pod: key(l, u), from: homeOf(u) ?? null, to: names[i] ?? null })),
  );
  for (const [node, uids] of c.onExisting ?? [])
    for (const u of uids.filter(moves)) pods.push({ pod: key(l, u), from: homeOf(u) ?? null, to: node });
  const unknown = c.podsMoved - pods.length;
  return {
    step,
    kind: c.kind,
    remove: c.candidates,
    add: names,
    pods,
    savingsPerHour: c.savingsPerHour,
    reason: unknown > 0 ? `${c.reason} (${unknown} more pod(s) move to nodes the planner did not name)` : c.reason,
  };
}

/** Price notes repeat per node; keep the first few and count the rest. */
export function trimWarnings(all: readonly string[], max = 10): string[] {
  const unique = [...new Set(all)];
  return unique.length <= max ? unique : [...unique.slice(0, max), `... and ${unique.length - max} more like these`];
}
