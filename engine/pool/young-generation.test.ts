// The floor under the pool's workers' young generation (young-generation.ts): the pool's workers start with their
// new space at the floor, V8's default comes back for isolates created once they run, several pools starting at
// once keep the largest floor until the last is up, and a bad floor is refused naming the option.
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { EnginePool } from './pool.ts';
import { holdMinSemiSpace, WORKER_MIN_SEMI_SPACE_MB } from './young-generation.ts';

const MiB = 2 ** 20;

/** The new space's capacity, MiB, of a plain worker created now (before it allocates anything much). */
async function freshWorkerNewSpace(): Promise<number> {
  const w = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const s = require('node:v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
     parentPort.postMessage(s.space_size);`,
    { eval: true },
  );
  try {
    const [bytes] = (await new Promise((resolve, reject) => {
      w.once('message', (m) => resolve([m]));
      w.once('error', reject);
    })) as [number];
    return bytes / MiB;
  } finally {
    await w.terminate();
  }
}

describe("the pool's workers' young generation", () => {
  const pools: EnginePool[] = [];
  afterAll(() => Promise.all(pools.map((p) => p.close())));
  /** A pool of one worker that reports its new space as it started (young-generation.fixture.mjs), MiB. */
  const startedAt = async (minSemiSpaceMb?: number): Promise<number> => {
    const p = new EnginePool({
      threads: 1,
      filename: new URL('./young-generation.fixture.mjs', import.meta.url).href,
      ...(minSemiSpaceMb !== undefined ? { minSemiSpaceMb } : {}),
    });
    pools.push(p);
    await p.ready;
    const reply = await p.run({ kind: 'memory' }, {});
    if (!reply.ok) throw new Error('the fixture worker failed');
    return (reply.value as number) / MiB;
  };

  it("starts at the floor in the pool's workers and at V8's default in isolates made after they run", async () => {
    const defaultSize = await freshWorkerNewSpace();
    expect(defaultSize).toBeLessThan(WORKER_MIN_SEMI_SPACE_MB);
    expect(await startedAt()).toBeGreaterThanOrEqual(WORKER_MIN_SEMI_SPACE_MB);
    // The flag is back to V8's default: a worker made now (and the main thread's heap all along) is not floored.
    expect(await freshWorkerNewSpace()).toBe(defaultSize);
  });

  it('starts a worker that replaces a dead one at the floor too', async () => {
    const p = new EnginePool({ threads: 1, filename: new URL('./young-generation.fixture.mjs', import.meta.url).href });
    pools.push(p);
    await p.ready;
    const [first] = p.workerThreads();
    await first!.terminate();
    // piscina replaces the worker when it sees it exit; the replacement answers the next task.
    const reply = await p.run({ kind: 'memory' }, {});
    expect(p.workerThreads()[0]).not.toBe(first);
    expect(reply.ok && (reply.value as number) / MiB).toBeGreaterThanOrEqual(WORKER_MIN_SEMI_SPACE_MB);
    expect(await freshWorkerNewSpace()).toBeLessThan(WORKER_MIN_SEMI_SPACE_MB);
  });

  it("leaves V8's default when the floor is 0", async () => {
    expect(await startedAt(0)).toBeLessThan(WORKER_MIN_SEMI_SPACE_MB);
  });

  it('keeps the largest floor of the starts under way until the last ends', async () => {
    const defaultSize = await freshWorkerNewSpace();
    const small = holdMinSemiSpace(8);
    const large = holdMinSemiSpace(16);
    expect(await freshWorkerNewSpace()).toBe(16);
    large();
    expect(await freshWorkerNewSpace()).toBe(8);
    large(); // a second release changes nothing
    expect(await freshWorkerNewSpace()).toBe(8);
    small();
    expect(await freshWorkerNewSpace()).toBe(defaultSize);
  });

  it('refuses a floor that is not a whole number of MiB, naming the option', () => {
    expect(() => holdMinSemiSpace(-1)).toThrow(/minSemiSpaceMb.*-1/);
    expect(() => holdMinSemiSpace(1.5)).toThrow(/minSemiSpaceMb.*1\.5/);
    expect(() => new EnginePool({ threads: 1, minSemiSpaceMb: Number.NaN })).toThrow(/minSemiSpaceMb.*NaN/);
  });
});
