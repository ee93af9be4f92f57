// Which offerings a launch may take: an offering's zone and capacity type must be allowed by the request's
// requirements, whatever their operators, exactly as intersecting them as a node's labels with those requirements
// says (the requirement algebra, engine/scheduling/requirements.ts, is the oracle here).
import { describe, expect, it } from 'vitest';
import {
  ec2InstanceTypes,
  fromLabels,
  fromSelectorRequirements,
  intersects,
  type NodeSelectorRequirement,
} from '../../engine/index.ts';
import { selectOfferings } from './offerings.ts';

const ZONE = 'topology.kubernetes.io/zone';
const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
const NAMES = ['m5.large', 'c5.large', 'm5.xlarge', 'r5.large'];
const types = ec2InstanceTypes({ region: 'ap-northeast-2' }).filter((t) => NAMES.includes(t.name));
// minValues keeps every compatible type (no exotic filter, no spot price cap), so the candidates are exactly the
// allowed offerings of the chosen capacity type.
const named: NodeSelectorRequirement = {
  key: 'node.kubernetes.io/instance-type',
  operator: 'In',
  values: NAMES,
  minValues: 1,
};

const zoneCases: Array<NodeSelectorRequirement | undefined> = [
  undefined,
  { key: ZONE, operator: 'In', values: ['ap-northeast-2a', 'ap-northeast-2c'] },
  { key: ZONE, operator: 'NotIn', values: ['ap-northeast-2a'] },
  { key: ZONE, operator: 'Exists', values: [] },
  { key: ZONE, operator: 'DoesNotExist', values: [] },
  { key: ZONE, operator: 'Gt', values: ['1'] },
  // The zone's old label is the same key once normalized.
  { key: 'failure-domain.beta.kubernetes.io/zone', operator: 'In', values: ['ap-northeast-2b'] },
];
const capacityCases: Array<NodeSelectorRequirement | undefined> = [
  undefined,
  { key: CAPACITY_TYPE, operator: 'In', values: ['on-demand'] },
  { key: CAPACITY_TYPE, operator: 'In', values: ['spot', 'on-demand'] },
  { key: CAPACITY_TYPE, operator: 'NotIn', values: ['spot'] },
  { key: CAPACITY_TYPE, operator: 'Exists', values: [] },
  { key: CAPACITY_TYPE, operator: 'DoesNotExist', values: [] },
];

/** The offerings the algebra allows, as type/zone/capacity type, of the capacity type a launch would pick. */
function expected(requirements: NodeSelectorRequirement[]): string[] | undefined {
  const reqs = fromSelectorRequirements(requirements);
  const allowed = types.flatMap((t) =>
    t.offerings
      .filter((o) => o.available)
      .filter((o) => intersects(fromLabels({ [ZONE]: o.zone, [CAPACITY_TYPE]: o.capacityType }), reqs) === undefined)
      .map((o) => ({ name: t.name, zone: o.zone, capacityType: o.capacityType })),
  );
  if (!allowed.length) return undefined;
  const has = (ct: string) => allowed.some((a) => a.capacityType === ct);
  const ct = has('reserved') ? 'reserved' : has('spot') ? 'spot' : 'on-demand';
  return allowed
    .filter((a) => a.capacityType === ct)
    .map((a) => `${a.name}/${a.zone}/${a.capacityType}`)
    .sort();
}

describe('selectOfferings', () => {
  it('has instance types with offerings in several zones and both capacity types to choose from', () => {
    expect(types.map((t) => t.name).sort()).toEqual([...NAMES].sort());
    const offered = types.flatMap((t) => t.offerings.filter((o) => o.available));
    expect(new Set(offered.map((o) => o.zone)).size).toBeGreaterThan(2);
    expect(new Set(offered.map((o) => o.capacityType))).toEqual(new Set(['spot', 'on-demand']));
  });

  for (const zone of zoneCases) {
    for (const capacity of capacityCases) {
      const label = `zone ${zone ? `${zone.key} ${zone.operator} [${zone.values}]` : 'any'}, capacity type ${capacity ? `${capacity.operator} [${capacity.values}]` : 'any'}`;
      it(`offers what the requirements allow: ${label}`, () => {
        const requirements = [named, ...(zone ? [zone] : []), ...(capacity ? [capacity] : [])];
        const want = expected(requirements);
        const sel = selectOfferings(types, { requirements, requests: { cpu: 500 } }, () => false);
        if (want === undefined) {
          expect(sel.ok).toBe(false);
          return;
        }
        expect(sel.ok).toBe(true);
        if (!sel.ok) return;
        const got = sel.candidates.map((c) => `${c.type.name}/${c.offering.zone}/${c.offering.capacityType}`).sort();
        expect(got).toEqual(want);
      });
    }
  }

  it('leaves out an offering the cloud reports unavailable', () => {
    const requirements = [named, { key: CAPACITY_TYPE, operator: 'In' as const, values: ['on-demand'] }];
    const sel = selectOfferings(types, { requirements, requests: { cpu: 500 } }, (ct, it, z) =>
      ct === 'on-demand' && it === 'm5.large' ? z === 'ap-northeast-2a' : false,
    );
    expect(
      sel.ok && sel.candidates.some((c) => c.type.name === 'm5.large' && c.offering.zone === 'ap-northeast-2a'),
    ).toBe(false);
    expect(
      sel.ok && sel.candidates.some((c) => c.type.name === 'm5.large' && c.offering.zone === 'ap-northeast-2b'),
    ).toBe(true);
  });
});
