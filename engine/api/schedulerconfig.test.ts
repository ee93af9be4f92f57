// Karpenter core main after v1.14.1, pkg/operator/options/suite_test.go "SchedulerConfiguration", case for case,
// with the message each problem gets here.
import { describe, expect, it } from 'vitest';
import { parseSchedulerConfig } from './schedulerconfig.ts';

const constraint = (extra = '', key = 'topology.kubernetes.io/zone', when = 'ScheduleAnyway', skew = 1) =>
  `    - maxSkew: ${skew}\n      topologyKey: ${key}\n      whenUnsatisfiable: ${when}\n${extra}`;
const doc = (...constraints: string[]) => `podTopologySpread:\n  defaultConstraints:\n${constraints.join('')}`;
const problems = (text: string): readonly string[] => {
  const r = parseSchedulerConfig(text);
  if (r.ok) throw new Error('expected the config to be refused');
  return r.problems;
};

describe('ParseSchedulerConfiguration', () => {
  it('should return a nil configuration for an empty value', () => {
    expect(parseSchedulerConfig('')).toEqual({ ok: true, value: undefined });
  });
  it('should parse a valid podTopologySpread.defaultConstraints document', () => {
    const r = parseSchedulerConfig(doc(constraint(), constraint('', 'kubernetes.io/hostname', 'DoNotSchedule', 3)));
    expect(r).toEqual({
      ok: true,
      value: {
        podTopologySpread: {
          defaultConstraints: [
            { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
            { maxSkew: 3, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' },
          ],
        },
      },
    });
  });
  it('should parse an equivalent JSON document', () => {
    const r = parseSchedulerConfig(
      '{"podTopologySpread":{"defaultConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}]}}',
    );
    expect(r.ok && r.value?.podTopologySpread?.defaultConstraints).toHaveLength(1);
  });
  it('should fail fast on an unknown field', () => {
    expect(problems(`${doc(constraint())}notARealField: true\n`)).toEqual([
      'notARealField: unknown field (allowed: podTopologySpread)',
    ]);
  });
  it('should fail on malformed YAML', () => {
    expect(problems('podTopologySpread: {').length).toBeGreaterThan(0);
  });
  it('should reject a non-positive maxSkew', () => {
    expect(problems(doc(constraint('', undefined, undefined, 0)))).toEqual([
      'podTopologySpread.defaultConstraints[0].maxSkew must be greater than 0',
    ]);
  });
  it('should reject a missing topologyKey', () => {
    expect(problems(doc('    - maxSkew: 1\n      whenUnsatisfiable: ScheduleAnyway\n'))).toEqual([
      'podTopologySpread.defaultConstraints[0].topologyKey must be set',
    ]);
  });
  it('should reject a labelSelector', () => {
    expect(problems(doc(constraint('      labelSelector:\n        matchLabels:\n          app: test\n')))).toEqual([
      'podTopologySpread.defaultConstraints[0].labelSelector must not be set, as selectors are deduced for each pod',
    ]);
  });
  it('should reject matchLabelKeys', () => {
    expect(problems(doc(constraint('      matchLabelKeys:\n        - pod-template-hash\n')))).toEqual([
      'podTopologySpread.defaultConstraints[0].matchLabelKeys must not be set, as it has no effect on default constraints',
    ]);
  });
  it("should reject a topologyKey that isn't a valid label name", () => {
    expect(problems(doc(constraint('', '"not a valid label name"')))).toEqual([
      expect.stringContaining(
        'podTopologySpread.defaultConstraints[0].topologyKey "not a valid label name" is not a valid label name',
      ),
    ]);
  });
  it('should reject a duplicated topologyKey and whenUnsatisfiable pair', () => {
    expect(problems(doc(constraint(), constraint('', undefined, undefined, 3)))).toEqual([
      'podTopologySpread.defaultConstraints[1] is a duplicate of [0], {topology.kubernetes.io/zone, ScheduleAnyway}',
    ]);
  });
  it('should allow the same topologyKey with a different whenUnsatisfiable', () => {
    const r = parseSchedulerConfig(doc(constraint(), constraint('', undefined, 'DoNotSchedule', 3)));
    expect(r.ok && r.value?.podTopologySpread?.defaultConstraints).toHaveLength(2);
  });
  it('should reject an invalid whenUnsatisfiable', () => {
    expect(problems(doc(constraint('', undefined, 'Sometimes')))).toEqual([
      'podTopologySpread.defaultConstraints[0].whenUnsatisfiable "Sometimes" must be one of "DoNotSchedule" or "ScheduleAnyway"',
    ]);
  });
});
