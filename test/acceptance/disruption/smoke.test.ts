import { describe, expect, it } from 'vitest';
import { pod } from '../../fixtures/builders.ts';
import { leastExpensiveInstance } from '../../fixtures/instancetypes.ts';
import { env, node, reconcile, types } from './harness.ts';

describe('smoke', () => {
  it('deletes the node with fewer pods', async () => {
    const it0 = leastExpensiveInstance(types());
    const n0 = node(it0, { name: 'node-0', allocatable: { cpu: '32', memory: '32Gi', pods: '100' }, pods: [pod(), pod()] });
    const n1 = node(it0, { name: 'node-1', allocatable: { cpu: '32', memory: '32Gi', pods: '100' }, pods: [pod()] });
    const s = env({ nodes: [n0, n1] });
    const t0 = performance.now();
    const r = await reconcile(s);
    console.log(performance.now() - t0, JSON.stringify(r.decision, null, 1).slice(0, 2000));
    expect(r.decision.kind).toBe('delete');
  });
});
