// SolverPool.runTask: TypeScript modules run in pool workers (tsx registered inside the worker).
import { afterAll, describe, expect, it } from 'vitest';
import { SolverPool } from './pool.ts';

const pool = new SolverPool({ threads: 2 });
afterAll(() => pool.close());
const FIXTURE = new URL('./tasks.fixture.ts', import.meta.url).href;

describe('SolverPool.runTask', () => {
  it('runs an exported TypeScript function in worker threads and returns its result', async () => {
    const results = await Promise.all([1, 2, 3, 4].map((n) => pool.runTask<{ n: number; thread: number }>(FIXTURE, 'double', { n })));
    expect(results.map((r) => r.n)).toEqual([2, 4, 6, 8]);
    expect(results.every((r) => r.thread > 0)).toBe(true);
    expect(pool.workerErrors).toEqual([]);
  });

  it('rejects with the task error, or when the export does not exist', async () => {
    await expect(pool.runTask(FIXTURE, 'fail', { why: 'bad input' })).rejects.toThrow('task failed: bad input');
    await expect(pool.runTask(FIXTURE, 'nothing', {})).rejects.toThrow(`task module ${FIXTURE} has no exported function nothing`);
  });

  it('rejects when the caller aborts', async () => {
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(pool.runTask(FIXTURE, 'double', { n: 1 }, { signal: ac.signal })).rejects.toThrow('task aborted: stop');
  });
});
