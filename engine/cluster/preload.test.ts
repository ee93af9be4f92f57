// Pods shipped ahead of a decision (ModelMirror.preload, ClusterEngine.preload): the model holds them before
// the decision, the decision then ships none of them, names its pods by their places in the pending list, and
// plans exactly what a decision without the preload plans.
import { afterAll, describe, expect, it } from 'vitest';
import { nodePool, pod, pods, snapshot } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { normalizePlan } from '../../test/solver/normalize.ts';
import type { Pod, Snapshot } from '../domain/types.ts';
import { createEngine } from '../engine.ts';
import { pack, unpack } from '../pool/codec.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { ModelMirror, type PodRefs, type SnapshotDelta } from './delta.ts';
import { ClusterModel } from './model.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const its = defaultFakeInstanceTypes();

const pending = (n: number, cpu: string): Pod[] =>
  pods(n, { cpu, memory: '1Gi' }).map((p) => ({ ...p, unschedulable: true }));

const cluster = (pendingPods: readonly Pod[]): Snapshot =>
  snapshot({ nodePools: [nodePool()], instanceTypes: its, pendingPods: [...pendingPods] });

/** Through msgpack into the model, as a worker gets it. */
function apply(model: ClusterModel, delta: SnapshotDelta): void {
  model.apply(unpack<SnapshotDelta>(pack(delta)));
}

describe('pods shipped ahead of a decision', () => {
  it('reach the model before the decision, which then ships none of them', () => {
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    const first = pending(3, '1');
    const start = mirror.diff(cluster(first));
    apply(model, start.delta);
    start.commit();
    const later = pending(50, '500m');
    const ahead = mirror.preload(later)!;
    expect(ahead.delta.pods).toHaveLength(50);
    expect(ahead.delta.pending).toBeUndefined();
    apply(model, ahead.delta);
    ahead.commit();
    // Nothing new: no delta at all.
    expect(mirror.preload(later)).toBeUndefined();
    const s = cluster([...first, ...later]);
    const decision = mirror.diff(s);
    expect(decision.delta.pods).toBeUndefined();
    expect(decision.delta.pending).toHaveLength(53);
    apply(model, decision.delta);
    decision.commit();
    expect(model.snapshot().pendingPods.map((p) => p.uid)).toEqual(s.pendingPods.map((p) => p.uid));
  });

  it('leave the model where it is when the pods are new objects with the same content (the watch re-sent them)', () => {
    const mirror = new ModelMirror();
    const first = pending(3, '1');
    const start = mirror.diff(cluster(first));
    start.commit();
    const version = mirror.version;
    // An informer update the engine does not read (another status condition, a label-less annotation the cache
    // transform dropped) gives the same pod data in a new object: no delta, and the model's version stays, so a
    // plan solved ahead at this version still holds.
    expect(mirror.preload(first.map((p) => ({ ...p })))).toBeUndefined();
    expect(mirror.version).toBe(version);
    // One of them really changed: only that one travels.
    const again = first.map((p) => ({ ...p }));
    again[1] = { ...again[1]!, priority: 7 };
    const d = mirror.preload(again)!;
    expect(d.delta.pods?.map((p) => p.uid)).toEqual([again[1]!.uid]);
  });

  it('are not shipped to a model that does not exist yet (the first decision sends everything)', () => {
    expect(new ModelMirror().preload(pending(2, '1'))).toBeUndefined();
  });

  it('lets a decision name its pods by their places in the pending list, or by uid when one is not pending', () => {
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    const list = pending(10, '1');
    const s = cluster(list);
    const d = mirror.diff(s);
    apply(model, d.delta);
    d.commit();
    const some = [list[7]!, list[2]!, list[5]!];
    const refs = unpack<PodRefs>(pack(d.refs(some)));
    expect(refs).toEqual({ pendingAt: new Uint32Array([7, 2, 5]) });
    expect(model.podsOf(refs).map((p) => p.uid)).toEqual(some.map((p) => p.uid));
    // A pod the model holds but not as a pending pod: by uid.
    const other = pod({ cpu: '1' });
    const withOther = mirror.diff(s, [other]);
    apply(model, withOther.delta);
    withOther.commit();
    expect(withOther.refs([list[0]!, other])).toEqual({ uids: [list[0]!.uid, other.uid] });
  });
});

describe('a warm model fed ahead of its decision', () => {
  const engine = createEngine({ threads: 1, improveWork: 1e5 });
  afterAll(() => engine.close());

  it('plans what a decision without the preload plans, shipping only the pending list', async () => {
    const c = engine.cluster('preloaded');
    const first = pending(4, '1');
    await c.provision(cluster(first), first, { wellKnownLabels });
    const later = [...pending(40, '700m'), ...pending(30, '1500m')];
    await c.preload(later.slice(0, 40));
    expect(c.lastShipped()).toMatchObject({ full: false, pods: 40 });
    await c.preload(later.slice(40));
    const all = [...first, ...later];
    const s = cluster(all);
    const plan = await c.provision(s, all, { wellKnownLabels });
    expect(c.lastShipped()).toMatchObject({ full: false, pods: 0, nodes: 0 });
    const oneOff = await engine.provision(s, all, { wellKnownLabels });
    expect(normalizePlan(plan)).toEqual(normalizePlan(oneOff));
    expect(plan.newNodeClaims.length).toBeGreaterThan(0);
    await c.close();
  });
});
