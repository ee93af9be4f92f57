// A worker's idle trim (idle-trim.ts) on a real solver, with the timers faked: the instance is let go only after
// the worker has been idle for the whole idle time, a task that starts first keeps it, memory within the limit
// is kept, and the solver makes the same plan on the fresh instance afterwards. A busy worker (never idle) lets an
// instance go once two windows of solves needed far less than it holds, and keeps it through solves that need as
// much. Then in a pool worker, with the idle time shortened: the worker wires the trim around its tasks and takes
// the pool's settings.
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { nodePool, pods, snapshot } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { provisionInput } from '../model/input.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { createEngine } from '../engine.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { IdleTrim } from './idle-trim.ts';

const s = snapshot({
  nodePools: [nodePool()],
  instanceTypes: defaultFakeInstanceTypes(),
  pendingPods: pods(40, { cpu: '1', memory: '1Gi' }).map((p) => ({ ...p, unschedulable: true })),
});
const input = provisionInput(s, s.pendingPods, { wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS) });
const IDLE_MS = 5_000;

/** A solver that has solved once (its instance holds wasm memory) and a trim over it that keeps `retainBytes`. */
function warm(retainBytes: number): { solver: WasmSolver; trim: IdleTrim; plan: string } {
  const solver = new WasmSolver({ build: 'release', improveWork: 1e5 });
  const plan = JSON.stringify(solver.solve(input));
  return { solver, trim: new IdleTrim(solver, { idleMs: IDLE_MS, retainBytes }), plan };
}

/** One task as the worker runs it: busy, work, idle. */
function task(solver: WasmSolver, trim: IdleTrim): string {
  trim.busy();
  try {
    return JSON.stringify(solver.solve(input));
  } finally {
    trim.idle();
  }
}

describe('the idle trim', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it('lets the instance go once the worker has been idle for the idle time, and plans stay the same', () => {
    const { solver, trim, plan } = warm(0);
    expect(task(solver, trim)).toBe(plan);
    expect(solver.memoryBytes()).toBeGreaterThan(0);
    vi.advanceTimersByTime(IDLE_MS - 1);
    expect(solver.memoryBytes()).toBeGreaterThan(0);
    vi.advanceTimersByTime(1);
    expect(solver.memoryBytes()).toBe(0);
    expect(trim.trims).toBe(1);
    // The next task instantiates the module afresh and makes the same plan.
    expect(task(solver, trim)).toBe(plan);
    expect(solver.memoryBytes()).toBeGreaterThan(0);
  });

  it('keeps the instance while tasks come closer together than the idle time', () => {
    const { solver, trim } = warm(0);
    for (let i = 0; i < 4; i++) {
      task(solver, trim);
      vi.advanceTimersByTime(IDLE_MS - 10);
    }
    expect(solver.memoryBytes()).toBeGreaterThan(0);
    // A task running (busy, not yet idle) is never trimmed under, however long it takes.
    trim.busy();
    vi.advanceTimersByTime(IDLE_MS * 10);
    expect(solver.memoryBytes()).toBeGreaterThan(0);
    trim.idle();
    vi.advanceTimersByTime(IDLE_MS);
    expect(solver.memoryBytes()).toBe(0);
    expect(trim.trims).toBe(1);
  });

  it('keeps memory within the limit', () => {
    const { solver } = warm(0);
    const trim = new IdleTrim(solver, { idleMs: IDLE_MS, retainBytes: solver.memoryBytes() });
    task(solver, trim);
    vi.advanceTimersByTime(IDLE_MS * 2);
    expect(solver.memoryBytes()).toBeGreaterThan(0);
    expect(trim.trims).toBe(0);
  });
});

describe('the trim of a busy worker', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  /** 2,000 pods: the solve grows the instance's memory past the module's initial 1 MiB, to 2 MiB. */
  const bigS = snapshot({
    nodePools: [nodePool()],
    instanceTypes: defaultFakeInstanceTypes(),
    pendingPods: pods(2_000, { cpu: '1', memory: '1Gi' }).map((p) => ({ ...p, unschedulable: true })),
  });
  const big = provisionInput(bigS, bigS.pendingPods, { wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS) });
  const MiB = 1024 * 1024;

  /** A solver, its trim on a clock the test moves, and one task as the worker runs it (the clock moves 1 s a task). */
  function busyWorker(): { solver: WasmSolver; trim: IdleTrim; run: (i: typeof input) => string } {
    let now = 0;
    const solver = new WasmSolver({ build: 'release', improveWork: 1e5 });
    // The floor at the module's initial memory: a fresh instance is never let go again.
    const opts = { idleMs: IDLE_MS, windowMs: 5_000, retainBytes: 64 * MiB, floorBytes: MiB };
    const trim = new IdleTrim(solver, opts, () => now);
    const run = (i: typeof input): string => {
      trim.busy();
      try {
        return JSON.stringify(solver.solve(i));
      } finally {
        now += 1_000;
        trim.idle();
      }
    };
    return { solver, trim, run };
  }

  it('lets an outsized instance go once two windows of solves needed far less, never idle, and plans stay the same', async () => {
    const { solver, trim, run } = busyWorker();
    const bigPlan = run(big);
    expect(solver.memoryBytes()).toBe(2 * MiB);
    const plan = run(input);
    // The window with the large solve (0-5 s), then the one after it (5-10 s): the memory stays while either is
    // recent, and goes with the task that ends the second one.
    for (let i = 0; i < 7; i++) expect(run(input)).toBe(plan);
    expect(trim.trims).toBe(0);
    expect(solver.memoryBytes()).toBe(2 * MiB);
    run(input);
    expect(trim.trims).toBe(1);
    // The fresh instance is made after the task (not in the next solve), with the module's initial memory.
    expect(solver.memoryBytes()).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(solver.memoryBytes()).toBe(MiB);
    expect(run(input)).toBe(plan);
    expect(run(big)).toBe(bigPlan);
    expect(trim.trims).toBe(1);
  });

  it("reads a solve's need: the most memory one solve used since the last reading, within the memory", () => {
    const solver = new WasmSolver({ build: 'release', improveWork: 1e5 });
    expect(solver.takeNeed()).toBe(0);
    solver.solve(input);
    solver.solve(big);
    solver.solve(input);
    const need = solver.takeNeed();
    expect(need).toBeGreaterThan(MiB);
    expect(need).toBeLessThanOrEqual(solver.memoryBytes());
    expect(solver.takeNeed()).toBe(0);
    solver.solve(input);
    expect(solver.takeNeed()).toBeLessThan(need / 4);
  });

  it('keeps the instance through a burst of solves that each need about as much', () => {
    const { solver, trim, run } = busyWorker();
    for (let i = 0; i < 30; i++) run(big);
    expect(trim.trims).toBe(0);
    expect(solver.memoryBytes()).toBe(2 * MiB);
  });
});

describe('the idle trim in a pool worker', () => {
  const quick = createEngine({ threads: 1, idleTrim: { idleMs: 20, retainBytes: 0 } });
  const usual = createEngine({ threads: 1 });
  afterAll(() => Promise.all([quick.close(), usual.close()]));

  it("gives back the wasm memory once idle for the pool's idle time, and solves the same afterwards", async () => {
    const first = await quick.provision(s, s.pendingPods);
    // Memory readings are tasks too (each restarts the idle time): read with gaps longer than it.
    const end = performance.now() + 20_000;
    let m = (await quick.pool.memory())[0]!;
    while (m.trims === 0 && performance.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      m = (await quick.pool.memory())[0]!;
    }
    expect(m.trims).toBe(1);
    expect(m.wasm).toBe(0);
    expect(await quick.provision(s, s.pendingPods)).toEqual(first);
    expect((await quick.pool.memory())[0]!.wasm).toBeGreaterThan(0);
  });

  it('keeps it by default between tasks (64 MiB kept, 5 s idle)', async () => {
    await usual.provision(s, s.pendingPods);
    const m = (await usual.pool.memory())[0]!;
    expect(m.wasm).toBeGreaterThan(0);
    expect(m.trims).toBe(0);
  });
});
