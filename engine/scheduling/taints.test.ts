import { describe, expect, it } from 'vitest';
import type { Taint, Toleration } from '../domain/types.ts';
import { firstUntolerated, isKnownEphemeralTaint, tolerates } from './taints.ts';

const taint: Taint = { key: 'test', value: 'bar', effect: 'NoSchedule' };

describe('tolerations', () => {
  it.each<[string, Toleration, boolean]>([
    ['Exists on the key', { key: 'test', operator: 'Exists' }, true],
    ['Equal with the value', { key: 'test', operator: 'Equal', value: 'bar' }, true],
    ['Equal is the default operator', { key: 'test', value: 'bar' }, true],
    ['a different value', { key: 'test', operator: 'Equal', value: 'baz' }, false],
    ['a different key', { key: 'other', operator: 'Exists' }, false],
    ['an empty key with Exists tolerates everything', { operator: 'Exists' }, true],
    ['a matching effect', { key: 'test', operator: 'Exists', effect: 'NoSchedule' }, true],
    ['a different effect', { key: 'test', operator: 'Exists', effect: 'NoExecute' }, false],
  ])('%s', (_name, t, expected) => {
    expect(tolerates(t, taint)).toBe(expected);
  });

  it('compares numerically with Gt and Lt', () => {
    const n: Taint = { key: 'n', value: '5', effect: 'NoSchedule' };
    expect(tolerates({ key: 'n', operator: 'Gt', value: '3' }, n)).toBe(true);
    expect(tolerates({ key: 'n', operator: 'Gt', value: '5' }, n)).toBe(false);
    expect(tolerates({ key: 'n', operator: 'Lt', value: '9' }, n)).toBe(true);
    expect(tolerates({ key: 'n', operator: 'Lt', value: 'x' }, n)).toBe(false);
  });

  it('requires every taint to be tolerated, PreferNoSchedule included', () => {
    const soft: Taint = { key: 'soft', effect: 'PreferNoSchedule' };
    expect(firstUntolerated([{ key: 'test', operator: 'Exists' }], [taint, soft])).toEqual(soft);
    expect(firstUntolerated([{ operator: 'Exists' }], [taint, soft])).toBeUndefined();
  });

  it('knows the ephemeral taints of booting nodes', () => {
    expect(isKnownEphemeralTaint({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' })).toBe(true);
    expect(isKnownEphemeralTaint({ key: 'readiness.k8s.io/net', effect: 'NoSchedule' })).toBe(true);
    expect(isKnownEphemeralTaint({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' })).toBe(false);
    expect(isKnownEphemeralTaint(taint)).toBe(false);
  });
});
