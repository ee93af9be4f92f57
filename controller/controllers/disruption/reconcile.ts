// disruption: the singleton loop (spec/disruption.md §1.2). Every 10 s, once cluster state is synced:
// 1. a command waiting out its 15 s validation delay is re-validated against fresh state and started;
// 2. otherwise each method in order (today: emptiness) computes at most one command from the current
//    candidates; the first that yields one wins and waits for validation;
// 3. a method that found nothing at this consolidation state is skipped until the state changes.
import type { DisruptionReason, InstanceType, NodePool } from '../../../engine/index.ts';
import { targetOf } from '../../operator/events.ts';
import { requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import type { Controller } from '../../operator/runtime.ts';
import { provisionable } from '../../state/snapshot.ts';
import type { ControllerContext } from '../context.ts';
import { budgetMap } from './budgets.ts';
import { buildCandidates } from './candidates.ts';
import { emptiness } from './emptiness.ts';
import { execute } from './queue.ts';
import type { Command, DisruptionMethod, MethodInput } from './types.ts';

export const POLL_MS = 10_000;
export const VALIDATION_DELAY_MS = 15_000;

export interface DisruptionLoop extends Controller {
  /** The command waiting for validation, if any (for tests and the simulator). */
  pending(): Command | undefined;
}

export function newDisruption(ctx: ControllerContext, methods: readonly DisruptionMethod[] = [emptiness]): DisruptionLoop {
  const consolidatedAt = new Map<DisruptionMethod, number>();
  let pending: { command: Command; method: DisruptionMethod; at: number } | undefined;

  async function input(): Promise<MethodInput> {
    const now = ctx.clock.now();
    const pools = new Map<string, NodePool>();
    for (const e of ctx.cluster.nodePools()) if (e.pool && e.pool.replicas === undefined) pools.set(e.pool.name, e.pool);
    const instanceTypes = new Map<string, readonly InstanceType[]>();
    await Promise.all([...pools.values()].filter(provisionable).map(async (p) => instanceTypes.set(p.name, await ctx.cloudProvider.getInstanceTypes(p).catch(() => []))));
    const nodes = ctx.cluster.stateNodes();
    const inFlight = new Set(pending?.command.candidates.map((c) => c.providerId) ?? []);
    const candidates = buildCandidates({ now, nodes, pools, instanceTypes, pdbs: ctx.cluster.workloads.pdbList(), inFlight });
    const budgets = (reason: DisruptionReason) => budgetMap([...pools.values()], nodes, reason, now, (pool, allowed, numNodes) => {
      ctx.metrics.allowedDisruptions.set({ nodepool: pool, reason: reason.toLowerCase() }, Math.min(allowed, Number.MAX_SAFE_INTEGER));
      const entry = ctx.cluster.nodePool(pool);
      if (allowed === 0 && entry && numNodes > 0) {
        ctx.events.publish({ involved: targetOf(entry.obj, 'NodePool'), type: 'Normal', reason: 'DisruptionBlocked', message: `No allowed disruptions for disruption reason ${reason} due to blocking budget`, dedupeTimeoutMs: 60_000 });
      }
    });
    return { now, candidates, budgets };
  }

  async function reconcile(): Promise<ReconcileResult> {
    if (!ctx.cluster.synced()) return requeueAfter(1_000);
    const now = ctx.clock.now();
    if (pending) {
      if (now < pending.at) return requeueAfter(pending.at - now);
      const { command, method } = pending;
      pending = undefined;
      const valid = await method.validate(await input(), command);
      if (valid) await execute(ctx, valid);
      else ctx.log.info({ reason: command.reason }, 'disruption command no longer valid; dropped');
      return requeueAfter(1_000);
    }
    for (const method of methods) {
      const state = ctx.cluster.consolidationState();
      if (method.skipWhenConsolidated && consolidatedAt.get(method) === state) continue;
      const inp = await input();
      ctx.metrics.eligibleNodes.set({ reason: method.reason.toLowerCase() }, inp.candidates.length);
      const { command, constrained } = await method.compute(inp);
      if (!command) {
        if (method.skipWhenConsolidated && !constrained) consolidatedAt.set(method, state);
        continue;
      }
      pending = { command, method, at: now + VALIDATION_DELAY_MS };
      return requeueAfter(VALIDATION_DELAY_MS);
    }
    return requeueAfter(POLL_MS);
  }

  return {
    name: 'disruption',
    concurrency: 1,
    reconcile,
    pending: () => pending?.command,
    register(enqueue) {
      enqueue('');
      return () => {};
    },
  };
}
