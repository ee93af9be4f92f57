import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import type { ProvisionInput } from '../model/types.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { nodePool, pods } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { normalizePlan } from '../../test/solver/normalize.ts';
import { PooledSolver, PoolError, SolverPool } from './pool.ts';

const input: ProvisionInput = {
  nodePools: [nodePool()],
  instanceTypes: new Map([['default', defaultFakeInstanceTypes()]]),
  nodes: [],
  pods: [...pods(30, { cpu: '1', memory: '1Gi' }), ...pods(7, { cpu: '250m', memory: '3Gi' })],
  daemonSets: [],
  options: DEFAULT_ENGINE_OPTIONS,
  wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS),
};

describe('the solver pool', () => {
  const pool = new SolverPool({ threads: 2 });
  afterAll(() => pool.close());

  it('makes the same plan in a worker as in the calling thread', async () => {
    const pooled = await new PooledSolver(pool).solve(input);
    const local = new WasmSolver().solve(input);
    expect(normalizePlan(pooled)).toEqual(normalizePlan(local));
    expect(pooled.newNodeClaims.length).toBeGreaterThan(0);
  });

  it('runs concurrent solves on both workers and keeps them apart', async () => {
    const small = { ...input, pods: input.pods.slice(0, 3) };
    const [a, b, c] = await Promise.all([new PooledSolver(pool).solve(input), new PooledSolver(pool).solve(small), new PooledSolver(pool).solve(input)]);
    expect(normalizePlan(a)).toEqual(normalizePlan(c));
    expect(b.newNodeClaims.flatMap((x) => x.pods).length).toBe(3);
  });

  it('rejects an aborted call instead of hanging', async () => {
    const ctl = new AbortController();
    ctl.abort(new Error('caller gave up'));
    await expect(new PooledSolver(pool, { signal: ctl.signal }).solve(input)).rejects.toThrow(PoolError);
  });
});

describe('a pool whose worker cannot start', () => {
  it('surfaces the failure as a rejected call, not a hang', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-pool-'));
    const file = join(dir, 'broken.worker.mjs');
    writeFileSync(file, "throw new Error('worker failed to load');\n");
    const broken = new SolverPool({ threads: 1, filename: pathToFileURL(file).href });
    try {
      await expect(new PooledSolver(broken, { timeoutMs: 10_000 }).solve(input)).rejects.toThrow(/solver worker failed|aborted/);
    } finally {
      await broken.close();
    }
  });
});
