import { describe, expect, it } from 'vitest';
import { reqs, type InstanceType, type Offering } from '../../../../engine/index.ts';
import { MAX_INSTANCE_TYPES, selectCandidates } from './filter.ts';

const offer = (capacityType: 'spot' | 'on-demand', zone: string, price: number, available = true): Offering => ({
  capacityType,
  zone,
  price,
  available,
});

function type(
  name: string,
  opts: { cpu?: number; gpu?: number; size?: string; offerings?: Offering[] } = {},
): InstanceType {
  const offerings = opts.offerings ?? [offer('on-demand', 'a', 1), offer('spot', 'a', 0.5)];
  return {
    name,
    requirements: reqs.requirements(
      reqs.req('node.kubernetes.io/instance-type', false, [name]),
      reqs.req('karpenter.k8s.aws/instance-size', false, [opts.size ?? 'large']),
      reqs.req('karpenter.k8s.aws/instance-family', false, [name.split('.')[0]!]),
      reqs.req('topology.kubernetes.io/zone', false, [...new Set(offerings.map((o) => o.zone))]),
      reqs.req('karpenter.sh/capacity-type', false, [...new Set(offerings.map((o) => o.capacityType))]),
    ),
    capacity: { cpu: opts.cpu ?? 2000, ...(opts.gpu ? { 'nvidia.com/gpu': opts.gpu } : {}) },
    overhead: {},
    allocatable: { cpu: opts.cpu ?? 2000, ...(opts.gpu ? { 'nvidia.com/gpu': opts.gpu } : {}) },
    offerings,
  };
}

const claim = (...r: Parameters<typeof reqs.fromOperator>[]) =>
  reqs.requirements(...r.map((x) => reqs.fromOperator(...x)));

describe('selectCandidates', () => {
  it('keeps types that intersect the requirements, fit the requests and have an allowed offering', () => {
    const types = [
      type('m5.large'),
      type('m5.xlarge', { cpu: 4000 }),
      type('c5.large', { offerings: [offer('on-demand', 'b', 1)] }),
    ];
    const sel = selectCandidates(
      types,
      claim(['karpenter.sh/capacity-type', 'In', ['on-demand']], ['topology.kubernetes.io/zone', 'In', ['a']]),
      { cpu: 3000 },
    );
    expect(sel.ok && sel.candidates.map((c) => c.type.name)).toEqual(['m5.xlarge']);
  });

  it('reports why nothing is left', () => {
    const sel = selectCandidates(
      [type('m5.large')],
      claim(['node.kubernetes.io/instance-type', 'In', ['c5.large']]),
      {},
    );
    expect(sel).toEqual({ ok: false, reason: expect.stringContaining('no instance type') });
  });

  it('drops metal and GPU types while generic ones remain, unless minValues is used', () => {
    const types = [type('m5.large'), type('m5.metal', { size: 'metal' }), type('g4dn.xlarge', { gpu: 1 })];
    const plain = selectCandidates(types, claim(['karpenter.sh/capacity-type', 'In', ['on-demand']]), {});
    expect(plain.ok && plain.candidates.map((c) => c.type.name)).toEqual(['m5.large']);
    const onlyExotic = selectCandidates(types.slice(1), claim(['karpenter.sh/capacity-type', 'In', ['on-demand']]), {});
    expect(onlyExotic.ok && onlyExotic.candidates).toHaveLength(2);
    const withMin = selectCandidates(
      types,
      reqs.requirements(
        reqs.fromOperator('karpenter.k8s.aws/instance-family', 'Exists', [], 2),
        reqs.fromOperator('karpenter.sh/capacity-type', 'In', ['on-demand']),
      ),
      {},
    );
    expect(withMin.ok && withMin.candidates).toHaveLength(3);
  });

  it('prefers spot when allowed, and drops spot types dearer than the cheapest on-demand offering', () => {
    const types = [
      type('m5.large', { offerings: [offer('on-demand', 'a', 1), offer('spot', 'a', 0.4)] }),
      type('r5.large', { offerings: [offer('on-demand', 'a', 1.5), offer('spot', 'a', 1.2)] }),
    ];
    const both = selectCandidates(types, claim(['karpenter.sh/capacity-type', 'In', ['spot', 'on-demand']]), {});
    expect(both.ok && both.capacityType).toBe('spot');
    expect(both.ok && both.candidates.map((c) => c.type.name)).toEqual(['m5.large']);
    const spotOnly = selectCandidates(types, claim(['karpenter.sh/capacity-type', 'In', ['spot']]), {});
    expect(spotOnly.ok && spotOnly.candidates.map((c) => c.type.name)).toEqual(['m5.large', 'r5.large']);
  });

  it('falls back to on-demand when no spot offering is available', () => {
    const sel = selectCandidates(
      [type('m5.large', { offerings: [offer('on-demand', 'a', 1), offer('spot', 'a', 0.4, false)] })],
      claim(['karpenter.sh/capacity-type', 'In', ['spot', 'on-demand']]),
      {},
    );
    expect(sel.ok && sel.capacityType).toBe('on-demand');
  });

  it('keeps the 60 cheapest types, cheapest first, each with its offerings cheapest first', () => {
    const types = Array.from({ length: 100 }, (_, i) =>
      type(`t${i}.large`, { offerings: [offer('on-demand', 'b', 100 - i + 0.5), offer('on-demand', 'a', 100 - i)] }),
    );
    const sel = selectCandidates(types, claim(['karpenter.sh/capacity-type', 'In', ['on-demand']]), {});
    expect(sel.ok && sel.candidates).toHaveLength(MAX_INSTANCE_TYPES);
    expect(sel.ok && sel.candidates[0]!.type.name).toBe('t99.large');
    expect(sel.ok && sel.candidates[0]!.offerings.map((o) => o.zone)).toEqual(['a', 'b']);
  });

  it('fails under Strict minValues when the 60 kept types cannot meet it', () => {
    const types = Array.from({ length: 70 }, (_, i) =>
      type(`t${i}.large`, { offerings: [offer('on-demand', 'a', i < 65 ? 1 : 2)] }),
    );
    const c = reqs.requirements(
      reqs.fromOperator('node.kubernetes.io/instance-type', 'Exists', [], 61),
      reqs.fromOperator('karpenter.sh/capacity-type', 'In', ['on-demand']),
    );
    expect(selectCandidates(types, c, {})).toEqual({ ok: false, reason: expect.stringContaining('minValues 61') });
    expect(selectCandidates(types, c, {}, 'BestEffort').ok).toBe(true);
  });
});

describe('selectCandidates with reserved offerings', () => {
  const reserved = (zone: string, id: string, left: number, price = 1e-7): Offering => ({
    capacityType: 'reserved',
    zone,
    price,
    available: left > 0,
    reservationId: id,
    reservationCapacity: left,
  });
  const kinds: Record<string, { reservationType: 'default' | 'capacity-block'; interruptible: boolean }> = {
    'cr-a': { reservationType: 'default', interruptible: false },
    'cr-b': { reservationType: 'default', interruptible: false },
    'cr-blk': { reservationType: 'capacity-block', interruptible: false },
  };
  const all = claim(['karpenter.sh/capacity-type', 'In', ['reserved', 'on-demand']]);

  it('keeps per type and zone the reservation with the most instances left, and only the winning partition', () => {
    const types = [
      type('m5.large', {
        offerings: [
          offer('on-demand', 'a', 1),
          reserved('a', 'cr-a', 1),
          reserved('a', 'cr-b', 3),
          reserved('b', 'cr-blk', 9),
        ],
      }),
    ];
    const sel = selectCandidates(types, all, {}, 'Strict', (id) => kinds[id]);
    expect(sel.ok && sel.capacityType).toBe('reserved');
    expect(sel.ok && sel.reservation).toEqual({ reservationType: 'default', interruptible: false });
    expect(sel.ok && sel.candidates[0]!.offerings.map((o) => o.reservationId)).toEqual(['cr-b']);
  });

  it('refuses offerings outside a reservation-id requirement, and falls back to on-demand when no reservation has room', () => {
    const types = [
      type('m5.large', { offerings: [offer('on-demand', 'a', 1), reserved('a', 'cr-a', 0), reserved('a', 'cr-b', 2)] }),
    ];
    const onlyA = reqs.requirements(
      ...[...all.values()],
      reqs.fromOperator('karpenter.k8s.aws/capacity-reservation-id', 'In', ['cr-a']),
    );
    expect(selectCandidates(types, onlyA, {}, 'Strict', (id) => kinds[id]).ok).toBe(false);
    const sel = selectCandidates(
      [type('m5.large', { offerings: [offer('on-demand', 'a', 1), reserved('a', 'cr-a', 0)] })],
      all,
      {},
      'Strict',
      (id) => kinds[id],
    );
    expect(sel.ok && sel.capacityType).toBe('on-demand');
  });

  it('applies minValues (Strict) to reserved launches too', () => {
    const types = [
      type('m5.large', { offerings: [offer('on-demand', 'a', 1), reserved('a', 'cr-a', 1)] }),
      type('c5.large', { offerings: [offer('on-demand', 'a', 1)] }),
    ];
    const withMin = reqs.requirements(...[...all.values()], {
      ...reqs.fromOperator('karpenter.k8s.aws/instance-family', 'Exists', []),
      minValues: 2,
    });
    const sel = selectCandidates(types, withMin, {}, 'Strict', (id) => kinds[id]);
    expect(sel).toEqual({
      ok: false,
      reason: 'minValues 2 of karpenter.k8s.aws/instance-family cannot be met (1 values left)',
    });
  });
});
