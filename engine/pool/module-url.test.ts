// moduleUrl / workerModule: a module loaded by URL is named as the caller runs (source .ts or compiled .js),
// and a TypeScript worker started from source gets tsx's loader in its own thread.
import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { moduleUrl, workerModule } from './module-url.ts';

describe('moduleUrl', () => {
  it('keeps the source name for a caller that runs from source', () => {
    expect(moduleUrl('./solver.worker.ts', 'file:///app/engine/pool/pool.ts')).toBe(
      'file:///app/engine/pool/solver.worker.ts',
    );
    expect(moduleUrl('../whatif/job.ts', 'file:///repo/cli/commands/whatif.ts')).toBe('file:///repo/cli/whatif/job.ts');
  });

  it('names the compiled sibling for a caller that runs from dist/', () => {
    expect(moduleUrl('./solver.worker.ts', 'file:///app/dist/engine/pool/pool.js')).toBe(
      'file:///app/dist/engine/pool/solver.worker.js',
    );
    expect(moduleUrl('./x.mts', 'file:///app/dist/a.js')).toBe('file:///app/dist/x.mjs');
    // Anything that is not a TypeScript module keeps its name (data files, plain .mjs).
    expect(moduleUrl('../../examples/guide/guide-01.yaml', 'file:///app/dist/cli/whatif/job.js')).toBe(
      'file:///app/dist/examples/guide/guide-01.yaml',
    );
  });
});

describe('workerModule', () => {
  it('needs no loader for a compiled worker', () => {
    expect(workerModule('./solver.worker.ts', 'file:///app/dist/engine/pool/pool.js')).toEqual({
      filename: 'file:///app/dist/engine/pool/solver.worker.js',
    });
  });

  it('starts a TypeScript worker from source with tsx loaded in the worker thread', async () => {
    const w = workerModule('./module-url.fixture.ts', import.meta.url);
    expect(w.execArgv).toContain('--import');
    const pool = new Piscina({ filename: w.filename, execArgv: w.execArgv!, minThreads: 1, maxThreads: 1 });
    try {
      const r = (await pool.run({ n: 21 }, { name: 'double' })) as { n: number; thread: number };
      expect(r.n).toBe(42);
      expect(r.thread).toBeGreaterThan(0);
    } finally {
      await pool.destroy();
    }
  });
});
