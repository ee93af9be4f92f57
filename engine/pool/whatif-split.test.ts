// When the Engine splits a what-if job into its plan and its bound (engine.ts, whatIf): only when two workers would
// otherwise wait. A lone job on two idle workers runs as two tasks at once; in a batch, where every worker has a job
// to take, each job runs whole (a split would only add work). The reports are the same either way. The worker here
// is the engine worker with its tasks counted by part (whatif-split.fixture.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { busyCluster } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import type { Snapshot } from '../domain/types.ts';
import { createEngine } from '../engine.ts';
import { inThreadEngine } from '../whatif/engines.ts';
import { runWhatIfJob } from '../whatif/job.ts';

const its = defaultFakeInstanceTypes();

function cluster(nodes: number, pending: number): Snapshot {
  return busyCluster({ instanceTypes: its, nodes, pending, podsOnNode: (i) => 1 + (i % 3) });
}

const job = (nodes: number, pending: number) => ({
  built: {
    snapshot: cluster(nodes, pending),
    region: 'us-east-1',
    catalog: new Map(its.map((t) => [t.name, t])),
    warnings: [],
  },
  sources: [`${nodes}-${pending}`],
  mode: 'consolidate' as const,
  exact: true,
});

describe('what-if jobs on two workers', () => {
  const engine = createEngine({ threads: 2, filename: new URL('./whatif-split.fixture.ts', import.meta.url).href });
  afterAll(() => engine.close());

  /** Tasks run so far, by part, over both workers. */
  async function parts(): Promise<Record<string, number>> {
    const readings = (await engine.pool.memory()) as unknown as { parts: Record<string, number> }[];
    const sum: Record<string, number> = {};
    for (const r of readings) for (const [k, n] of Object.entries(r.parts)) sum[k] = (sum[k] ?? 0) + n;
    return sum;
  }

  it('splits a lone job into its plan and its bound, and runs the jobs of a batch whole', async () => {
    const lone = job(6, 4);
    const report = await engine.whatIf(lone);
    expect(await parts()).toEqual({ plan: 1, bound: 1 });
    expect(JSON.stringify(report)).toBe(JSON.stringify(await runWhatIfJob(lone, inThreadEngine({ improveWork: 1e6 }))));

    const batch = [job(5, 2), job(7, 3), job(4, 6), job(8, 1)];
    const reports = await Promise.all(batch.map((j) => engine.whatIf(j)));
    // The first of the batch finds both workers idle; the others find them taken.
    expect(await parts()).toEqual({ plan: 2, bound: 2, all: 3 });
    for (const [i, j] of batch.entries())
      expect(JSON.stringify(reports[i])).toBe(
        JSON.stringify(await runWhatIfJob(j, inThreadEngine({ improveWork: 1e6 }))),
      );
  });
});
