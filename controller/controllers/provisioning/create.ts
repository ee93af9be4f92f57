// Creating a plan's NodeClaims. Karpenter creates them in parallel (pkg/controllers/provisioning/provisioner.go,
// CreateNodeClaims: one worker per NodeClaim; the Kubernetes client's rate limit is what bounds the requests).
// Here up to CONCURRENCY creates are in flight at once, started in plan order: a thousand-NodeClaim plan is not
// a thousand round trips one after another, and the first NodeClaim goes out as soon as the plan is back.
//
// NodePool limits are re-checked right before each create against the pool's usage plus what this plan has
// already reserved (docs/karpenter/scheduling.md §2.13): a NodeClaim reserves its worst case when its create
// starts, in plan order, and gives it back if the create fails, so which NodeClaims a limit stops does not
// depend on how the requests interleave.
import type { InstanceType, NewNodeClaimPlan, NodePool, Pod, ProvisionPlan, Snapshot } from '../../../engine/index.ts';
import type { NodePoolEntry } from '../../state/changes.ts';
import { instanceTypeList } from '../../operator/logger.ts';
import type { ControllerContext } from '../context.ts';
import { add, exceededLimit, poolUsage, worstCaseCapacity } from './limits.ts';
import { failedSchedulingEvent } from './failed.ts';
import { nominatedEvent } from './nominated.ts';
import { nodeClaimFor } from './nodeclaim.ts';

/** Creates in flight at once. */
export const CONCURRENCY = 16;

type Usage = Record<string, number>;

/** What each pool's NodeClaims of this plan have reserved against its limits (pools with limits only). */
class Reservations {
  private readonly usage = new Map<string, Usage>();
  private readonly types = new Map<string, ReadonlyMap<string, InstanceType>>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly snapshot: Snapshot,
  ) {}

  /** Reserves the NodeClaim's worst case; the limit it would exceed instead, as a sentence. */
  reserve(nc: NewNodeClaimPlan, pool: string, limits: Usage): { worst?: Usage; exceeded?: string } {
    if (!Object.keys(limits).length) return {};
    let types = this.types.get(pool);
    if (!types)
      this.types.set(pool, (types = new Map((this.snapshot.instanceTypes.get(pool) ?? []).map((t) => [t.name, t]))));
    const worst = worstCaseCapacity(nc, types);
    const usage = add(this.usage.get(pool) ?? poolUsage(this.ctx.cluster.stateNodes(), pool), worst);
    const exceeded = exceededLimit(pool, limits, usage);
    if (exceeded) return { exceeded };
    this.usage.set(pool, usage);
    return { worst };
  }

  /** Gives a failed create's reservation back. */
  release(pool: string, worst: Usage | undefined): void {
    const usage = this.usage.get(pool);
    if (!worst || !usage) return;
    const out: Usage = { ...usage };
    for (const [k, v] of Object.entries(worst)) out[k] = (out[k] ?? 0) - v;
    this.usage.set(pool, out);
  }
}

/** Runs `fn` over `items` in order, at most `limit` at once; resolves when all have settled. */
async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** FailedScheduling on each pod of a NodeClaim a limit stopped. */
function failPods(ctx: ControllerContext, nc: NewNodeClaimPlan, pods: ReadonlyMap<string, Pod>, reason: string): void {
  ctx.events.publish(
    ...nc.pods.flatMap((uid) => {
      const p = pods.get(uid);
      return p ? [failedSchedulingEvent(p, reason)] : [];
    }),
  );
}

/** One NodeClaim: create it, write it into cluster state, count it, log it, nominate its pods. */
async function createOne(
  ctx: ControllerContext,
  nc: NewNodeClaimPlan,
  entry: NodePoolEntry & { readonly pool: NodePool },
  pods: ReadonlyMap<string, Pod>,
): Promise<void> {
  const pool = entry.pool;
  const created = await ctx.kube.create('NodeClaim', nodeClaimFor(nc, pool, entry.obj));
  ctx.cluster.applyNodeClaim(created);
  ctx.metrics.nodeClaimsCreated.inc({
    reason: 'provisioned',
    nodepool: pool.name,
    min_values_relaxed: String(nc.minValuesRelaxed ?? false),
  });
  ctx.log.info(
    {
      nodepool: pool.name,
      nodeclaim: created.metadata.name,
      requests: (created.spec?.['resources'] as { requests?: unknown } | undefined)?.requests,
      instanceTypes: instanceTypeList(nc.instanceTypes.map((o) => o.name)),
    },
    'created nodeclaim',
  );
  ctx.events.publish(
    ...nc.pods.flatMap((uid) => {
      const p = pods.get(uid);
      return p ? [nominatedEvent(p, { nodeClaim: created.metadata.name })] : [];
    }),
  );
}

/** Creates the plan's NodeClaims (see the top of this file); throws after all settled if any create failed. */
export async function createNodeClaims(
  ctx: ControllerContext,
  snapshot: Snapshot,
  plan: ProvisionPlan,
  pods: ReadonlyMap<string, Pod>,
  onFirstCreated?: () => void,
): Promise<void> {
  const reservations = new Reservations(ctx, snapshot);
  let first = onFirstCreated;
  const errors: unknown[] = [];
  await inParallel(plan.newNodeClaims, CONCURRENCY, async (nc) => {
    const entry = ctx.cluster.nodePool(nc.nodePool);
    const pool = entry?.pool;
    if (!entry || !pool) return;
    const { worst, exceeded } = reservations.reserve(nc, pool.name, pool.limits);
    if (exceeded) return failPods(ctx, nc, pods, exceeded);
    try {
      await createOne(ctx, nc, { ...entry, pool }, pods);
      first?.();
      first = undefined;
    } catch (err) {
      reservations.release(pool.name, worst);
      errors.push(err);
      ctx.log.error({ nodepool: pool.name, err: String(err) }, 'creating nodeclaim failed');
    }
  });
  if (errors.length) throw new Error(`creating ${errors.length} nodeclaim(s)`, { cause: errors[0] });
}
