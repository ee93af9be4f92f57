// A disruption call's timeout covers the wall time Karpenter's methods may spend by their own deadlines: with
// deadlines on, a single-node consolidation may search for three minutes and a multi-node one for one by design,
// so the engine's per-call timeout (60 s by default) must not cut the call first. Without deadlines the engine's
// timeout alone applies.
import { describe, expect, it } from 'vitest';
import { createEngine } from '../engine.ts';
import { INITIAL_LOOP_STATE, METHOD_DEADLINES } from '../disruption/types.ts';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { disruptTimeoutMs } from './call-timeout.ts';

describe("a disruption call's timeout", () => {
  it('is the engine timeout without deadlines, and adds the methods’ deadlines with them', () => {
    const { singleNodeTimeoutMs, multiNodeTimeoutMs, repackDeadlineMs } = METHOD_DEADLINES;
    expect(disruptTimeoutMs(60_000, undefined)).toBe(60_000);
    expect(disruptTimeoutMs(60_000, { deadlines: false, singleNodeTimeoutMs: 5 })).toBe(60_000);
    expect(disruptTimeoutMs(60_000, { deadlines: true })).toBe(
      60_000 + singleNodeTimeoutMs + multiNodeTimeoutMs + repackDeadlineMs,
    );
    expect(
      disruptTimeoutMs(1_000, { deadlines: true, singleNodeTimeoutMs: 2, multiNodeTimeoutMs: 3, repackDeadlineMs: 4 }),
    ).toBe(1_009);
  });

  it('lets a call with deadlines finish on an engine whose own timeout no call could meet', async () => {
    const engine = createEngine({ threads: 1, timeoutMs: 1 });
    try {
      const s = snapshot({
        nodePools: [nodePool({ name: 'default' })],
        nodes: [
          stateNode({ name: 'a', nodePool: 'default', pods: [pod({ name: 'web-1' })] }),
          stateNode({ name: 'b', nodePool: 'default' }),
        ],
        now: 1_000,
      });
      const o = { state: INITIAL_LOOP_STATE, deadlines: true, singleNodeTimeoutMs: 20_000, multiNodeTimeoutMs: 20_000 };
      const warm = engine.cluster('disrupt-timeout');
      expect((await warm.disrupt(s, o)).decision.kind).toBeTypeOf('string');
      expect((await engine.disrupt(s, o)).decision.kind).toBeTypeOf('string');
      await warm.close();
    } finally {
      await engine.close();
    }
  });
});
