// A warm cluster model and its caller's mirror (delta.ts, model.ts): after the first decision only changed
// objects travel, the model keeps every object it was not told changed (so its caches keep their answers),
// and a model that missed a delta refuses it instead of deciding on a wrong cluster.
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { nodePool, pod, pods, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { normalizePlan } from '../../test/solver/normalize.ts';
import type { Pod, Snapshot, StateNode } from '../domain/types.ts';
import { provisionInput } from '../model/input.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { pack, unpack } from '../pool/codec.ts';
import { ModelMirror, type NodeRecord, type SnapshotDelta } from './delta.ts';
import { ClusterModel, StaleModelError } from './model.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const its = defaultFakeInstanceTypes();

/** A cluster of `n` nodes with two pods each, and pending pods; joined afresh (new node objects) on each call, like cluster state. */
function cluster(n: number, pending = pods(3, { cpu: '1' })) {
  const bound = Array.from({ length: n }, (_, i) => pods(2, { cpu: '500m', memory: '512Mi', nodeName: `n${i}` }));
  const join = (changes: Partial<Record<number, Partial<StateNode>>> = {}, pendingPods = pending): Snapshot =>
    snapshot({
      nodePools: [nodePool()],
      instanceTypes: its,
      pendingPods,
      nodes: bound.map((ps, i) => ({
        ...stateNode({
          name: `n${i}`,
          instanceType: its[0]!,
          zone: 'test-zone-1',
          capacityType: 'on-demand',
          pods: ps,
        }),
        ...changes[i],
      })),
    });
  return { bound, join };
}

/** Ships the delta the way the engine does (msgpack), into the model. */
function ship(mirror: ModelMirror, model: ClusterModel, s: Snapshot): SnapshotDelta {
  const { delta, commit } = mirror.diff(s);
  model.apply(unpack<SnapshotDelta>(pack(delta)));
  commit();
  return delta;
}

/** A node record as a delta ships it: the node without its pods, and its pods' uids. */
function record(n: StateNode, pods: readonly Pod[]): NodeRecord {
  const { pods: _pods, ...rest } = n;
  return { node: rest, pods: pods.map((p) => p.uid) };
}

/** Applies deltas written by hand, each at the model's next version, the way the engine ships them (msgpack). */
function byHand(model: ClusterModel): (change: Omit<SnapshotDelta, 'base' | 'version' | 'now'>) => void {
  let version = 1;
  return (change) => {
    model.apply(unpack<SnapshotDelta>(pack({ base: version, version: version + 1, now: 0, ...change })));
    version++;
  };
}

describe('a warm cluster model', () => {
  it('holds no more than the cluster has after pods come and go on its nodes', () => {
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    for (let round = 0; round < 5; round++) {
      // Every round the nodes run new pods (new uids), as churn replaces them.
      ship(mirror, model, cluster(4, []).join());
      // Each pod is on its own node (its nodeName's): no link kept for it.
      expect(model.held()).toEqual({ pods: 8, nodes: 4, podLinks: 0 });
    }
    ship(mirror, model, cluster(2, []).join());
    expect(model.held()).toEqual({ pods: 4, nodes: 2, podLinks: 0 });
  });

  // The mirror refuses a snapshot that lists one pod on two nodes (delta.ts, listedTwice), but the model holds one on
  // two while it applies a delta's node records one after another (a pod moving from a later record's node to an
  // earlier one's) and while it adopts carried-out commands: these deltas after the first are written by hand.
  it('rebuilds every node that lists a changed pod, also while two nodes list it', () => {
    const moving = pod({ name: 'moving', cpu: '100m', nodeName: 'n1' });
    const others = [pod({ cpu: '100m', nodeName: 'n0' }), pod({ cpu: '100m', nodeName: 'n1' })];
    const nodes = ['n0', 'n1'].map((name) =>
      stateNode({ name, instanceType: its[0]!, zone: 'test-zone-1', capacityType: 'on-demand' }),
    );
    const model = new ClusterModel();
    ship(
      new ModelMirror(),
      model,
      snapshot({
        nodePools: [nodePool()],
        instanceTypes: its,
        nodes: [
          { ...nodes[0]!, pods: [others[0]!] },
          { ...nodes[1]!, pods: [others[1]!, moving] },
        ],
      }),
    );
    const step = byHand(model);
    // n0 lists a pod bound to n1 too: the one link kept.
    step({ nodes: [record(nodes[0]!, [others[0]!, moving])] });
    expect(model.held()).toEqual({ pods: 3, nodes: 2, podLinks: 1 });
    // Only the pod changes: both nodes that list it are rebuilt.
    const moved = { ...moving, labels: { changed: 'yes' } };
    step({ pods: [moved] });
    expect(model.lastApply.nodesRebuilt).toBe(2);
    expect(model.snapshot().nodes.map((n) => n.pods.find((p) => p.name === 'moving')?.labels)).toEqual([
      { changed: 'yes' },
      { changed: 'yes' },
    ]);
    // n0 lets go of it; a later change to the pod rebuilds n1 only.
    step({ nodes: [record(nodes[0]!, [others[0]!])] });
    step({ pods: [{ ...moved, labels: { changed: 'again' } }] });
    expect(model.lastApply.nodesRebuilt).toBe(1);
    expect(model.snapshot().nodes[1]!.pods.find((p) => p.name === 'moving')?.labels).toEqual({ changed: 'again' });
    expect(model.held()).toEqual({ pods: 3, nodes: 2, podLinks: 0 });
  });

  it("keeps the link of a node that still lists a pod whose nodeName changed, and rebuilds it on the pod's next change", () => {
    const p = pod({ name: 'p', cpu: '100m', nodeName: 'n0' });
    const nodes = ['n0', 'n1'].map((name) =>
      stateNode({ name, instanceType: its[0]!, zone: 'test-zone-1', capacityType: 'on-demand' }),
    );
    const model = new ClusterModel();
    ship(
      new ModelMirror(),
      model,
      snapshot({ nodePools: [nodePool()], instanceTypes: its, nodes: [{ ...nodes[0]!, pods: [p] }, nodes[1]!] }),
    );
    expect(model.held().podLinks).toBe(0);
    const step = byHand(model);
    // The pod now names n1, which lists it; n0 lists it still (its record unchanged: only the pod is shipped).
    const moved = { ...p, nodeName: 'n1' };
    step({ podPatches: [[p.uid, { nodeName: 'n1' }]], nodes: [record(nodes[1]!, [moved])] });
    expect(model.held().podLinks).toBe(1);
    const labelsOf = () => model.snapshot().nodes.map((n) => n.pods.find((x) => x.name === 'p')?.labels);
    step({ pods: [{ ...moved, labels: { v: '2' } }] });
    expect(model.lastApply.nodesRebuilt).toBe(2);
    expect(labelsOf()).toEqual([{ v: '2' }, { v: '2' }]);
    // n0 lets go of it: no link kept, and a change rebuilds n1 only.
    step({ nodes: [record(nodes[0]!, [])] });
    expect(model.held()).toEqual({ pods: 1, nodes: 2, podLinks: 0 });
    step({ pods: [{ ...moved, labels: { v: '3' } }] });
    expect(model.lastApply.nodesRebuilt).toBe(1);
    expect(labelsOf()).toEqual([undefined, { v: '3' }]);
  });

  it('gets everything once, then only what changed', () => {
    const c = cluster(20);
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    const first = ship(mirror, model, c.join());
    expect(first.base).toBe(0);
    expect(first.nodes).toHaveLength(20);
    expect(first.pods).toHaveLength(43);
    expect(first.types).toHaveLength(its.length);
    // The same cluster joined again (new node objects, same content): nothing travels.
    const again = ship(mirror, model, c.join());
    expect(again.nodes ?? []).toHaveLength(0);
    expect(again.pods ?? []).toHaveLength(0);
    expect(again.types ?? []).toHaveLength(0);
    expect(again.catalog).toBeUndefined();
    // One node tainted and one pod on another node replaced: exactly those travel; the model rebuilds both nodes.
    c.bound[3]![0] = { ...c.bound[3]![0]!, labels: { app: 'changed' } };
    const changed = ship(mirror, model, c.join({ 7: { taints: [{ key: 'maintenance', effect: 'NoSchedule' }] } }));
    expect(changed.nodes?.map((r) => r.node.name)).toEqual(['n7']);
    expect(changed.pods?.map((p) => p.labels['app'])).toEqual(['changed']);
    expect(model.lastApply).toEqual({ pods: 1, nodes: 1, nodesRebuilt: 2, types: 0 });
    expect(model.snapshot().nodes[3]!.pods[0]!.labels).toEqual({ app: 'changed' });
  });

  it('ships a pod that was bound or moved as its changed fields, and the model holds the same pod', () => {
    const c = cluster(4);
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    ship(mirror, model, c.join());
    // A pod moved to another node (nodeName changes) and a pending pod bound (nodeName new, phase and
    // unschedulable change): fields only. A pod whose labels changed travels whole.
    const moved = { ...c.bound[1]![0]!, nodeName: 'n2' };
    c.bound[1]!.splice(0, 1);
    c.bound[2]!.push(moved);
    const [bound, ...stillPending] = c.join().pendingPods;
    const placed = { ...bound!, nodeName: 'n3', phase: 'Running' as const, unschedulable: false };
    c.bound[3]!.push(placed);
    c.bound[0]![0] = { ...c.bound[0]![0]!, labels: { app: 'relabelled' } };
    const d = ship(mirror, model, c.join({}, stillPending));
    expect(d.pods?.map((p) => p.uid)).toEqual([c.bound[0]![0]!.uid]);
    expect(d.podPatches).toEqual([
      [moved.uid, { nodeName: 'n2' }],
      [placed.uid, { nodeName: 'n3', phase: 'Running', unschedulable: false }],
    ]);
    expect(model.lastApply.pods).toBe(3);
    const s = model.snapshot();
    expect(s.nodes[2]!.pods.at(-1)).toEqual(moved);
    expect(s.nodes[3]!.pods.at(-1)).toEqual(placed);
    expect(s.nodes[0]!.pods[0]!.labels).toEqual({ app: 'relabelled' });
    expect(s.pendingPods.map((p) => p.uid)).toEqual(stillPending.map((p) => p.uid));
  });

  it('keeps the objects it was not told changed, so their cached work is reused', () => {
    const c = cluster(10);
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    ship(mirror, model, c.join());
    const before = model.snapshot();
    const solver = new WasmSolver({ improve: false });
    const solve = () =>
      solver.solve(
        provisionInput(model.snapshot(), model.snapshot().pendingPods, { caches: model.caches, wellKnownLabels }),
      );
    solve();
    const starts = model.caches.stats()['node start']!;
    ship(mirror, model, c.join({ 4: { labels: { ...c.join().nodes[4]!.labels, team: 'a' } } }));
    const after = model.snapshot();
    expect(after.nodes.filter((n, i) => n !== before.nodes[i]).map((n) => n.name)).toEqual(['n4']);
    expect(after.instanceTypes.get('default')).toBe(before.instanceTypes.get('default'));
    expect(after.pendingPods).toBe(before.pendingPods);
    solve();
    // The second solve worked out only the changed node's start; the template came from the cache.
    const next = model.caches.stats();
    expect(next['node start']!.misses - starts.misses).toBe(1);
    expect(next['templates']!.hits).toBeGreaterThan(0);
  });

  it("decides on its copy exactly as on the caller's snapshot", () => {
    const c = cluster(30, pods(40, { cpu: '700m', memory: '1Gi' }));
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    const s = c.join();
    ship(mirror, model, s);
    const solver = new WasmSolver({ improve: false });
    const here = solver.solve(provisionInput(s, s.pendingPods, { wellKnownLabels }));
    const there = new WasmSolver({ improve: false }).solve(
      provisionInput(model.snapshot(), model.snapshot().pendingPods, { caches: model.caches, wellKnownLabels }),
    );
    expect(normalizePlan(there)).toEqual(normalizePlan(here));
  });

  it('refuses a delta made for another version, and then accepts only a full one', () => {
    const c = cluster(3);
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    ship(mirror, model, c.join());
    const stale = new ModelMirror();
    stale.diff(c.join()).commit();
    // This mirror thinks the model is at version 1 of its own history, twice over: the model is at 1 too, so
    // the next delta (base 1) applies; one made after a lost delta (base 2) is refused.
    const lost = stale.diff(c.join());
    lost.commit();
    const skipped = stale.diff(c.join({ 1: { taints: [{ key: 'x', effect: 'NoSchedule' }] } })).delta;
    expect(() => model.apply(skipped)).toThrow(StaleModelError);
    mirror.reset();
    const full = ship(mirror, model, c.join());
    expect(full.base).toBe(0);
    expect(model.snapshot().nodes).toHaveLength(3);
  });

  it('drops what the caller no longer has', () => {
    const c = cluster(5);
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    ship(mirror, model, c.join());
    const s = c.join();
    const fewer = { ...s, nodes: s.nodes.slice(1), pendingPods: [pod({ cpu: '2' })] };
    const d = ship(mirror, model, fewer);
    expect(d.nodesRemoved).toEqual(['n0']);
    expect(d.podsRemoved).toHaveLength(2 + 3);
    expect(model.snapshot().nodes.map((n) => n.name)).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(model.snapshot().pendingPods.map((p) => p.uid)).toEqual(fewer.pendingPods.map((p) => p.uid));
  });
});

describe("decisions over the caller's objects", () => {
  it('write nothing onto them: no memo properties, no symbols, nothing changed', async () => {
    const c = cluster(
      12,
      pods(20, { cpu: '1', memory: '1Gi' }).map((p) => ({ ...p, unschedulable: true })),
    );
    const s = c.join();
    const objects: object[] = [...s.nodes, ...s.nodes.flatMap((n) => n.pods), ...s.pendingPods, ...s.nodePools, ...its];
    const keys = (o: object) => Reflect.ownKeys(o).map(String).join(',');
    const before = objects.map((o) => ({ keys: keys(o), json: JSON.stringify(o) }));
    const solver = new WasmSolver();
    solver.solve(provisionInput(s, s.pendingPods, { wellKnownLabels }));
    const { disrupt } = await import('../disruption/disrupt.ts');
    await disrupt({ ...s, pendingPods: [] }, { solver, wellKnownLabels });
    objects.forEach((o, i) => {
      expect(keys(o)).toBe(before[i]!.keys);
      expect(JSON.stringify(o)).toBe(before[i]!.json);
      expect(Object.getOwnPropertySymbols(o)).toEqual([]);
    });
  });
});

// V8 (Node 20) gives a spread copy that gains a field its source lacks a hidden class of its own: every node the
// model rebuilt had one, and every pod a patch bound, so each read of their fields in a solve went megamorphic
// (docs/engine.md). %HaveSameMap needs --allow-natives-syntax (it enables only that syntax, from here on).
v8.setFlagsFromString('--allow-natives-syntax');
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const hiddenClasses = (xs: readonly object[]): number => {
  const seen: object[] = [];
  for (const x of xs) if (!seen.some((y) => sameMap(x, y))) seen.push(x);
  return seen.length;
};

describe("the hidden classes of a warm model's objects", () => {
  it('are shared by the nodes it rebuilds and by pending pods a patch binds', () => {
    const c = cluster(150, pods(150, { cpu: '100m' }));
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    ship(mirror, model, c.join());
    expect(hiddenClasses(model.snapshot().nodes)).toBe(1);
    // Every pending pod is bound to a node: each travels as a patch that adds nodeName.
    c.join().pendingPods.forEach((p, i) =>
      c.bound[i]!.push({ ...p, nodeName: `n${i}`, phase: 'Running', unschedulable: false }),
    );
    const d = ship(mirror, model, c.join({}, []));
    expect(d.podPatches).toHaveLength(150);
    const s = model.snapshot();
    expect(hiddenClasses(s.nodes)).toBe(1);
    const placed = s.nodes.map((n) => n.pods.at(-1)!);
    expect(placed.map((p) => p.nodeName)).toEqual(s.nodes.map((n) => n.name));
    expect(hiddenClasses(placed)).toBe(1);
    // The check tells them apart: spread copies that gain a field mostly have one each.
    expect(hiddenClasses(s.nodes.map((n) => ({ ...n, extra: true })))).toBeGreaterThan(75);
  });
});
