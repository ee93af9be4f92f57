// cloudprovider.metrics (the AWS provider's metrics controller, under its name): every minute, over the
// instance types of every NodePool, each offering's hourly price and whether it can be launched now
// (karpenter_cloudprovider_instance_type_offering_*, one series per instance type, capacity type and
// zone; available if any NodePool sees it available), and each type's vCPUs and memory.
import type { InstanceType } from '../../../../engine/index.ts';
import { requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import { errText, type Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';

const PERIOD_MS = 60_000;

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

  async function reconcile(): Promise<ReconcileResult> {
    const available = new Map<string, boolean>();
    const price = new Map<string, number>();
    const types = await instanceTypes();
    for (const t of types) {
      m.instanceTypeCpu.set({ instance_type: t.name }, (t.capacity['cpu'] ?? 0) / 1000);
      m.instanceTypeMemory.set({ instance_type: t.name }, t.capacity['memory'] ?? 0);
      for (const o of t.offerings) {
        const key = JSON.stringify([t.name, o.capacityType, o.zone]);
        available.set(key, (available.get(key) ?? false) || o.available);
        price.set(key, o.price);
      }
    }
    for (const [key, ok] of available) {
      const [instance_type, capacity_type, zone] = JSON.parse(key) as [string, string, string];
      m.offeringAvailable.set({ instance_type, capacity_type, zone }, ok ? 1 : 0);
      m.offeringPrice.set({ instance_type, capacity_type, zone }, price.get(key)!);
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
