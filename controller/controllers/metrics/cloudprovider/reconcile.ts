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

/** What one offering's series (available, price) were last set to; undefined: not set yet. */
class OfferingSeries {
  available: number | undefined = undefined;
  price: number | undefined = undefined;
}

/** What one instance type's series were last set to: its vCPUs and memory, and each offering's. */
class TypeSeries {
  cpu: number | undefined = undefined;
  memory: number | undefined = undefined;
  /** By capacity type, then zone. */
  private readonly offerings = new Map<string, Map<string, OfferingSeries>>();

  offering(capacityType: string, zone: string): OfferingSeries {
    let zones = this.offerings.get(capacityType);
    if (!zones) this.offerings.set(capacityType, (zones = new Map()));
    let s = zones.get(zone);
    if (!s) zones.set(zone, (s = new OfferingSeries()));
    return s;
  }
}

/** Every NodePool's instance types; a NodePool that cannot list its types is logged and costs only its own series. */
async function poolInstanceTypes(ctx: ControllerContext): Promise<InstanceType[]> {
  const out: InstanceType[] = [];
  for (const e of ctx.cluster.nodePools()) {
    if (!e.pool) continue;
    try {
      out.push(...(await ctx.cloudProvider.getInstanceTypes(e.pool)));
    } catch (err) {
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
 * since prom-client hashes a series' labels on every set and the catalog has thousands of offerings. Kept per
 * instance type, then capacity type and zone, under the catalog's own strings: a joined key per series
 * (`available/<type>/<capacity type>/<zone>`) was a string of its own for each of the catalog's series.
 */
class LastSet {
  private readonly byType = new Map<string, TypeSeries>();
  private work = 0;

  of(type: string): TypeSeries {
    let s = this.byType.get(type);
    if (!s) this.byType.set(type, (s = new TypeSeries()));
    return s;
  }

  /** Sets the series to `v` unless `prior` (what it was last set to) is `v`; says whether it set it. */
  async setIfMoved(
    g: OfferingGauge,
    labels: Record<string, string>,
    prior: number | undefined,
    v: number,
  ): Promise<boolean> {
    if (++this.work % CHUNK === 0) await yieldTurn();
    if (prior === v) return false;
    g.set(labels, v);
    return true;
  }
}

export function newCloudProviderMetrics(ctx: ControllerContext): Controller {
  const m = ctx.metrics;
  const last = new LastSet();

  async function reconcile(): Promise<ReconcileResult> {
    const offerings = new Map<
      string,
      { labels: Record<string, string>; available: boolean; price: number; series: OfferingSeries }
    >();
    const types = await poolInstanceTypes(ctx);
    for (const t of types) {
      const labels = { instance_type: t.name };
      const s = last.of(t.name);
      const cpu = (t.capacity['cpu'] ?? 0) / 1000;
      if (await last.setIfMoved(m.instanceTypeCpu, labels, s.cpu, cpu)) s.cpu = cpu;
      const memory = t.capacity['memory'] ?? 0;
      if (await last.setIfMoved(m.instanceTypeMemory, labels, s.memory, memory)) s.memory = memory;
      for (const o of t.offerings) {
        const key = `${t.name}/${o.capacityType}/${o.zone}`;
        const prior = offerings.get(key);
        const labels = { instance_type: t.name, capacity_type: o.capacityType, zone: o.zone };
        const available = (prior?.available ?? false) || o.available;
        const series = prior?.series ?? s.offering(o.capacityType, o.zone);
        offerings.set(key, { labels, available, price: o.price, series });
      }
    }
    for (const o of offerings.values()) {
      const s = o.series;
      const available = o.available ? 1 : 0;
      if (await last.setIfMoved(m.offeringAvailable, o.labels, s.available, available)) s.available = available;
      if (await last.setIfMoved(m.offeringPrice, o.labels, s.price, o.price)) s.price = o.price;
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
