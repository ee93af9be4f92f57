// A static NodePool's decisions on the engine's workers (engine/cluster/ops.ts: staticClaim, staticScaleDown):
// the same answers as the in-thread functions, through a warm model and one-off, and a clear error for a pool
// the snapshot does not have.
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../engine.ts';
import { staticScaleDown, templateClaim } from '../local.ts';
import { fakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';

const engine = createEngine({ threads: 1, build: 'debug' });
afterAll(() => engine.close());

const pool = nodePool({ name: 'static', replicas: 2 });
const types = fakeInstanceTypes(4);

describe('static NodePool decisions on the engine', () => {
  it('builds the template NodeClaim on a worker, as the in-thread function does', async () => {
    const s = snapshot({ nodePools: [pool], instanceTypes: types });
    const local = templateClaim(s, pool);
    expect(local).toBeDefined();
    expect(await engine.staticClaim(s, 'static')).toEqual(local);
    const warm = engine.cluster('static-ops-claim');
    expect(await warm.staticClaim(s, 'static')).toEqual(local);
    // Nothing to launch: undefined crosses back as undefined.
    expect(await warm.staticClaim(snapshot({ nodePools: [pool], instanceTypes: [] }), 'static')).toBeUndefined();
    await warm.close();
  });

  it('ranks a scale-down on a worker: unlaunched first, then empty nodes, then the cheapest to disrupt', async () => {
    const busy = stateNode({ name: 'busy', nodePool: 'static', pods: [pod({ name: 'web' })] });
    const empty = stateNode({ name: 'empty', nodePool: 'static' });
    const other = stateNode({ name: 'other', nodePool: 'default' });
    const s = snapshot({ nodePools: [pool], nodes: [busy, empty, other], now: 1_000 });
    const local = staticScaleDown(s.nodes, s.now, pool, ['nc-pending'], 3);
    expect(local).toEqual(['nc-pending', 'nc-empty', 'nc-busy']);
    expect(await engine.staticScaleDown(s, 'static', ['nc-pending'], 3)).toEqual(local);
    const warm = engine.cluster('static-ops-scale');
    expect(await warm.staticScaleDown(s, 'static', [], 1)).toEqual(['nc-empty']);
    await warm.close();
  });

  it('refuses a pool the snapshot does not have, naming it', async () => {
    await expect(engine.staticClaim(snapshot({ nodePools: [pool] }), 'missing')).rejects.toThrow(
      /the snapshot has no NodePool missing/,
    );
  });
});
