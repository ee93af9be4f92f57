// A pool worker compiles no solver module of its own: the pool compiles it once on the calling thread and every
// user in the worker (its solver, the lower bound's pattern bound: engine/bound/patterns.ts) instantiates that
// one. Nor does it compile HiGHS for a what-if job's bound: the job brings HiGHS' module as the pool compiled it
// (lp-module.ts). The worker here is the engine worker with its compiles counted (compiles.fixture.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { busyCluster, nodePool, pods, snapshot } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import { createEngine } from '../engine.ts';
import { inThreadEngine } from '../whatif/engines.ts';
import { runWhatIfJob } from '../whatif/job.ts';

const fixture = new URL('./compiles.fixture.ts', import.meta.url).href;

interface Counts {
  readonly compiled: number;
  readonly fromBytes: number;
}

describe('a pool worker and the solver module', () => {
  const engine = createEngine({ threads: 1, filename: fixture });
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
    const [m] = (await engine.pool.memory()) as unknown as Counts[];
    expect(m!.compiled).toBe(0);
  });
});

describe('pool workers and HiGHS', () => {
  const engine = createEngine({ threads: 2, filename: fixture });
  afterAll(() => engine.close());
  const its = defaultFakeInstanceTypes();
  const job = (nodes: number) => ({
    built: {
      snapshot: busyCluster({ instanceTypes: its, nodes, pending: 4, podsOnNode: (i) => 1 + (i % 3) }),
      region: 'us-east-1',
      catalog: new Map(its.map((t) => [t.name, t])),
      warnings: [],
    },
    sources: [`${nodes}`],
    mode: 'consolidate' as const,
    exact: true,
  });

  it("bounds what-if jobs on both workers with the pool's HiGHS, compiling none, and reports as in one thread", async () => {
    // A lone job splits into its plan and its bound, one on each worker; the batch after it runs whole jobs.
    const jobs = [job(6), job(7), job(8), job(9)];
    const reports = [await engine.whatIf(jobs[0]!), ...(await Promise.all(jobs.slice(1).map((j) => engine.whatIf(j))))];
    const local = inThreadEngine();
    for (const [i, r] of reports.entries()) {
      expect(r.lowerBoundPerHour).toBeGreaterThan(0);
      expect(r).toEqual(await runWhatIfJob(jobs[i]!, local));
    }
    const readings = (await engine.pool.memory()) as unknown as Counts[];
    expect(readings).toHaveLength(2);
    for (const m of readings) expect(m).toMatchObject({ compiled: 0, fromBytes: 0 });
  });
});
