// The Engine on its worker pool (engine.ts, pool.ts, engine.worker.ts): the decisions a worker makes are the
// ones the calling thread would make; a cluster's warm model stays on one worker and is told only what
// changed; a worker that dies mid-decision fails that decision and the next one rebuilds the model; a
// broken worker file or an aborted call rejects instead of hanging.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { busyCluster, pod } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { normalizePlan } from '../../test/solver/normalize.ts';
import { disrupt } from '../disruption/disrupt.ts';
import type { Snapshot } from '../domain/types.ts';
import { createEngine } from '../engine.ts';
import { provisionInput } from '../model/input.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { inThreadEngine } from '../whatif/engines.ts';
import { runWhatIfJob } from '../whatif/job.ts';
import { EnginePool, PoolError } from './pool.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const its = defaultFakeInstanceTypes();

function cluster(nodes: number, pending: number): Snapshot {
  return busyCluster({ instanceTypes: its, nodes, pending });
}

/** Resolves once the worker's event loop has been busy for 10 ms of a 20 ms look (it is running a task). */
async function busy(worker: Worker): Promise<void> {
  const end = performance.now() + 30_000;
  let last = worker.performance.eventLoopUtilization();
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    const now = worker.performance.eventLoopUtilization();
    const d = worker.performance.eventLoopUtilization(now, last);
    if (d.active >= 10 && d.utilization > 0.5) return;
    last = now;
  }
  throw new Error('the worker never got busy');
}

describe('the engine on two workers', () => {
  const engine = createEngine({ threads: 2, improveWork: 1e6 });
  afterAll(() => engine.close());

  it('provisions and disrupts as the calling thread does', async () => {
    const s = cluster(6, 30);
    const pooled = await engine.provision(s, s.pendingPods, { wellKnownLabels, exact: true });
    const local = new WasmSolver({ improve: false }).solve(
      provisionInput(s, s.pendingPods, { wellKnownLabels, exact: true }),
    );
    expect(normalizePlan(pooled)).toEqual(normalizePlan(local));
    expect(pooled.newNodeClaims.length).toBeGreaterThan(0);
    const quiet = { ...s, pendingPods: [] };
    const there = await engine.disrupt(quiet, { wellKnownLabels });
    const here = await disrupt(quiet, { wellKnownLabels, solver: new WasmSolver({ improveWork: 1e6 }) });
    expect(there.decision.kind).toBe(here.decision.kind);
    expect(there.decision.kind === 'noop' ? [] : there.decision.candidates.map((c) => c.name)).toEqual(
      here.decision.kind === 'noop' ? [] : here.decision.candidates.map((c) => c.name),
    );
  });

  it('runs a what-if job as its plan and its bound on two workers, and reports what the job reports whole', async () => {
    const built = {
      snapshot: cluster(6, 4),
      region: 'us-east-1',
      catalog: new Map(its.map((t) => [t.name, t])),
      warnings: [],
    };
    const job = { built, sources: ['test'], mode: 'consolidate' as const, exact: true };
    const stages: string[] = [];
    const split = await engine.whatIf(job, { onProgress: (_f, stage) => stages.push(stage) });
    const whole = await runWhatIfJob(job, inThreadEngine({ improveWork: 1e6 }));
    // The same report, field for field and in the same order (the JSON a user reads).
    expect(JSON.stringify(split)).toBe(JSON.stringify(whole));
    expect(split.lowerBoundStatus).toBe('optimal');
    expect(split.lowerBoundPerHour).toBeGreaterThan(0);
    expect(stages).toContain('lower bound');
  });

  it('keeps a cluster on one worker, tells it only what changed, and leaves the other worker to one-off work', async () => {
    const c = engine.cluster('warm');
    const s = cluster(40, 5);
    await c.provision(s, s.pendingPods, { wellKnownLabels });
    expect(c.lastShipped()).toMatchObject({ full: true, nodes: 40, pods: 45, types: its.length });
    const owner = engine.pool.owners.get('warm');
    // One more pending pod and one node's labels changed: that is all that travels.
    const extra = { ...pod({ cpu: '1' }), unschedulable: true };
    const next = {
      ...s,
      nodes: s.nodes.map((n, i) => (i === 9 ? { ...n, labels: { ...n.labels, team: 'x' } } : { ...n })),
      pendingPods: [...s.pendingPods, extra],
    };
    const plan = await c.provision(next, next.pendingPods, { wellKnownLabels });
    expect(c.lastShipped()).toMatchObject({ full: false, nodes: 1, pods: 1, types: 0 });
    expect(plan.newNodeClaims.flatMap((k) => k.pods).concat([...plan.existing.values()].flat())).toContain(extra.uid);
    expect(engine.pool.owners.get('warm')).toBe(owner);
    await engine.provision(s, s.pendingPods, { wellKnownLabels });
    expect(engine.pool.owners.get('warm')).toBe(owner);
    await c.close();
    expect(engine.pool.owners.has('warm')).toBe(false);
  });

  it("decodes a model's strings each on its own, not as slices of the message's strings (codec.ts)", async () => {
    const c = engine.cluster('strings');
    const s = cluster(4, 4);
    await c.provision(s, s.pendingPods, { wellKnownLabels });
    const memory = await engine.pool.memory();
    expect(memory.map((m) => m.nativeStrings)).toEqual([false, false]);
    expect(memory.flatMap((m) => m.models)).toContain('strings');
    await c.close();
  });

  it('fails a decision whose worker dies, and makes the next one on a rebuilt model', async () => {
    const c = engine.cluster('crash');
    const s = cluster(30, 10);
    await c.provision(s, s.pendingPods, { wellKnownLabels });
    const owner = engine.pool.owners.get('crash');
    // Many pod shapes, so the decision keeps its worker busy for a while.
    const shapes = Array.from({ length: 4000 }, (_, i) =>
      pod({ cpu: `${100 + (i % 400)}m`, memory: `${128 + (i % 97)}Mi` }),
    );
    const big = { ...s, pendingPods: shapes.map((p) => ({ ...p, unschedulable: true })) };
    const worker = engine.pool.workerThreads().find((w) => w.threadId === owner)!;
    let settled = false;
    const dying = c.provision(big, big.pendingPods, { wellKnownLabels });
    dying.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    // Stop the model's worker while it decides: once its event loop is seen busy, with the call still open.
    await busy(worker);
    expect(settled).toBe(false);
    await worker.terminate();
    await expect(dying).rejects.toThrow(PoolError);
    const after = await c.provision(s, s.pendingPods, { wellKnownLabels });
    expect(c.lastShipped()?.full).toBe(true);
    expect(after.unschedulable).toEqual([]);
    await c.close();
  });
});

describe('an engine in trouble', () => {
  it('rejects a call that was aborted, instead of hanging', async () => {
    const engine = createEngine({ threads: 1 });
    try {
      const ctl = new AbortController();
      ctl.abort(new Error('caller gave up'));
      const s = cluster(2, 2);
      await expect(engine.provision(s, s.pendingPods, { signal: ctl.signal })).rejects.toThrow(PoolError);
    } finally {
      await engine.close();
    }
  });

  it('surfaces a worker that cannot start as a rejected call, not a hang', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-pool-'));
    const file = join(dir, 'broken.worker.mjs');
    writeFileSync(file, "throw new Error('worker failed to load');\n");
    const engine = createEngine({ threads: 1, filename: pathToFileURL(file).href, timeoutMs: 20_000 });
    try {
      const s = cluster(1, 1);
      await expect(engine.provision(s, s.pendingPods)).rejects.toThrow(/engine worker failed|aborted/);
    } finally {
      await engine.close();
    }
  });

  it('fails every task queued behind workers that cannot start, with no timeout to end the wait', async () => {
    // piscina replaces its first workers when they die, but not the replacements, which fail while they start: the
    // tasks still queued then had no worker left to take them (a what-if batch, which sets no timeout, hung).
    const dir = mkdtempSync(join(tmpdir(), 'kts-pool-'));
    const file = join(dir, 'broken.worker.mjs');
    writeFileSync(file, "throw new Error('worker failed to load');\n");
    const pool = new EnginePool({ threads: 2, filename: pathToFileURL(file).href });
    try {
      const tasks = Array.from({ length: 5 }, (_, i) => pool.run({ kind: 'drop', model: `m${i}` }, { work: i }));
      const settled = await Promise.allSettled(tasks);
      for (const r of settled) {
        expect(r.status).toBe('rejected');
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(PoolError);
        expect(String((r as PromiseRejectedResult).reason.message)).toMatch(/worker failed to load/);
      }
      // The tasks no worker ever took say so.
      expect(settled.map((r) => String((r as PromiseRejectedResult).reason.message))).toContain(
        'engine worker failed to start: worker failed to load',
      );
      // A task given after that starts a worker again, and fails the same way.
      await expect(pool.run({ kind: 'drop', model: 'later' }, {})).rejects.toThrow(
        'engine worker failed to start: worker failed to load',
      );
    } finally {
      await pool.close();
    }
  }, 20_000);
});
