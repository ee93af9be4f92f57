import { describe, expect, it } from 'vitest';
import { formatFieldError } from './errors.ts';
import { validateUpdate } from './validate.ts';

type Obj = Record<string, any>;
const pool = (): Obj => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'p' },
  spec: {
    template: {
      spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'a' }, requirements: [] },
    },
  },
});
const claim = (): Obj => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name: 'c' },
  spec: {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'a' },
    requirements: [{ key: 'a', operator: 'Exists' }],
  },
});
const update = (old: Obj, change: (o: Obj) => void): string[] => {
  const next = structuredClone(old);
  change(next);
  return validateUpdate(old, next).map(formatFieldError);
};

describe('validateUpdate (transition rules)', () => {
  it('lets a NodePool change its node class name but not its group or kind', () => {
    expect(update(pool(), (o) => (o.spec.template.spec.nodeClassRef.name = 'b'))).toEqual([]);
    expect(update(pool(), (o) => (o.spec.template.spec.nodeClassRef.kind = 'Other'))).toEqual([
      'NodePool/p: spec.template.spec.nodeClassRef: nodeClassRef.kind is immutable',
    ]);
    expect(update(pool(), (o) => (o.spec.template.spec.nodeClassRef.group = 'x.io'))).toEqual([
      'NodePool/p: spec.template.spec.nodeClassRef: nodeClassRef.group is immutable',
    ]);
  });

  it('refuses switching a NodePool between static and dynamic, but allows rescaling', () => {
    expect(update(pool(), (o) => (o.spec.replicas = 3))).toEqual([
      expect.stringMatching(/^NodePool\/p: spec: a NodePool cannot switch between static/),
    ]);
    const stat = pool();
    stat.spec.replicas = 3;
    expect(update(stat, (o) => (o.spec.replicas = 5))).toEqual([]);
    expect(update(stat, (o) => delete o.spec.replicas)).toHaveLength(1);
  });

  it('keeps a NodeClaim spec immutable while its status and labels may change', () => {
    expect(update(claim(), (o) => (o.status = { nodeName: 'n' }))).toEqual([]);
    expect(update(claim(), (o) => (o.metadata.labels = { a: 'b' }))).toEqual([]);
    expect(update(claim(), (o) => (o.spec.requirements[0].operator = 'DoesNotExist'))).toEqual([
      expect.stringMatching(/^NodeClaim\/c: spec: spec is immutable/),
    ]);
  });

  it('still reports ordinary validation errors of the new object', () => {
    expect(update(pool(), (o) => (o.spec.weight = 0))).toEqual(['NodePool/p: spec.weight: must be at least 1 (got 0)']);
  });
});
