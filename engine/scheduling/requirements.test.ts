import { describe, expect, it } from 'vitest';
import type { Operator } from '../domain/types.ts';
import {
  add,
  anyValue,
  compatible,
  fromLabels,
  fromOperator,
  get,
  has,
  hasIntersection,
  intersect,
  intersects,
  intersectsAll,
  len,
  operatorOf,
  requirements,
  toSelectorRequirements,
} from './requirements.ts';
import { schedulingRestrictedReason } from './labels.ts';

const k = 'key';
const r = (op: Operator, ...values: string[]) => fromOperator(k, op, values);
/** The allowed values among a probe universe, to compare requirements by meaning. */
const PROBE = ['a', 'b', 'c', '0', '1', '2', '3', '5', '7', '9', '10', 'x'];
const allowed = (q: ReturnType<typeof r>) => PROBE.filter((v) => has(q, v));

describe('requirement construction (§1.2)', () => {
  it.each([
    ['In', ['a', 'b'], ['a', 'b']],
    ['NotIn', ['a'], PROBE.filter((v) => v !== 'a')],
    ['Exists', [], PROBE],
    ['DoesNotExist', [], []],
    ['Gt', ['2'], ['3', '5', '7', '9', '10']],
    ['Lt', ['2'], ['0', '1']],
    ['Gte', ['2'], ['2', '3', '5', '7', '9', '10']],
    ['Lte', ['2'], ['0', '1', '2']],
  ] as const)('%s %j allows %j of the probe values', (op, values, expected) => {
    expect(allowed(r(op, ...values))).toEqual(expected);
  });

  it('reports operators as Karpenter does: Gt and Lt report Exists', () => {
    expect(operatorOf(r('In', 'a'))).toBe('In');
    expect(operatorOf(r('NotIn', 'a'))).toBe('NotIn');
    expect(operatorOf(r('Exists'))).toBe('Exists');
    expect(operatorOf(r('DoesNotExist'))).toBe('DoesNotExist');
    expect(operatorOf(r('Gt', '5'))).toBe('Exists');
    expect(operatorOf(r('Lt', '5'))).toBe('Exists');
  });

  it('turns Gt at the largest integer into DoesNotExist', () => {
    expect(operatorOf(r('Gt', String(Number.MAX_SAFE_INTEGER)))).toBe('DoesNotExist');
  });

  it('normalises deprecated keys', () => {
    expect(fromOperator('failure-domain.beta.kubernetes.io/zone', 'In', ['z']).key).toBe('topology.kubernetes.io/zone');
    expect(fromOperator('beta.kubernetes.io/arch', 'In', ['arm64']).key).toBe('kubernetes.io/arch');
  });

  it('counts complements as unbounded', () => {
    expect(len(r('In', 'a', 'b'))).toBe(2);
    expect(len(r('NotIn', 'a'))).toBeGreaterThan(1e15);
  });
});

describe('intersection of every operator pair (§1.5, §1.6)', () => {
  const cases: Array<[Operator, string[]]> = [
    ['In', ['a', '1', '5']],
    ['In', ['b', '5', '9']],
    ['NotIn', ['a', '5']],
    ['NotIn', ['x']],
    ['Exists', []],
    ['DoesNotExist', []],
    ['Gt', ['2']],
    ['Lt', ['7']],
    ['Gte', ['5']],
    ['Lte', ['5']],
  ];
  for (const [opA, va] of cases) {
    for (const [opB, vb] of cases) {
      it(`${opA} ${va.join(',')} ∩ ${opB} ${vb.join(',')} allows exactly the common values`, () => {
        const a = r(opA, ...va);
        const b = r(opB, ...vb);
        const both = PROBE.filter((v) => has(a, v) && has(b, v));
        const i = intersect(a, b);
        expect(allowed(i)).toEqual(both);
        expect(allowed(intersect(b, a))).toEqual(both);
        // HasIntersection is true for two complements even when their common set is empty of integers; and a
        // DoesNotExist (empty concrete set) never intersects.
        const expectedHas =
          a.complement && b.complement
            ? !(i.gte !== undefined && i.lte !== undefined && i.gte > i.lte) && operatorOf(i) !== 'DoesNotExist'
            : both.length > 0 || (i.complement && operatorOf(i) !== 'DoesNotExist');
        expect(hasIntersection(a, b)).toBe(expectedHas);
      });
    }
  }

  it('matches the spec examples', () => {
    expect([...intersect(r('In', 'a', 'b'), r('NotIn', 'b')).values]).toEqual(['a']);
    expect([...intersect(r('In', '1', '5', 'x'), r('Gt', '2')).values]).toEqual(['5']);
    expect(operatorOf(intersect(r('Exists'), r('Exists')))).toBe('Exists');
    expect(operatorOf(intersect(r('In', 'a'), r('DoesNotExist')))).toBe('DoesNotExist');
    expect(operatorOf(intersect(r('Gt', '5'), r('Lt', '3')))).toBe('DoesNotExist');
  });

  it('keeps the larger minValues', () => {
    const a = fromOperator(k, 'In', ['a', 'b', 'c'], 2);
    const b = fromOperator(k, 'Exists', [], 3);
    expect(intersect(a, b).minValues).toBe(3);
  });

  it('DoesNotExist does not intersect DoesNotExist', () => {
    expect(hasIntersection(r('DoesNotExist'), r('DoesNotExist'))).toBe(false);
  });
});

describe('Requirements maps (§1.7, §1.8)', () => {
  const zone = 'topology.kubernetes.io/zone';

  it('Add narrows and Get defaults to Exists', () => {
    const reqs = add(requirements(fromOperator(zone, 'In', ['z1', 'z2'])), fromOperator(zone, 'NotIn', ['z1']));
    expect([...get(reqs, zone).values]).toEqual(['z2']);
    expect(operatorOf(get(reqs, 'undefined-key'))).toBe('Exists');
  });

  it('Intersects accepts two NotIn/DoesNotExist sides without overlap and rejects In vs In', () => {
    const a = requirements(fromOperator('k', 'DoesNotExist', []));
    const b = requirements(fromOperator('k', 'NotIn', ['v']));
    expect(intersects(a, b)).toBeUndefined();
    expect(
      intersects(requirements(fromOperator('k', 'In', ['a'])), requirements(fromOperator('k', 'In', ['b']))),
    ).toMatch(/key k/);
  });

  it('intersectsAll says yes exactly when Intersects has no message, whichever side is smaller', () => {
    const ops: Array<[Operator, string[]]> = [
      ['In', ['a', '1']],
      ['In', ['b']],
      ['NotIn', ['a']],
      ['Exists', []],
      ['DoesNotExist', []],
      ['Gt', ['2']],
      ['Lt', ['1']],
    ];
    let no = 0;
    for (const [o1, v1] of ops)
      for (const [o2, v2] of ops)
        for (const [o3, v3] of ops) {
          const a = requirements(fromOperator('k', o1, v1), fromOperator('j', o3, v3));
          for (const b of [
            requirements(fromOperator('k', o2, v2)),
            requirements(fromOperator('k', o2, v2), fromOperator('j', o1, v1), fromOperator('m', o3, v3)),
          ]) {
            expect(intersectsAll(a, b)).toBe(intersects(a, b) === undefined);
            expect(intersectsAll(b, a)).toBe(intersects(b, a) === undefined);
            if (!intersectsAll(a, b)) no++;
          }
        }
    expect(no).toBeGreaterThan(0);
  });

  it('Intersects ignores keys on one side only', () => {
    expect(
      intersects(requirements(fromOperator('a', 'In', ['1'])), requirements(fromOperator('b', 'In', ['2']))),
    ).toBeUndefined();
  });

  // The worked example of docs/karpenter/scheduling.md §1.11.
  const template = requirements(
    fromOperator(zone, 'In', ['z1', 'z2']),
    fromOperator('karpenter.sh/capacity-type', 'In', ['spot', 'on-demand']),
    fromOperator('team', 'Exists', []),
    fromOperator('env', 'In', ['prod']),
  );
  const wellKnown = new Set([zone, 'karpenter.sh/capacity-type', 'kubernetes.io/arch']);

  it('a pod selecting a custom key the pool defines with Exists is compatible', () => {
    expect(compatible(template, fromLabels({ team: 'ml' }), wellKnown)).toBeUndefined();
  });

  it('a pod selecting an undefined custom key is not', () => {
    expect(compatible(template, fromLabels({ gpu: 'true' }), wellKnown)).toBe('label "gpu" does not have known values');
  });

  it('an undefined custom key with NotIn or DoesNotExist is compatible', () => {
    expect(compatible(template, requirements(fromOperator('gpu', 'NotIn', ['true'])), wellKnown)).toBeUndefined();
    expect(compatible(template, requirements(fromOperator('gpu', 'DoesNotExist', [])), wellKnown)).toBeUndefined();
  });

  it('a well-known key the pool does not constrain is allowed undefined', () => {
    expect(compatible(template, fromLabels({ 'kubernetes.io/arch': 'arm64' }), wellKnown)).toBeUndefined();
    expect(compatible(template, fromLabels({ 'kubernetes.io/arch': 'arm64' }))).toMatch(/does not have known values/);
  });

  it('a zone outside the pool fails the intersection', () => {
    expect(compatible(template, fromLabels({ [zone]: 'z3' }), wellKnown)).toMatch(/key topology.kubernetes.io\/zone/);
  });
});

describe('values and serialisation', () => {
  it('picks deterministic concrete values', () => {
    expect(anyValue(r('In', 'c', 'a'))).toBe('a');
    expect(anyValue(r('Exists'))).toBe('0');
    expect(anyValue(r('Gt', '5'))).toBe('6');
    expect(anyValue(r('NotIn', '0', '1'))).toBe('2');
    expect(anyValue(r('DoesNotExist'))).toBeUndefined();
  });

  it('writes bounded requirements back as Gte/Lte', () => {
    const reqs = requirements(intersect(r('Gt', '2'), r('Lt', '9')));
    expect(toSelectorRequirements(reqs)).toEqual([
      { key: k, operator: 'Gte', values: ['3'] },
      { key: k, operator: 'Lte', values: ['8'] },
    ]);
  });
});

describe('restricted labels', () => {
  it.each([
    ['kubernetes.io/hostname', true],
    ['karpenter.sh/test', true],
    ['foo.karpenter.sh/x', true],
    ['karpenter.k8s.aws/unknown', true],
    ['karpenter.sh/capacity-type', false],
    ['karpenter.k8s.aws/instance-family', false],
    ['node.kubernetes.io/instance-type', false],
    ['example.com/team', false],
    ['kubernetes.io/test', true],
    ['sub.k8s.io/test', true],
    ['node-restriction.kubernetes.io/test', false],
    ['kops.k8s.io/test', false],
  ])('%s restricted: %s', (key, restricted) => {
    expect(schedulingRestrictedReason(key) !== undefined).toBe(restricted);
  });
});
