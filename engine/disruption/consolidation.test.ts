// The price rule (docs/karpenter/disruption.md §2.5.2), estimated savings (§2.5.4, docs/karpenter/test-cases.md §10) and Karpenter's
// command strings, checked with the reference solver on small fake instance types.
import { describe, expect, it } from 'vitest';
import { ModelCaches } from '../model/caches.ts';
import type { InstanceType, NodePool, Offering } from '../domain/types.ts';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { FAKE_WELL_KNOWN_LABELS, fakeInstanceType, fakeOffering } from '../../test/fixtures/instancetypes.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { fromSelectorRequirements, requirements, req } from '../scheduling/requirements.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { candidateSet } from './candidates.ts';
import { commandString } from './command.ts';
import { computeConsolidation } from './consolidation.ts';
import { estimatedSavings, filterByPrice, withOptions, worstLaunchPrice } from './pricing.ts';

const solver = { name: 'reference', solve: solveReference };
const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const Gi = 2 ** 30;
const off = (zone: string, capacityType: Offering['capacityType'], price: number, available = true) =>
  fakeOffering({ zone, capacityType, price, available });

/** "current" costs 0.5 on-demand (its offering no longer available); "other" is offered as given. */
function setup(other: Offering[], pool: NodePool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] })) {
  const current = fakeInstanceType({
    name: 'current',
    resources: { cpu: 4000, memory: 4 * Gi, pods: 10 },
    offerings: [off('test-zone-1', 'on-demand', 0.5, false)],
  });
  const cheap = fakeInstanceType({
    name: 'other',
    resources: { cpu: 4000, memory: 4 * Gi, pods: 10 },
    offerings: other,
  });
  const n = stateNode({
    name: 'node',
    instanceType: current,
    zone: 'test-zone-1',
    capacityType: 'on-demand',
    pods: [pod({ cpu: '1' })],
  });
  const s = snapshot({ nodePools: [pool], nodes: [n], instanceTypes: [current, cheap] });
  return { s, candidate: candidateSet(s, 'graceful').all[0]! };
}

describe('the price rule: a replacement must be strictly cheaper at its worst-case launch price', () => {
  it('does not replace a 0.5 node when the spot replacement offerings are 1.0 / 0.2 / 0.4', async () => {
    const { s, candidate } = setup([
      off('test-zone-1', 'spot', 1.0),
      off('test-zone-2', 'spot', 0.2),
      off('test-zone-3', 'spot', 0.4),
    ]);
    const out = await computeConsolidation(s, [candidate], {
      solver,
      wellKnownLabels,
      caches: new ModelCaches(),
      method: 'single',
    });
    expect(out.kind).toBe('noop');
    if (out.kind !== 'noop') return;
    expect(out.why.code).toBe('no-cheaper-replacement');
    expect(out.why.message).toBe(
      'no cheaper replacement: cheapest fitting option other $1.0000/h is not below $0.5000/h',
    );
    expect(out.why.eventMessage).toBe("Can't replace with a cheaper node");
  });

  it('replaces it when every spot offering is cheaper, narrowing the NodeClaim to spot', async () => {
    const { s, candidate } = setup([
      off('test-zone-1', 'spot', 0.3),
      off('test-zone-2', 'spot', 0.2),
      off('test-zone-1', 'on-demand', 0.45),
    ]);
    const out = await computeConsolidation(s, [candidate], {
      solver,
      wellKnownLabels,
      caches: new ModelCaches(),
      method: 'single',
    });
    expect(out.kind).toBe('command');
    if (out.kind !== 'command') return;
    const claim = out.command.replacements[0]!;
    expect(claim.requirements.find((r) => r.key === 'karpenter.sh/capacity-type')).toEqual({
      key: 'karpenter.sh/capacity-type',
      operator: 'In',
      values: ['spot'],
    });
    expect(claim.price).toBe(0.2);
    expect(out.command.savingsPerHour).toBeCloseTo(0.3, 12);
  });

  it('an on-demand-only pool ignores spot offerings: on-demand 0.6 is not cheaper than 0.5', async () => {
    const pool = nodePool({
      consolidateAfter: 0,
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    });
    const { s, candidate } = setup(
      [off('test-zone-1', 'on-demand', 0.6), off('test-zone-1', 'spot', 0.2), off('test-zone-2', 'spot', 0.3)],
      pool,
    );
    const out = await computeConsolidation(s, [candidate], {
      solver,
      wellKnownLabels,
      caches: new ModelCaches(),
      method: 'single',
    });
    expect(out.kind).toBe('noop');
  });

  it('worst-case launch price takes reserved, then spot, then on-demand, and the dearest offering of that type', () => {
    const it0 = fakeInstanceType({
      name: 'x',
      offerings: [
        off('test-zone-1', 'on-demand', 0.1),
        off('test-zone-1', 'spot', 0.3),
        off('test-zone-2', 'spot', 0.2),
      ],
    });
    expect(worstLaunchPrice(new Map(), it0)).toBe(0.3);
    expect(worstLaunchPrice(requirements(req('karpenter.sh/capacity-type', false, ['on-demand'])), it0)).toBe(0.1);
    expect(worstLaunchPrice(requirements(req('topology.kubernetes.io/zone', false, ['test-zone-2'])), it0)).toBe(0.2);
    expect(filterByPrice(new Map(), [it0], 0.3)).toEqual([]);
    expect(filterByPrice(new Map(), [it0], 0.300001)).toEqual([it0]);
  });
});

describe('estimated savings (docs/karpenter/test-cases.md §10)', () => {
  const it0: InstanceType = fakeInstanceType({
    name: 'r',
    offerings: [
      off('test-zone-1', 'on-demand', 0.4),
      off('test-zone-1', 'spot', 0.1),
      off('test-zone-2', 'on-demand', 0.45),
    ],
  });
  const claim = (reqs: ReturnType<typeof requirements>): NewNodeClaimPlan =>
    withOptions(
      {
        nodePool: 'default',
        pods: [],
        requirements: [],
        instanceTypes: [],
        requests: {},
        labels: {},
        taints: [],
        startupTaints: [],
        price: 0,
      },
      reqs,
      [it0],
    );

  it("prices each replacement at its first option's cheapest allowed, available offering", () => {
    expect(
      estimatedSavings([0.5], [claim(requirements(req('karpenter.sh/capacity-type', false, ['on-demand'])))]),
    ).toBeCloseTo(0.1, 12);
    expect(
      estimatedSavings(
        [0.5],
        [
          claim(
            requirements(
              req('karpenter.sh/capacity-type', false, ['on-demand']),
              req('topology.kubernetes.io/zone', false, ['test-zone-2']),
            ),
          ),
        ],
      ),
    ).toBeCloseTo(0.05, 12);
    expect(estimatedSavings([0.5], [claim(new Map())])).toBeCloseTo(0.4, 12);
  });

  it('subtracts every replacement: 0.50 - (0.20 + 0.15) = 0.15', () => {
    const a = { ...claim(new Map()), price: 0.2 };
    const b = { ...claim(new Map()), price: 0.15 };
    expect(estimatedSavings([0.5], [a, b])).toBeCloseTo(0.15, 12);
  });

  it('is 0 for empty deletes and replacements without options', () => {
    expect(estimatedSavings([], [])).toBe(0);
    const none = withOptions(
      {
        nodePool: 'default',
        pods: [],
        requirements: [],
        instanceTypes: [],
        requests: {},
        labels: {},
        taints: [],
        startupTaints: [],
        price: 0,
      },
      new Map(),
      [],
    );
    expect(estimatedSavings([], [none])).toBe(0);
    expect(fromSelectorRequirements(none.requirements).get('node.kubernetes.io/instance-type')?.values.size).toBe(0);
  });
});

describe('command strings and validation reasons (docs/karpenter/test-cases.md §10)', () => {
  const c = (name: string) => ({ name, nodePool: 'p', price: 0, reschedulablePods: 0, disruptionCost: 1 });
  const r = {
    nodePool: 'p',
    pods: [],
    requirements: [],
    instanceTypes: [],
    requests: {},
    labels: {},
    taints: [],
    startupTaints: [],
    price: 0,
  };

  it('prints commands as Karpenter does', () => {
    expect(commandString({ kind: 'delete', candidates: [c('node-1')], replacements: [] })).toBe('delete: [node-1]');
    expect(commandString({ kind: 'delete', candidates: [c('node-1'), c('node-2')], replacements: [] })).toBe(
      'delete: [node-1, node-2]',
    );
    expect(commandString({ kind: 'replace', candidates: [c('node-1')], replacements: [r] })).toBe(
      'replace: [node-1] -> [1 replacement]',
    );
    expect(commandString({ kind: 'replace', candidates: [c('node-1')], replacements: [r, r] })).toBe(
      'replace: [node-1] -> [2 replacements]',
    );
    expect(commandString({ kind: 'noop' })).toBe('no-op: []');
  });
});
