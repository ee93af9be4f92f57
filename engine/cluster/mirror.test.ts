// The mirror's diff reads only what changed (nodes that are not the very objects it shipped, pending pods, the
// operation's pods), so the model it keeps up to date must still be the model a full rebuild gives. Random
// change sequences, made the way cluster state makes them (a node is the same object until its fields or pods
// change), applied incrementally and from scratch side by side: the same model after every step, the same pods
// named, and the same provisioning plans.
import { describe, expect, it } from 'vitest';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { normalizePlan } from '../../test/solver/normalize.ts';
import type { Pod, Snapshot, StateNode } from '../domain/types.ts';
import { provisionInput } from '../model/input.ts';
import { pack, unpack } from '../pool/codec.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { ModelMirror, type SnapshotDelta } from './delta.ts';
import { ClusterModel } from './model.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const its = defaultFakeInstanceTypes();
const pools = [nodePool()];

/** A small seeded generator (mulberry32), so a failing sequence can be replayed from its seed. */
function rng(seed: number): { int(n: number): number; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (n) => Math.floor(next() * n), chance: (p) => next() < p };
}

const cpus = ['250m', '500m', '1', '1500m'];

/** Cluster state as the controller keeps it: a node is a new object only when something of it changed. */
class FakeState {
  nodes: StateNode[] = [];
  pending: Pod[] = [];
  private seq = 0;

  constructor(private readonly r: ReturnType<typeof rng>) {
    for (let i = 0; i < 6; i++) this.addNode();
    for (let i = 0; i < 5; i++) this.addPending();
  }

  snapshot(now: number): Snapshot {
    return snapshot({
      now,
      nodePools: pools,
      instanceTypes: its,
      nodes: [...this.nodes],
      pendingPods: [...this.pending],
    });
  }

  private newPod(nodeName?: string): Pod {
    const p = pod({ cpu: cpus[this.r.int(cpus.length)]!, memory: '256Mi', ...(nodeName ? { nodeName } : {}) });
    return p;
  }

  addPending(): void {
    this.pending.push(this.newPod());
  }

  addNode(): void {
    const name = `node-${++this.seq}`;
    const pods = Array.from({ length: this.r.int(4) }, () => this.newPod(name));
    this.nodes.push(
      stateNode({ name, instanceType: its[this.r.int(3)]!, zone: 'test-zone-1', capacityType: 'on-demand', pods }),
    );
  }

  /** A node rebuilt (a new object) with `change` applied to a copy of it. */
  private rejoin(i: number, change: (n: StateNode) => Partial<StateNode> = () => ({})): void {
    const n = this.nodes[i]!;
    this.nodes[i] = { ...n, ...change(n) };
  }

  /**
   * A pod of one node listed by another too, which cluster state never does (delta.ts, listedTwice); the node it
   * is on rejoined as well, or not. Returns the pod, both nodes and how to put the nodes back.
   */
  listTwice(): { pod: Pod; on: string; also: string; undo: () => void } | undefined {
    const r = this.r;
    const i = this.nodes.findIndex((n) => n.pods.length > 0);
    if (i < 0 || this.nodes.length < 2) return undefined;
    const j = (i + 1 + r.int(this.nodes.length - 1)) % this.nodes.length;
    const before = [...this.nodes];
    const p = this.nodes[i]!.pods[r.int(this.nodes[i]!.pods.length)]!;
    if (r.chance(0.5)) this.rejoin(i);
    this.rejoin(j, (n) => ({ pods: [...n.pods, p] }));
    return { pod: p, on: this.nodes[i]!.name, also: this.nodes[j]!.name, undo: () => (this.nodes = before) };
  }

  /** One random change. */
  step(): string {
    const r = this.r;
    const i = this.nodes.length ? r.int(this.nodes.length) : -1;
    const k = r.int(12);
    if (k === 0 || i < 0) return (this.addNode(), 'add node');
    if (k === 1 && this.pending.length) {
      // The kube-scheduler binds a pending pod: a new pod object on a rejoined node.
      const [p] = this.pending.splice(r.int(this.pending.length), 1);
      const name = this.nodes[i]!.name;
      this.rejoin(i, (n) => ({ pods: [...n.pods, { ...p!, nodeName: name, phase: 'Running', unschedulable: false }] }));
      return 'bind';
    }
    if (k === 2) return (this.addPending(), 'add pending');
    if (k === 3 && this.pending.length) return (this.pending.splice(r.int(this.pending.length), 1), 'delete pending');
    if (k === 4 && this.nodes[i]!.pods.length)
      return (this.rejoin(i, (n) => ({ pods: n.pods.filter((_, j) => j !== r.int(n.pods.length)) })), 'delete pod');
    if (k === 5 && this.nodes[i]!.pods.length) {
      const j = r.int(this.nodes[i]!.pods.length);
      const scalar = r.chance(0.5);
      this.rejoin(i, (n) => ({
        pods: n.pods.map((p, x) =>
          x !== j
            ? p
            : scalar
              ? { ...p, phase: p.phase === 'Running' ? 'Pending' : 'Running' }
              : { ...p, labels: { v: `${r.int(9)}` } },
        ),
      }));
      return scalar ? 'patch pod' : 'change pod';
    }
    if (k === 6) {
      // A node goes: its pods with it, or back to pending (their controller recreates them elsewhere).
      const [n] = this.nodes.splice(i, 1);
      if (r.chance(0.5))
        for (const p of n!.pods) this.pending.push({ ...p, nodeName: undefined, unschedulable: true } as Pod);
      return 'remove node';
    }
    if (k === 7)
      return (this.rejoin(i, () => ({ taints: r.chance(0.5) ? [{ key: 'k', effect: 'NoSchedule' }] : [] })), 'taint');
    if (k === 8) return (this.rejoin(i), 'rejoin unchanged');
    if (k === 9 && this.nodes.length > 1) {
      const j = r.int(this.nodes.length);
      [this.nodes[i], this.nodes[j]] = [this.nodes[j]!, this.nodes[i]!];
      return 'reorder';
    }
    if (k === 10 && this.nodes.length > 1 && this.nodes[i]!.pods.length) {
      // A pod listed by a node it does not name (its nodeName is another's, as after a carried-out move).
      const j = (i + 1 + r.int(this.nodes.length - 1)) % this.nodes.length;
      const p = this.nodes[i]!.pods[r.int(this.nodes[i]!.pods.length)]!;
      this.rejoin(i, (n) => ({ pods: n.pods.filter((q) => q !== p) }));
      this.rejoin(j, (n) => ({ pods: [...n.pods, p] }));
      return 'listed elsewhere';
    }
    if (this.pending.length) {
      // The watch re-sends a pending pod: a new object with the same data.
      const j = r.int(this.pending.length);
      this.pending[j] = { ...this.pending[j]! };
      return 're-sent pending';
    }
    return 'nothing';
  }
}

/** The model from nothing, as a full rebuild gives it. */
function fromScratch(s: Snapshot, extra: readonly Pod[]): { model: ClusterModel; names: (p: readonly Pod[]) => Pod[] } {
  const model = new ClusterModel();
  const { delta, refs } = new ModelMirror().diff(s, extra);
  model.apply(unpack<SnapshotDelta>(pack(delta)));
  return { model, names: (p) => model.podsOf(unpack(pack(refs(p)))) };
}

const view = (m: ClusterModel) => {
  const s = m.snapshot();
  return { nodes: s.nodes, pending: s.pendingPods, now: s.now, held: m.held() };
};

function plan(m: ClusterModel, pods: readonly Pod[]) {
  const input = provisionInput(m.snapshot(), pods, { caches: m.caches, wellKnownLabels });
  return normalizePlan(new WasmSolver({ improve: false }).solve(input));
}

describe('the model a diff keeps up to date', () => {
  it.each([1, 2, 3, 4, 5, 6])(
    'equals a full rebuild after every step of a random change sequence (seed %i)',
    (seed) => {
      const r = rng(seed);
      const state = new FakeState(r);
      const mirror = new ModelMirror();
      let model = new ClusterModel();
      let extra: Pod[] = [];
      for (let t = 1; t <= 120; t++) {
        // Some steps change nothing (a speculative solve's snapshot, then the close's): the same objects again.
        const what = r.chance(0.25) ? 'nothing changed' : state.step();
        if (r.chance(0.05)) {
          // The worker died: a new model, the mirror starts over.
          model = new ClusterModel();
          mirror.reset();
        }
        if (r.chance(0.2) && state.pending.length) {
          // Pods shipped ahead of a decision (some as new objects).
          const some = state.pending.filter(() => r.chance(0.5)).map((p) => (r.chance(0.3) ? { ...p } : p));
          const early = mirror.preload(some);
          if (early) {
            model.apply(unpack<SnapshotDelta>(pack(early.delta)));
            early.commit();
          }
        }
        const twice = r.chance(0.1) ? state.listTwice() : undefined;
        if (twice) {
          // Refused by the mirror, whatever it holds, and by a full rebuild alike, naming the pod and both nodes.
          const { pod: p, on, also } = twice;
          const said = new RegExp(
            `pod ${p.namespace}/${p.name} \\(uid ${p.uid}\\) is listed by two nodes, (${on} and ${also}|${also} and ${on})`,
          );
          const listed = state.snapshot(t);
          expect(() => mirror.diff(listed, extra), `seed ${seed}, step ${t}`).toThrow(said);
          expect(() => fromScratch(listed, extra)).toThrow(said);
          twice.undo();
        }
        const s = state.snapshot(t);
        // An operation may name pods the snapshot does not have (a pod of a node being deleted, a buffer's pod);
        // the same ones again, or the pending pods (a provisioning decision's).
        if (!r.chance(0.5)) extra = r.chance(0.2) ? [pod({ cpu: '1' })] : r.chance(0.5) ? [...state.pending] : [];
        const { delta, commit, refs } = mirror.diff(s, extra);
        model.apply(unpack<SnapshotDelta>(pack(delta)));
        commit();
        const full = fromScratch(s, extra);
        expect(view(model), `seed ${seed}, step ${t} (${what})`).toEqual(view(full.model));
        const named = [...s.pendingPods, ...extra];
        expect(model.podsOf(unpack(pack(refs(named))))).toEqual(full.names(named));
        if (t % 30 === 0)
          expect(plan(model, model.podsOf(unpack(pack(refs(named)))))).toEqual(plan(full.model, full.names(named)));
      }
    },
  );

  it('refuses one pod listed by two nodes, naming the pod and both nodes, in a diff and in an assume', () => {
    const p = pod({ cpu: '1', nodeName: 'a' });
    const a = stateNode({
      name: 'a',
      instanceType: its[0]!,
      zone: 'test-zone-1',
      capacityType: 'on-demand',
      pods: [p],
    });
    const b = stateNode({ name: 'b', instanceType: its[0]!, zone: 'test-zone-1', capacityType: 'on-demand', pods: [] });
    const at = (nodes: StateNode[]) =>
      snapshot({ now: 1, nodePools: pools, instanceTypes: its, nodes, pendingPods: [] });
    const said = `pod ${p.namespace}/${p.name} (uid ${p.uid}) is listed by two nodes, a and b`;
    const mirror = new ModelMirror();
    mirror.diff(at([a, b])).commit();
    const both = { ...b, pods: [p] };
    // Node a passed over (the very object shipped), b read: the mirror's link says a lists the pod.
    expect(() => mirror.diff(at([a, both]))).toThrow(said);
    // Both read (a full diff does the same).
    expect(() => mirror.diff(at([{ ...a }, both]))).toThrow(said);
    expect(() => new ModelMirror().diff(at([a, both]))).toThrow(said);
    // Nothing was committed: the mirror still ships from where it was.
    expect(mirror.version).toBe(1);
    expect(mirror.diff(at([a, b])).delta).toEqual({ base: 1, version: 2, now: 1 });
    expect(() => mirror.assume(at([a, both]))).toThrow(said);
  });

  it('reads no pending pod when they are the very objects its last diff read and no node changed', () => {
    let armed = false;
    const guard = (p: Pod): Pod =>
      new Proxy(p, {
        get: (target, key, receiver) => {
          if (armed) throw new Error(`pod ${p.uid} was read`);
          return Reflect.get(target, key, receiver);
        },
      });
    const pending = [pod({ cpu: '1' }), pod({ cpu: '2' }), pod({ cpu: '500m' })].map(guard);
    const at = (now: number) =>
      snapshot({ now, nodePools: pools, instanceTypes: its, nodes: [], pendingPods: [...pending] });
    const mirror = new ModelMirror();
    const first = mirror.diff(at(1), [...pending]);
    const firstRefs = first.refs([...pending]);
    first.commit();
    armed = true;
    const { delta, refs, stats } = mirror.diff(at(2), [...pending]);
    const named = refs([...pending]);
    armed = false;
    expect(delta).toEqual({ base: 1, version: 2, now: 2 });
    expect(stats.pods).toBe(0);
    expect(named).toEqual(firstRefs);
    expect(named).toEqual({ pendingAt: new Uint32Array([0, 1, 2]) });
  });

  it('reads the pending pods again after a preload, and drops a preloaded pod nothing names', () => {
    const pending = [pod({ cpu: '1' }), pod({ cpu: '2' })];
    const at = (now: number) =>
      snapshot({ now, nodePools: pools, instanceTypes: its, nodes: [], pendingPods: [...pending] });
    const mirror = new ModelMirror();
    mirror.diff(at(1), pending).commit();
    const gone = pod({ cpu: '3' });
    mirror.preload([gone])!.commit();
    const { delta } = mirror.diff(at(2), pending);
    expect(delta.podsRemoved).toEqual([gone.uid]);
    expect(delta.pods).toBeUndefined();
  });

  it('keeps each node as the very state node shipped, its pod list its own, with no copy of the uids', () => {
    const state = new FakeState(rng(5));
    const mirror = new ModelMirror();
    mirror.diff(state.snapshot(1)).commit();
    // A rejoined node with the very pod list (a nomination), and a node whose pods changed.
    const i = state.nodes.findIndex((n) => n.pods.length > 0);
    const n = state.nodes[i]!;
    state.nodes[i] = { ...n, nominatedUntil: 5_000 };
    state.addNode();
    mirror.diff(state.snapshot(2)).commit();
    // The record a diff compares the next snapshot with (private: read here to pin what the mirror holds a node).
    const held = (mirror as unknown as { shipped: { nodes: Map<string, unknown> } }).shipped.nodes;
    expect(held.size).toBe(state.nodes.length);
    for (const node of state.nodes) expect(held.get(node.name)).toBe(node);
  });

  it('reads no pod of a node it shipped before and that is the same object now', () => {
    const r = rng(7);
    const state = new FakeState(r);
    const mirror = new ModelMirror();
    mirror.diff(state.snapshot(1)).commit();
    // Every pod of every node made unreadable: a diff that reads one throws.
    const guarded = state.nodes.map((n) => {
      const pods = n.pods.map(
        (p) =>
          new Proxy(p, {
            get: () => {
              throw new Error(`pod ${p.uid} was read`);
            },
          }),
      );
      return { n, pods };
    });
    // The guard goes on the pods the mirror already holds, through the same node objects.
    for (const { n, pods } of guarded) (n as { pods: readonly Pod[] }).pods = pods;
    state.addPending();
    const { delta } = mirror.diff(state.snapshot(2));
    expect(delta.pods).toHaveLength(1);
    expect(delta.nodes).toBeUndefined();
  });

  it('reads no pod of a node rejoined with the very pod list it was shipped with, and ships its fields', () => {
    const state = new FakeState(rng(11));
    const mirror = new ModelMirror();
    const model = new ClusterModel();
    const first = mirror.diff(state.snapshot(1));
    model.apply(unpack<SnapshotDelta>(pack(first.delta)));
    first.commit();
    const i = state.nodes.findIndex((n) => n.pods.length > 0);
    const n = state.nodes[i]!;
    // The pods the mirror holds, made unreadable in place but for their uids (the record shipped names the pods by
    // uid, read off the node's own list, which the mirror keeps instead of a copy): a diff that reads more throws.
    for (const p of n.pods) {
      const uid = p.uid;
      for (const k of Object.keys(p))
        if (k !== 'uid')
          Object.defineProperty(p, k, {
            get: () => {
              throw new Error(`pod ${uid} was read`);
            },
          });
    }
    // A nomination: a new node object, the same pod array.
    state.nodes[i] = { ...n, nominatedUntil: 5_000 };
    const { delta, commit } = mirror.diff(state.snapshot(2));
    expect(delta.nodes?.map((r) => [r.node.name, r.node.nominatedUntil, r.pods.length])).toEqual([
      [n.name, 5_000, n.pods.length],
    ]);
    expect(delta.pods).toBeUndefined();
    expect(delta.podsRemoved).toBeUndefined();
    model.apply(unpack<SnapshotDelta>(pack(delta)));
    commit();
    // The model still names the node's pods on it, and a later diff with the node unchanged ships nothing.
    expect(model.snapshot().nodes[i]!.pods.length).toBe(n.pods.length);
    const again = mirror.diff(state.snapshot(3)).delta;
    expect(again.nodes).toBeUndefined();
  });
});
