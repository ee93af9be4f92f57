// A disruption call's timeout covers the wall time Karpenter's methods may spend by their own deadlines: with
// deadlines on, a multi-node consolidation may search for a minute by design, so the engine's per-call timeout
// (60 s by default) must not cut the call first. Without deadlines the engine's timeout alone applies.
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../engine.ts';
import { INITIAL_LOOP_STATE } from '../disruption/types.ts';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';

// A timeout no task can meet: a cold worker takes far longer than 1 ms to start and answer.
const engine = createEngine({ threads: 1, timeoutMs: 1 });
afterAll(() => engine.close());

const s = snapshot({
  nodePools: [nodePool({ name: 'default' })],
  nodes: [
    stateNode({ name: 'a', nodePool: 'default', pods: [pod({ name: 'web-1' })] }),
    stateNode({ name: 'b', nodePool: 'default' }),
  ],
  now: 1_000,
});

describe('a disruption call on the engine', () => {
  it('is cut at the engine timeout without deadlines, and given the methods’ deadlines on top with them', async () => {
    const warm = engine.cluster('disrupt-timeout');
    await expect(warm.disrupt(s, { state: INITIAL_LOOP_STATE })).rejects.toThrow(/timeout/i);
    const r = await warm.disrupt(s, {
      state: INITIAL_LOOP_STATE,
      deadlines: true,
      singleNodeTimeoutMs: 20_000,
      multiNodeTimeoutMs: 20_000,
      repackDeadlineMs: 20_000,
    });
    expect(r.decision.kind).toBeTypeOf('string');
    await expect(engine.disrupt(s, { state: INITIAL_LOOP_STATE })).rejects.toThrow(/timeout/i);
    expect((await engine.disrupt(s, { state: INITIAL_LOOP_STATE, deadlines: true })).decision.kind).toBeTypeOf(
      'string',
    );
    await warm.close();
  });
});
