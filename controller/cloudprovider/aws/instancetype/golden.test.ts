// The provider's whole sizing path (DescribeInstanceTypes -> facts.ts -> the engine's formulas, with the
// catalog's extra facts) against what Karpenter publishes for the same 17 types: allocatable for AL2023 with
// default settings, and the type's labels. Expected values: testdata/karpenter-docs.17.json (see its _meta).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseResources, reqs } from '../../../../engine/index.ts';
import {
  FakeClock,
  fixtureInstanceTypes,
  fixturePrices,
  mockedAws,
  readyNodeClass,
} from '../../../../test/fakes/aws.ts';
import { catalogExtraFacts } from '../catalog.ts';
import { UnavailableOfferings } from '../ice-cache.ts';
import { PricingProvider } from '../pricing.ts';
import { InstanceTypeProvider } from './provider.ts';

interface Expected {
  readonly name: string;
  readonly karpenterAllocatableAL2023: Record<string, string>;
  readonly karpenterLabels: Record<string, string>;
}
const docs = JSON.parse(readFileSync(new URL('../testdata/karpenter-docs.17.json', import.meta.url), 'utf8')) as {
  instanceTypes: Expected[];
};

// Labels Karpenter's docs leave out: where and how a type is offered, and tenancy (newer than the docs).
const NOT_IN_DOCS = new Set([
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.k8s.aws/zone-id',
  'karpenter.sh/capacity-type',
  'karpenter.k8s.aws/instance-tenancy',
]);

function allTypes() {
  const aws = mockedAws();
  const clock = new FakeClock();
  const pricing = new PricingProvider({
    ec2: aws.ports.ec2,
    pricing: aws.ports.pricing,
    region: 'us-west-2',
    isolatedVPC: false,
    clock,
    staticPrices: { onDemand: fixturePrices() },
  });
  const provider = new InstanceTypeProvider({
    ec2: aws.ports.ec2,
    pricing,
    ice: new UnavailableOfferings(clock),
    settings: { region: 'us-west-2', vmMemoryOverheadPercent: 0.075, reservedENIs: 0 },
    extraFacts: catalogExtraFacts,
  });
  const infos = fixtureInstanceTypes();
  // Every type in one zone, so that none is dropped for lack of an offering.
  provider.load(
    infos,
    infos.map((i) => ({ instanceType: i.InstanceType!, zone: 'test-zone-1a' })),
  );
  return provider.list(readyNodeClass());
}

describe("the 17 DescribeInstanceTypes fixture types against Karpenter's published values", () => {
  const types = allTypes();

  it('covers every fixture type', () => {
    expect(types.map((t) => t.name).sort()).toEqual(docs.instanceTypes.map((e) => e.name).sort());
    expect(types).toHaveLength(17);
  });

  it.each(docs.instanceTypes)('$name: allocatable matches karpenterAllocatableAL2023 exactly', (e) => {
    const t = types.find((x) => x.name === e.name)!;
    expect(t.allocatable).toEqual(parseResources(e.karpenterAllocatableAL2023));
  });

  it.each(docs.instanceTypes)('$name: labels match karpenterLabels', (e) => {
    const t = types.find((x) => x.name === e.name)!;
    const labels = Object.fromEntries(
      Object.entries(reqs.singleValueLabels(t.requirements)).filter(([k]) => !NOT_IN_DOCS.has(k)),
    );
    expect(labels).toEqual(e.karpenterLabels);
  });
});

// Cross-check: the expectations here are still the records of the committed AWS data.
const dataFile = new URL('../../../../test/fixtures/data/aws/instance-types.json', import.meta.url);
describe('testdata/karpenter-docs.17.json', () => {
  it('equals the instance-types.json records of test/fixtures/data/aws', () => {
    const all = JSON.parse(readFileSync(dataFile, 'utf8')) as { instanceTypes: Expected[] };
    for (const e of docs.instanceTypes) {
      const s = all.instanceTypes.find((x) => x.name === e.name);
      expect({ name: e.name, a: s?.karpenterAllocatableAL2023, l: s?.karpenterLabels }).toEqual({
        name: e.name,
        a: e.karpenterAllocatableAL2023,
        l: e.karpenterLabels,
      });
    }
  });
});
