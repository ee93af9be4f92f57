// cloudprovider.metrics on the in-memory API (test/fakes): a pass sets every series of the catalog once, then only
// the series whose value moved; an offering two NodePools see is available if either sees it available.
import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../../../../engine/index.ts';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { guide } from '../../../../test/support/environment.ts';
import { newCloudProviderMetrics } from './reconcile.ts';

const offering = (zone: string, capacityType: string, price: number, available = true) =>
  ({ zone, capacityType, price, available }) as InstanceType['offerings'][number];

function catalog(): InstanceType[] {
  const type = (name: string, cpu: number, offerings: InstanceType['offerings']) =>
    ({ name, capacity: { cpu: cpu * 1000, memory: cpu * 4 * 2 ** 30 }, offerings }) as unknown as InstanceType;
  return [
    type('m5.large', 2, [offering('zone-a', 'on-demand', 0.096), offering('zone-a', 'spot', 0.04)]),
    type('m5.xlarge', 4, [offering('zone-a', 'on-demand', 0.192), offering('zone-b', 'on-demand', 0.192)]),
  ];
}

describe('cloudprovider.metrics', () => {
  it('sets each series once, then only those whose value moved', async () => {
    let types = catalog();
    const env = fakeControllerEnv({
      cloudProvider: (cloud) => Object.assign(Object.create(cloud), { getInstanceTypes: async () => types }),
    });
    await env.apply(guide('guide-07.yaml'));
    const m = env.metrics;
    const sets: string[] = [];
    for (const [name, g] of [
      ['price', m.offeringPrice],
      ['available', m.offeringAvailable],
      ['cpu', m.instanceTypeCpu],
      ['memory', m.instanceTypeMemory],
    ] as const) {
      const set = g.set.bind(g);
      g.set = ((labels: Record<string, string>, v: number) => {
        sets.push(`${name} ${Object.values(labels).join('/')}=${v}`);
        set(labels, v);
      }) as typeof g.set;
    }
    const c = newCloudProviderMetrics(env.ctx);
    await c.reconcile('');
    expect(sets).toHaveLength(2 * 2 + 4 * 2);
    expect(
      await m.value('karpenter_cloudprovider_instance_type_offering_price_estimate', {
        instance_type: 'm5.large',
        capacity_type: 'spot',
        zone: 'zone-a',
      }),
    ).toBe(0.04);
    sets.length = 0;
    types = catalog();
    await c.reconcile('');
    expect(sets).toEqual([]);
    types = catalog();
    types[0] = {
      ...types[0]!,
      offerings: [offering('zone-a', 'on-demand', 0.1), offering('zone-a', 'spot', 0.04, false)],
    };
    await c.reconcile('');
    expect(sets).toEqual(['price m5.large/on-demand/zone-a=0.1', 'available m5.large/spot/zone-a=0']);
  });
});
