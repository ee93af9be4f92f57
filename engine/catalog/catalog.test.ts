import { describe, expect, it } from 'vitest';
import { CAPACITY_TYPE_LABEL, OS_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { formatRequirement } from '../scheduling/requirements.ts';
import { ec2InstanceTypes, ec2InstanceInfos, regionPrices, regionsInCatalog, regionZones } from './catalog.ts';
import { catalogData } from './data.ts';

const find = (types: ReturnType<typeof ec2InstanceTypes>, name: string) => {
  const t = types.find((x) => x.name === name);
  if (!t) throw new Error(`${name} missing`);
  return t;
};

describe('regions and zones', () => {
  it('knows three regions with their standard zones', () => {
    expect(regionsInCatalog()).toEqual(['ap-northeast-2', 'us-east-1', 'us-west-2']);
    expect(regionZones('us-east-1')).toEqual([
      'us-east-1a',
      'us-east-1b',
      'us-east-1c',
      'us-east-1d',
      'us-east-1e',
      'us-east-1f',
    ]);
    expect(regionZones('us-west-2')).toEqual(['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d']);
    expect(regionZones('ap-northeast-2')).toEqual([
      'ap-northeast-2a',
      'ap-northeast-2b',
      'ap-northeast-2c',
      'ap-northeast-2d',
    ]);
  });

  it('rejects unknown regions, foreign, duplicate or no zones with a clear error', () => {
    expect(() => ec2InstanceTypes({ region: 'eu-west-1' })).toThrow(
      /region "eu-west-1" is not in the catalog \(known: ap-northeast-2, us-east-1, us-west-2\)/,
    );
    expect(() => ec2InstanceTypes({ region: 'us-east-1', zones: ['us-west-2a'] })).toThrow(
      /zone "us-west-2a" is not a zone of region us-east-1/,
    );
    expect(() => ec2InstanceTypes({ region: 'us-east-1', zones: ['us-east-1a', 'us-east-1a'] })).toThrow(
      /listed twice/,
    );
    expect(() => ec2InstanceTypes({ region: 'us-east-1', zones: [] })).toThrow(/must not be empty/);
  });
});

describe('ec2InstanceTypes', () => {
  const types = ec2InstanceTypes({ region: 'us-east-1' });

  it('returns every catalog type, sorted by name, the same way on every call', () => {
    expect(types.length).toBe(ec2InstanceInfos().length);
    const names = types.map((t) => t.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(ec2InstanceTypes({ region: 'us-east-1' }).map((t) => t.name)).toEqual(names);
  });

  it('m5.large: one offering per zone × capacity type, priced from the tables', () => {
    const m5 = find(types, 'm5.large');
    expect(m5.offerings.length).toBe(6 * 2);
    const od = m5.offerings.filter((o) => o.capacityType === 'on-demand');
    expect(od.map((o) => o.zone)).toEqual(regionZones('us-east-1'));
    expect(od.every((o) => o.price === 0.096 && o.available)).toBe(true);
    const spot = m5.offerings.find((o) => o.capacityType === 'spot')!;
    expect(spot.available).toBe(true);
    expect(spot.price).toBeLessThan(0.096);
    expect(formatRequirement(m5.requirements.get(CAPACITY_TYPE_LABEL)!)).toBe(
      `${CAPACITY_TYPE_LABEL} In [on-demand spot]`,
    );
    expect(m5.allocatable).toMatchObject({ cpu: 1930, memory: 6903 * 2 ** 20, pods: 29 });
  });

  it('offers spot only where some source says the type supports it', () => {
    const g7 = find(types, 'g7.2xlarge');
    expect(catalogData().byName.get('g7.2xlarge')!.spotSupported).toBeNull();
    expect(g7.offerings.map((o) => o.capacityType)).not.toContain('spot');
    expect(formatRequirement(g7.requirements.get(CAPACITY_TYPE_LABEL)!)).toBe(`${CAPACITY_TYPE_LABEL} In [on-demand]`);
  });

  it('marks offerings without a known price unavailable', () => {
    const x = find(types, 'x8aedz.large');
    expect(regionPrices('us-east-1').onDemand.has('x8aedz.large')).toBe(false);
    const od = x.offerings.filter((o) => o.capacityType === 'on-demand');
    expect(od.length).toBe(6);
    expect(od.every((o) => !o.available)).toBe(true);
  });

  it('accepts an explicit zone list for offerings and the zone requirement', () => {
    const t = find(ec2InstanceTypes({ region: 'us-west-2', zones: ['us-west-2c', 'us-west-2a'] }), 'c6g.large');
    expect(t.offerings.map((o) => `${o.zone}/${o.capacityType}`)).toEqual([
      'us-west-2c/on-demand',
      'us-west-2c/spot',
      'us-west-2a/on-demand',
      'us-west-2a/spot',
    ]);
    expect(formatRequirement(t.requirements.get(ZONE_LABEL)!)).toBe(`${ZONE_LABEL} In [us-west-2a us-west-2c]`);
  });

  it('applies node-class settings (Windows: os label, 110 pods)', () => {
    const w = find(ec2InstanceTypes({ region: 'us-east-1', settings: { amiFamily: 'Windows2022' } }), 'm5.large');
    expect(w.capacity.pods).toBe(110);
    expect(formatRequirement(w.requirements.get(OS_LABEL)!)).toBe(`${OS_LABEL} In [windows]`);
  });

  it('leaves out types whose ENI breakdown is unknown when reservedENIs > 0', () => {
    const withReserved = ec2InstanceTypes({ region: 'us-east-1', settings: { reservedENIs: 1 } });
    const missing = types.filter((t) => !withReserved.some((u) => u.name === t.name)).map((t) => t.name);
    expect(missing).toEqual(
      ec2InstanceInfos()
        .filter((i) => i.maxENIs === undefined)
        .map((i) => i.name),
    );
    expect(missing).toContain('trn2.48xlarge');
    expect(find(withReserved, 'm5.large').capacity.pods).toBe(20);
    // With maxPods, or on Windows (110 pods), the ENI breakdown is not needed.
    const maxPods = ec2InstanceTypes({ region: 'us-east-1', settings: { reservedENIs: 1, kubelet: { maxPods: 50 } } });
    expect(find(maxPods, 'trn2.48xlarge').capacity.pods).toBe(50);
    expect(
      find(
        ec2InstanceTypes({ region: 'us-east-1', settings: { reservedENIs: 1, amiFamily: 'Windows2022' } }),
        'trn2.48xlarge',
      ).capacity.pods,
    ).toBe(110);
  });

  it('returns a fresh array each call, so callers may sort or filter it in place', () => {
    const a = ec2InstanceTypes({ region: 'us-east-1' });
    a.reverse();
    expect(ec2InstanceTypes({ region: 'us-east-1' })[0]!.name).toBe(types[0]!.name);
  });
});

describe('prices per region', () => {
  it('us-east-1 uses the Karpenter table for every priced type', () => {
    const p = regionPrices('us-east-1');
    expect(p.onDemand.get('m5.large')).toEqual({ price: 0.096, source: 'regional' });
    expect([...p.onDemand.values()].every((v) => v.source === 'regional')).toBe(true);
  });

  it('us-west-2 and ap-northeast-2 use their regional tables where present, else the us-east-1 price', () => {
    const east = regionPrices('us-east-1').onDemand;
    const seoul = regionPrices('ap-northeast-2').onDemand;
    expect(seoul.get('c5.large')).toEqual({ price: 0.096, source: 'regional' });
    expect(east.get('c5.large')!.price).toBe(0.085);
    for (const region of ['us-west-2', 'ap-northeast-2']) {
      const p = regionPrices(region).onDemand;
      expect(p.get('m7i.large')).toEqual({ price: east.get('m7i.large')!.price, source: 'fallback' });
    }
    expect(find(ec2InstanceTypes({ region: 'ap-northeast-2' }), 'c5.large').offerings[0]!.price).toBe(0.096);
  });

  it('spot prices are Spot Advisor estimates: on-demand × (1 − s/100) for a whole-number s', () => {
    for (const region of regionsInCatalog()) {
      const p = regionPrices(region);
      expect(p.spot.size).toBeGreaterThan(400);
      for (const [name, spot] of p.spot) {
        const od = p.onDemand.get(name)!.price;
        const s = 100 * (1 - spot / od);
        expect(Math.abs(s - Math.round(s)), `${region} ${name}`).toBeLessThan(1e-6);
        expect(Math.round(s)).toBeGreaterThanOrEqual(0);
      }
      expect(p.spotSource).toMatch(/not a live price/);
    }
  });
});
