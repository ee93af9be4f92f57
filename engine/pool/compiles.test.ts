// A pool worker compiles no solver module of its own: the pool compiles it once on the calling thread and every
// user in the worker (its solver, the lower bound's pattern bound: engine/bound/patterns.ts) instantiates that
// one. The worker here is the engine worker with WebAssembly.Module counted (compiles.fixture.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { nodePool, pods, snapshot } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import { createEngine } from '../engine.ts';

describe('a pool worker and the solver module', () => {
  const engine = createEngine({ threads: 1, filename: new URL('./compiles.fixture.ts', import.meta.url).href });
  afterAll(() => engine.close());

  it('solves and bounds on the module its pool compiled, compiling none', async () => {
    const s = snapshot({ nodePools: [nodePool()], instanceTypes: defaultFakeInstanceTypes() });
    const pending = pods(30, { cpu: '1', memory: '1Gi' }).map((p) => ({ ...p, unschedulable: true }));
    const plan = await engine.provision({ ...s, pendingPods: pending }, pending);
    expect(plan.newNodeClaims.length).toBeGreaterThan(0);
    const bound = await engine.lowerBound(s, pending);
    // The pattern bound ran (it is what instantiates the module outside the solver).
    expect(bound.patterns.status).not.toBe('empty');
    expect(bound.perHour).toBeGreaterThan(0);
    const [m] = (await engine.pool.memory()) as unknown as { compiled: number }[];
    expect(m!.compiled).toBe(0);
  });
});
