// cloudprovider.metrics (the AWS provider's metrics controller, under its name): every minute, over the
// instance types of every NodePool, each offering's hourly price and whether it can be launched now
// (karpenter_cloudprovider_instance_type_offering_*, one series per instance type, capacity type and
// zone; available if any NodePool sees it available), and each type's vCPUs and memory. A pass sets only the
// series whose value moved since it last set them, a chunk at a time with a turn of the event loop between
// chunks: setting every series of the catalog (thousands of offerings) in one go held the controller's event
// loop for 100-200 ms once a minute in the controller benchmark.
import type { InstanceType } from '../../../../engine/index.ts';
import { requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import { errText, type Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';

const PERIOD_MS = 60_000;
/** Series looked at between two turns of the event loop. */
const CHUNK = 500;

const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

type OfferingGauge = ControllerContext['metrics']['offeringPrice'];

export function newCloudProviderMetrics(ctx: ControllerContext): Controller {
  const m = ctx.metrics;

  async function instanceTypes(): Promise<InstanceType[]> {
    const out: InstanceType[] = [];
    for (const e of ctx.cluster.nodePools()) {
      if (!e.pool) continue;
      try {
        out.push(...(await ctx.cloudProvider.getInstanceTypes(e.pool)));
      } catch (err) {
        // One NodePool that cannot list its types costs only its own series.
        ctx.log.error(
          { nodepool: e.pool.name, err: errText(err) },
          'listing instance types for the offering metrics failed',
        );
      }
    }
    return out;
  }

  /**
   * The value each series was last set to (prom-client keeps it): a pass sets only the series whose value moved,
   * since prom-client hashes a series' labels on every set and the catalog has thousands of offerings.
   */
  const last = new Map<string, number>();
  let work = 0;

  async function setIfMoved(g: OfferingGauge, labels: Record<string, string>, key: string, v: number): Promise<void> {
    if (++work % CHUNK === 0) await yieldTurn();
    if (last.get(key) === v) return;
    last.set(key, v);
    g.set(labels, v);
  }

  async function reconcile(): Promise<ReconcileResult> {
    const offerings = new Map<string, { labels: Record<string, string>; available: boolean; price: number }>();
    const types = await instanceTypes();
    for (const t of types) {
      const labels = { instance_type: t.name };
      await setIfMoved(m.instanceTypeCpu, labels, `cpu/${t.name}`, (t.capacity['cpu'] ?? 0) / 1000);
      await setIfMoved(m.instanceTypeMemory, labels, `memory/${t.name}`, t.capacity['memory'] ?? 0);
      for (const o of t.offerings) {
        const key = `${t.name}/${o.capacityType}/${o.zone}`;
        const prior = offerings.get(key);
        const labels = { instance_type: t.name, capacity_type: o.capacityType, zone: o.zone };
        offerings.set(key, { labels, available: (prior?.available ?? false) || o.available, price: o.price });
      }
    }
    for (const [key, o] of offerings) {
      await setIfMoved(m.offeringAvailable, o.labels, `available/${key}`, o.available ? 1 : 0);
      await setIfMoved(m.offeringPrice, o.labels, `price/${key}`, o.price);
    }
    return requeueAfter(PERIOD_MS);
  }

  return {
    name: 'cloudprovider.metrics',
    reads: ['NodePool', 'EC2NodeClass'],
    concurrency: 1,
    reconcile,
    register(enqueue) {
      enqueue('');
      return () => {};
    },
  };
}
