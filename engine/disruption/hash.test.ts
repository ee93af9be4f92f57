import { describe, expect, it } from 'vitest';
import { nodePool } from '../../test/fixtures/builders.ts';
import { fnv1a64, nodePoolHash } from './hash.ts';

describe('nodepool template hash', () => {
  it('is FNV-1a 64 (known vectors)', () => {
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n);
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('foobar')).toBe(0x85944171f73967e8n);
  });

  it('is stable: a decimal string that does not depend on list or key order', () => {
    const a = nodePool({
      labels: { b: '2', a: '1' },
      taints: [
        { key: 'x', effect: 'NoSchedule' },
        { key: 'y', value: 'v', effect: 'NoExecute' },
      ],
    });
    const b = nodePool({
      labels: { a: '1', b: '2' },
      taints: [
        { key: 'y', value: 'v', effect: 'NoExecute' },
        { key: 'x', effect: 'NoSchedule' },
        { key: 'x', effect: 'NoSchedule' },
      ],
    });
    expect(nodePoolHash(a)).toMatch(/^\d+$/);
    expect(nodePoolHash(a)).toBe(nodePoolHash(b));
  });

  it('ignores empty values and fields outside the template', () => {
    const base = nodePool();
    expect(nodePoolHash(nodePool({ labels: {}, annotations: {}, taints: [] }))).toBe(nodePoolHash(base));
    expect(
      nodePoolHash(
        nodePool({
          consolidationPolicy: 'WhenEmpty',
          consolidateAfter: 60_000,
          budgets: [{ nodes: '1' }],
          weight: 50,
          limits: { cpu: '10' },
        }),
      ),
    ).toBe(nodePoolHash(base));
    expect(
      nodePoolHash(nodePool({ requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] })),
    ).toBe(nodePoolHash(base));
  });

  it('changes with every template field that shapes a node', () => {
    const base = nodePoolHash(nodePool());
    const variants = [
      nodePool({ labels: { team: 'a' } }),
      nodePool({ annotations: { note: 'x' } }),
      nodePool({ taints: [{ key: 'x', effect: 'NoSchedule' }] }),
      nodePool({ startupTaints: [{ key: 'x', effect: 'NoSchedule' }] }),
      nodePool({ nodeClassName: 'other' }),
      nodePool({ terminationGracePeriod: 300_000 }),
      nodePool({ expireAfter: null }),
      nodePool({ expireAfter: 24 * 3600_000 }),
    ];
    const hashes = variants.map(nodePoolHash);
    for (const h of hashes) expect(h).not.toBe(base);
    expect(new Set(hashes).size).toBe(hashes.length);
  });
});
