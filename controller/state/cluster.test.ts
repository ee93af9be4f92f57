import { describe, expect, it } from 'vitest';
import { ModelMirror, type SnapshotDelta } from '../../engine/cluster/delta.ts';
import { ClusterModel } from '../../engine/cluster/model.ts';
import type { StateNode } from '../../engine/index.ts';
import { pack, unpack } from '../../engine/pool/codec.ts';
import { manualClock } from '../../sim/clock.ts';
import { snapshot } from '../../test/fixtures/builders.ts';
import { newLogger } from '../operator/logger.ts';
import type { KubeObject } from '../operator/kube.ts';
import { Cluster, nominationWindow, type Change } from './cluster.ts';
import { stripNode, stripNodeClaim } from './strip.ts';

const T = '2025-01-01T00:00:00Z';
let rv = 0;
const meta = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  uid: `uid-${name}`,
  resourceVersion: String(++rv),
  creationTimestamp: T,
  ...extra,
});

function nodeClaim(
  name: string,
  o: {
    providerID?: string;
    deleting?: boolean;
    conditions?: Array<{ type: string; status: string }>;
    capacity?: Record<string, string>;
  } = {},
): KubeObject {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: meta(name, {
      labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/capacity-type': 'spot' },
      ...(o.deleting ? { deletionTimestamp: T } : {}),
    }),
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [],
      taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'boot', effect: 'NoSchedule' }],
    },
    status: {
      ...(o.providerID ? { providerID: o.providerID } : {}),
      capacity: o.capacity ?? { cpu: '4', memory: '16Gi', pods: '58' },
      allocatable: { cpu: '3920m', memory: '14Gi', pods: '58' },
      conditions: (o.conditions ?? []).map((c) => ({ ...c, lastTransitionTime: T })),
    },
  };
}

function node(
  name: string,
  providerID: string,
  o: { initialized?: boolean; ready?: boolean; capacity?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: meta(name, {
      labels: {
        'karpenter.sh/nodepool': 'default',
        'karpenter.sh/registered': 'true',
        'node.kubernetes.io/instance-type': 'm5.xlarge',
        ...(o.initialized ? { 'karpenter.sh/initialized': 'true' } : {}),
      },
    }),
    spec: { providerID, taints: [] },
    status: {
      capacity: o.capacity ?? { cpu: '4', memory: '16Gi', pods: '58' },
      allocatable: { cpu: '3900m', memory: '0', pods: '58' },
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

function pod(name: string, o: { nodeName?: string; unschedulable?: boolean; daemonSet?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(name, {
      namespace: 'default',
      ...(o.daemonSet
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'ds', controller: true }] }
        : {}),
    }),
    spec: {
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
    },
    status: {
      phase: o.nodeName ? 'Running' : 'Pending',
      ...(o.unschedulable ? { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } : {}),
    },
  };
}

function cluster(listed = true) {
  const clock = manualClock();
  const changes: Change[] = [];
  const c = new Cluster({ clock, log: newLogger({ level: 'silent' }), listed: () => listed });
  c.subscribe((x) => changes.push(x));
  return { c, clock, changes };
}

describe('Cluster', () => {
  it('joins a NodeClaim and its Node by providerID into one state node', () => {
    const { c } = cluster();
    c.applyNodeClaim(nodeClaim('nc-1', { providerID: 'aws:///a/i-1' }));
    c.applyNode(node('node-1', 'aws:///a/i-1', { initialized: true }));
    c.workloads.applyPod(pod('p1', { nodeName: 'node-1' }));
    const [sn, ...rest] = c.stateNodes();
    expect(rest).toEqual([]);
    expect(sn).toMatchObject({
      name: 'node-1',
      nodeClaimName: 'nc-1',
      providerId: 'aws:///a/i-1',
      hasNode: true,
      hasNodeClaim: true,
      managed: true,
      registered: true,
      initialized: true,
      ready: true,
      nodePoolName: 'default',
    });
    expect(sn!.pods.map((p) => p.name)).toEqual(['p1']);
    expect(sn!.allocatable).toMatchObject({ cpu: 3900, memory: 0 });
  });

  it('keeps a joined state node until its Node, NodeClaim, pods, mark or nomination changes', async () => {
    const { c, clock } = cluster();
    c.applyNodeClaim(nodeClaim('nc-1', { providerID: 'aws:///a/i-1' }));
    c.applyNode(node('node-1', 'aws:///a/i-1', { initialized: true }));
    c.applyNodeClaim(nodeClaim('nc-2', { providerID: 'aws:///a/i-2' }));
    c.applyNode(node('node-2', 'aws:///a/i-2', { initialized: true }));
    c.workloads.applyPod(pod('p1', { nodeName: 'node-1' }));
    const first = c.stateNodes();
    // Nothing changed: the very same objects (a decision's delta and the NodePool counter rely on it).
    expect(c.stateNodes()).toEqual(first);
    expect(c.stateNodes().every((sn, i) => sn === first[i])).toBe(true);
    expect(c.stateNode('aws:///a/i-1')).toBe(first[0]);
    // A pod bound to node-1: node-1 is joined again with it, node-2 stays.
    c.workloads.applyPod(pod('p2', { nodeName: 'node-1' }));
    const [one, two] = c.stateNodes();
    expect(one).not.toBe(first[0]);
    expect(one!.pods.map((p) => p.name)).toEqual(['p1', 'p2']);
    expect(two).toBe(first[1]);
    // A pod removed, a mark, a nomination and its end, a NodeClaim update: each makes a new join.
    c.workloads.removePod(pod('p1', { nodeName: 'node-1' }));
    expect(c.stateNodes()[0]!.pods.map((p) => p.name)).toEqual(['p2']);
    c.markForDeletion('aws:///a/i-2');
    expect(c.stateNodes()[1]!.markedForDeletion).toBe(true);
    c.unmarkForDeletion('aws:///a/i-2');
    const before = c.stateNodes()[0]!;
    c.nominate('aws:///a/i-1', clock.now() + 1_000);
    // A nomination joins the node again with the very pod list: no pod on it changed (the engine's diff then
    // passes its pods over); a pod change makes a new list.
    const nominated = c.stateNodes()[0]!;
    expect(nominated).not.toBe(before);
    expect(nominated.pods).toBe(before.pods);
    c.workloads.applyPod(pod('p3', { nodeName: 'node-1' }));
    expect(c.stateNodes()[0]!.pods).not.toBe(before.pods);
    expect(c.stateNodes()[0]!.pods.map((p) => p.name)).toEqual(['p2', 'p3']);
    c.nominate('aws:///a/i-2', clock.now() + 1_000);
    expect(c.stateNodes()[1]!.nominatedUntil).toBe(clock.now() + 1_000);
    await clock.advance(2_000);
    expect(c.stateNodes()[1]).not.toHaveProperty('nominatedUntil');
    c.applyNodeClaim(
      nodeClaim('nc-2', { providerID: 'aws:///a/i-2', conditions: [{ type: 'Consolidatable', status: 'True' }] }),
    );
    expect(c.stateNodes()[1]!.conditions).toMatchObject({ consolidatable: true });
    // A NodeClaim and its Node gone: the state node goes with them.
    c.removeNode(node('node-2', 'aws:///a/i-2'));
    c.removeNodeClaim(nodeClaim('nc-2', { providerID: 'aws:///a/i-2' }));
    expect(c.stateNodes().map((sn) => sn.name)).toEqual(['node-1']);
  });

  it("speaks for an uninitialized node with the NodeClaim's taints until registration, and back-fills zero capacities", () => {
    const { c } = cluster();
    c.applyNodeClaim(nodeClaim('nc-1', { providerID: 'aws:///a/i-1' }));
    expect(c.stateNodes()[0]).toMatchObject({
      name: 'nc-1',
      hasNode: false,
      registered: false,
      initialized: false,
      taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'boot', effect: 'NoSchedule' }],
    });
    c.applyNode(node('node-1', 'aws:///a/i-1'));
    // Registered but not initialized: the node's zero memory allocatable comes from the NodeClaim.
    expect(c.stateNodes()[0]!.allocatable).toMatchObject({ cpu: 3900, memory: 14 * 2 ** 30 });
  });

  it('is not synced until informers have listed, nor while a NodeClaim waits for its launch', () => {
    let listed = false;
    const clock = manualClock();
    const c = new Cluster({ clock, log: newLogger({ level: 'silent' }), listed: () => listed });
    expect(c.synced()).toBe(false);
    listed = true;
    expect(c.synced()).toBe(true);
    c.applyNodeClaim(nodeClaim('nc-1'));
    expect(c.synced()).toBe(false);
    c.applyNodeClaim({ ...nodeClaim('nc-1', { providerID: 'aws:///a/i-1' }) });
    expect(c.synced()).toBe(true);
    listed = false;
    expect(c.synced()).toBe(true);
  });

  it("ignores an update older than what it holds (a watch event after the provisioner's own write)", () => {
    const { c } = cluster();
    const older = nodeClaim('nc-1');
    const newer = nodeClaim('nc-1', { providerID: 'aws:///a/i-1' });
    c.applyNodeClaim(newer);
    c.applyNodeClaim(older);
    expect(c.nodeClaim('nc-1')!.info.providerId).toBe('aws:///a/i-1');
  });

  it("parses a version once: a write's answer and its watch event share the parse; a new version is parsed again", () => {
    const { c, changes } = cluster();
    const answer = nodeClaim('nc-1', { providerID: 'aws:///a/i-1' });
    // The watch event of the same write: an equal copy, same uid and resourceVersion (made lean by the informer).
    const echo = stripNodeClaim(structuredClone(answer));
    c.applyNodeClaim(answer);
    const parsed = c.nodeClaim('nc-1')!.info;
    c.applyNodeClaim(echo);
    expect(c.nodeClaim('nc-1')!.info).toBe(parsed);
    expect(c.nodeClaim('nc-1')!.obj).toBe(echo);
    expect(changes.filter((x) => x.kind === 'NodeClaim')).toHaveLength(2);
    const next = nodeClaim('nc-1', { providerID: 'aws:///a/i-1', capacity: { cpu: '8', memory: '32Gi', pods: '58' } });
    c.applyNodeClaim(next);
    expect(c.nodeClaim('nc-1')!.info).not.toBe(parsed);
    expect(c.nodeClaim('nc-1')!.info.capacity).toMatchObject({ cpu: 8000 });
    // Another object under the name (a new uid) with a resourceVersion equal by chance is parsed too.
    const other = structuredClone(next);
    other.metadata.uid = 'uid-other';
    (other.status as { capacity: Record<string, string> }).capacity = { cpu: '2', memory: '8Gi', pods: '58' };
    c.applyNodeClaim(other);
    expect(c.nodeClaim('nc-1')!.info.capacity).toMatchObject({ cpu: 2000 });

    const n = node('node-1', 'aws:///a/i-1', { initialized: true });
    c.applyNode(n);
    const nodeInfo = c.node('node-1')!.info;
    c.applyNode(structuredClone(n));
    expect(c.node('node-1')!.info).toBe(nodeInfo);
    c.applyNode(node('node-1', 'aws:///a/i-1', { initialized: false }));
    expect(c.node('node-1')!.info.initialized).toBe(false);
  });

  it('holds NodeClaims lean: parts NodeClaims have alike, and what they parse to, are one copy; content unchanged', () => {
    const { c } = cluster();
    const a = nodeClaim('nc-a', { providerID: 'aws:///a/i-a' });
    const b = nodeClaim('nc-b', { providerID: 'aws:///a/i-b' });
    const aCopy = structuredClone(a);
    // The provisioner's own write (not lean) and the informer's copy (lean) alike.
    c.applyNodeClaim(a);
    c.applyNodeClaim(stripNodeClaim(b));
    const ea = c.nodeClaim('nc-a')!;
    const eb = c.nodeClaim('nc-b')!;
    expect(ea.obj).toEqual(aCopy);
    expect(a).toEqual(aCopy);
    expect(ea.obj.metadata.labels).toBe(eb.obj.metadata.labels);
    expect(ea.obj.spec!['nodeClassRef']).toBe(eb.obj.spec!['nodeClassRef']);
    expect(ea.obj.status!['capacity']).toBe(eb.obj.status!['capacity']);
    for (const k of ['requirements', 'taints', 'startupTaints', 'nodeClassRef', 'capacity'] as const)
      expect(ea.info[k], k).toBe(eb.info[k]);
    expect(ea.info.providerId).toBe('aws:///a/i-a');
    expect(eb.info.providerId).toBe('aws:///a/i-b');
    expect(ea.info.capacity).toMatchObject({ cpu: 4000 });
  });

  it('holds one copy of equal conditions and of their parse, per kind; conditions that differ stay apart', () => {
    const { c } = cluster();
    const conds = [
      { type: 'Launched', status: 'True' },
      { type: 'Ready', status: 'True' },
    ];
    // The first NodeClaim's conditions are its own until a second has equal ones: the parse is remembered from then.
    for (const n of ['nc-a', 'nc-b', 'nc-b2'])
      c.applyNodeClaim(nodeClaim(n, { providerID: `aws:///a/i-${n}`, conditions: conds }));
    const later = nodeClaim('nc-c', { providerID: 'aws:///a/i-c', conditions: conds });
    (later.status!['conditions'] as Array<Record<string, unknown>>)[1]!['lastTransitionTime'] = '2025-01-01T00:00:01Z';
    c.applyNodeClaim(later);
    const [a, b, b2, d] = ['nc-a', 'nc-b', 'nc-b2', 'nc-c'].map((n) => c.nodeClaim(n)!);
    const statusConds = (e: typeof a) => e!.obj.status!['conditions'] as object[];
    for (const i of [0, 1]) {
      expect(statusConds(b)[i]).toBe(statusConds(a)[i]);
      expect(statusConds(b2)[i]).toBe(statusConds(a)[i]);
      expect(b2!.info.conditions[i]).toBe(b!.info.conditions[i]);
      expect(a!.info.conditions[i]).toEqual(b!.info.conditions[i]);
    }
    expect(statusConds(d)[0]).toBe(statusConds(a)[0]);
    expect(d!.info.conditions[0]).toBe(b!.info.conditions[0]);
    expect(statusConds(d)[1]).not.toBe(statusConds(a)[1]);
    expect(d!.info.conditions[1]).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: Date.parse(T) + 1000 });
    expect(a!.info.conditions[1]).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: Date.parse(T) });
    // A Node with the same Ready condition shares the status condition but not the parse (a Node's keeps no message).
    const withMessage = [{ type: 'Ready', status: 'True', reason: 'R', message: 'm', lastTransitionTime: T }];
    const claim = nodeClaim('nc-m', { providerID: 'aws:///a/i-m' });
    claim.status!['conditions'] = withMessage;
    c.applyNodeClaim(claim);
    const n = node('node-m', 'aws:///a/i-m');
    n.status!['conditions'] = structuredClone(withMessage);
    c.applyNode(n);
    const nodeCond = (c.node('node-m')!.obj.status!['conditions'] as object[])[0];
    expect(nodeCond).toBe((c.nodeClaim('nc-m')!.obj.status!['conditions'] as object[])[0]);
    expect(c.nodeClaim('nc-m')!.info.conditions[0]!.message).toBe('m');
    expect(c.node('node-m')!.info.conditions[0]).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'R',
      lastTransitionTime: Date.parse(T),
    });
  });

  it("holds a Node's labels once: its info's labels are the stripped Node's own, equal to the parse", () => {
    const { c } = cluster();
    const n = node('node-l', 'aws:///a/i-l', { initialized: true });
    const labels = structuredClone(n.metadata.labels);
    c.applyNode(n);
    const e = c.node('node-l')!;
    expect(e.info.labels).toBe(e.obj.metadata.labels);
    expect(e.info.labels).toEqual(labels);
    expect(Object.keys(e.info.labels)).toEqual(Object.keys(labels!));
    expect(e.info.initialized).toBe(true);
  });

  it('holds Nodes lean: the status parts Nodes have alike, and what they parse to, are one copy', () => {
    const { c } = cluster();
    const a = node('node-a', 'aws:///a/i-a');
    const aCopy = structuredClone(a);
    c.applyNode(a);
    c.applyNode(stripNode(node('node-b', 'aws:///a/i-b')));
    const [ea, eb] = [c.node('node-a')!, c.node('node-b')!];
    expect(ea.obj).toEqual(aCopy);
    expect(ea.obj.status!['capacity']).toBe(eb.obj.status!['capacity']);
    for (const k of ['taints', 'capacity', 'allocatable'] as const) expect(ea.info[k], k).toBe(eb.info[k]);
    expect([ea.info.name, ea.info.providerId, eb.info.providerId]).toEqual(['node-a', 'aws:///a/i-a', 'aws:///a/i-b']);
    // A lean copy is kept as it is (the informer's cache and cluster state hold the one object).
    const lean = stripNode(node('node-c', 'aws:///a/i-c'));
    expect(stripNode(lean)).toBe(lean);
    c.applyNode(lean);
    expect(c.node('node-c')!.obj).toBe(lean);
  });

  it('provisions for unschedulable pending pods and for the pods of deleting nodes, not for DaemonSet pods', () => {
    const { c } = cluster();
    c.applyNodeClaim(nodeClaim('nc-1', { providerID: 'aws:///a/i-1', deleting: true }));
    c.applyNode(node('node-1', 'aws:///a/i-1', { initialized: true }));
    c.workloads.applyPod(pod('pending', { unschedulable: true }));
    c.workloads.applyPod(pod('not-yet-tried'));
    c.workloads.applyPod(pod('on-deleting', { nodeName: 'node-1' }));
    c.workloads.applyPod(pod('daemon', { nodeName: 'node-1', daemonSet: true }));
    c.workloads.applyPod(pod('daemon-pending', { unschedulable: true, daemonSet: true }));
    expect(
      c
        .provisionablePods()
        .map((p) => p.name)
        .sort(),
    ).toEqual(['on-deleting', 'pending']);
  });

  it('nominates nodes until the window passes, and marks them for deletion', async () => {
    const { c, clock } = cluster();
    c.applyNodeClaim(nodeClaim('nc-1', { providerID: 'aws:///a/i-1' }));
    c.nominate('aws:///a/i-1', clock.now() + nominationWindow(10_000));
    expect(nominationWindow(10_000)).toBe(20_000);
    expect(c.stateNodes()[0]!.nominatedUntil).toBe(clock.now() + 20_000);
    await clock.advance(20_000);
    expect(c.stateNodes()[0]!.nominatedUntil).toBeUndefined();
    c.markForDeletion('aws:///a/i-1');
    expect(c.stateNodes()[0]!.markedForDeletion).toBe(true);
  });

  it('moves the consolidation state on pod binding and node changes, and refreshes it every 5 minutes', async () => {
    const { c, clock } = cluster();
    const t0 = c.consolidationState();
    await clock.advance(1_000);
    c.workloads.applyPod(pod('p', { unschedulable: true }));
    expect(c.consolidationState()).toBe(t0);
    c.workloads.applyPod({ ...pod('p', { nodeName: 'node-1' }) });
    expect(c.consolidationState()).toBe(clock.now());
    const t1 = clock.now();
    await clock.advance(5 * 60_000);
    expect(c.consolidationState()).toBe(t1 + 5 * 60_000);
  });

  it('tells subscribers about every change, with the previous object', () => {
    const { c, changes } = cluster();
    c.applyNodeClaim(nodeClaim('nc-1'));
    c.applyNodeClaim(nodeClaim('nc-1', { providerID: 'aws:///a/i-1' }));
    c.removeNodeClaim(nodeClaim('nc-1'));
    expect(changes.map((x) => [x.kind, x.type, x.name, x.old !== undefined])).toEqual([
      ['NodeClaim', 'upsert', 'nc-1', false],
      ['NodeClaim', 'upsert', 'nc-1', true],
      ['NodeClaim', 'delete', 'nc-1', false],
    ]);
    expect(c.nodeClaimByProviderID('aws:///a/i-1')).toBeUndefined();
  });

  it('keeps a NodePool that does not validate, with its errors, out of decisions', () => {
    const { c } = cluster();
    c.applyNodePool({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: meta('bad'),
      spec: { template: { spec: { requirements: [] } }, weight: 500 },
    });
    const e = c.nodePool('bad')!;
    expect(e.pool).toBeUndefined();
    expect(e.errors.join('\n')).toMatch(/spec.weight/);
  });

  it('two Nodes naming one instance: the NodeClaim joins the node its status names, and removing the other keeps it', () => {
    const { c } = cluster();
    const pid = 'aws:///us-west-2a/i-1';
    const victim = node('victim', pid);
    c.applyNode(victim);
    const claim = nodeClaim('a', { providerID: pid });
    (claim.status as Record<string, unknown>)['nodeName'] = 'victim';
    c.applyNodeClaim(claim);
    c.workloads.applyPod(pod('p', { nodeName: 'victim' }));
    // A second Node object with the same providerID, created later (by hand).
    const impostor = node('impostor', pid);
    impostor.metadata.creationTimestamp = '2025-01-01T00:05:00Z';
    c.applyNode(impostor);
    expect(
      c
        .nodesByProviderID(pid)
        .map((n) => n.info.name)
        .sort(),
    ).toEqual(['impostor', 'victim']);
    expect(c.nodeByProviderID(pid)?.info.name).toBe('victim');
    expect(c.stateNode(pid)?.name).toBe('victim');
    expect(c.stateNode(pid)?.pods.map((p) => p.name)).toEqual(['p']);
    c.removeNode(impostor);
    expect(c.nodeByProviderID(pid)?.info.name).toBe('victim');
    // Without a NodeClaim to say which, the oldest Node.
    const { c: bare } = cluster();
    bare.applyNode(impostor);
    bare.applyNode(victim);
    expect(bare.nodeByProviderID(pid)?.info.name).toBe('victim');
  });
});

describe('two NodeClaims with one providerID', () => {
  const pid = 'aws:///a/i-1';
  const at = (minute: number) => `2025-01-01T00:0${minute}:00Z`;

  /** A NodeClaim recording the instance, created at the given minute. */
  function claimAt(name: string, minute: number, o: Parameters<typeof nodeClaim>[1] = {}): KubeObject {
    const obj = nodeClaim(name, { providerID: pid, ...o });
    obj.metadata.creationTimestamp = at(minute);
    return obj;
  }

  /** A cluster whose log lines are kept. */
  function logged() {
    const lines: Array<Record<string, unknown>> = [];
    const log = newLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    return { c: new Cluster({ clock: manualClock(), log, listed: () => true }), lines };
  }

  /** The state nodes of a cluster fed these objects (in this order) from nothing, as a restarted controller has them. */
  function fresh(objs: readonly KubeObject[]): readonly StateNode[] {
    const { c } = cluster();
    for (const o of objs)
      if (o.kind === 'Node') c.applyNode(o);
      else if (o.kind === 'NodeClaim') c.applyNodeClaim(o);
      else c.workloads.applyPod(o);
    return c.stateNodes();
  }

  const summary = (nodes: readonly StateNode[]) =>
    nodes.map((n) => ({ name: n.name, claim: n.nodeClaimName, hasNode: n.hasNode, pods: n.pods.map((p) => p.name) }));

  /** The engine model from nothing, as a worker's full rebuild makes it of these state nodes. */
  function rebuilt(nodes: readonly StateNode[]): ClusterModel {
    const model = new ClusterModel();
    model.apply(unpack<SnapshotDelta>(pack(new ModelMirror().diff(snapshot({ now: 1, nodes: [...nodes] })).delta)));
    return model;
  }

  it('lists the node once, and the model the mirror keeps equals a full rebuild', () => {
    const { c } = cluster();
    c.applyNode(node('node-1', pid, { initialized: true }));
    c.applyNodeClaim(nodeClaim('nc-a', { providerID: pid }));
    c.applyNodeClaim(nodeClaim('nc-b', { providerID: pid }));
    c.workloads.applyPod(pod('p1', { nodeName: 'node-1' }));
    // A warm model kept by the mirror, one diff a change, against a full rebuild of the same list.
    const mirror = new ModelMirror();
    const warm = new ClusterModel();
    const ship = () => {
      const nodes = c.stateNodes();
      const { delta, commit } = mirror.diff(snapshot({ now: 1, nodes: [...nodes] }));
      warm.apply(unpack<SnapshotDelta>(pack(delta)));
      commit();
      expect(warm.snapshot().nodes).toEqual(rebuilt(nodes).snapshot().nodes);
      return nodes;
    };
    ship();
    // Each NodeClaim changes on its own (a condition, a status write), then a pod lands.
    c.applyNodeClaim(nodeClaim('nc-a', { providerID: pid, conditions: [{ type: 'Drifted', status: 'True' }] }));
    ship();
    c.applyNodeClaim(nodeClaim('nc-b', { providerID: pid, capacity: { cpu: '8', memory: '32Gi', pods: '58' } }));
    ship();
    c.workloads.applyPod(pod('p2', { nodeName: 'node-1' }));
    const nodes = ship();
    expect(nodes.map((n) => [n.name, n.providerId, n.nodeClaimName])).toEqual([['node-1', pid, 'nc-a']]);
    expect(nodes[0]!.conditions.drifted).toBeDefined();
    expect(warm.snapshot().nodes.map((n) => [n.name, n.pods.length])).toEqual([['node-1', 2]]);
    // The other NodeClaim is still known, by name and by instance.
    expect(c.nodeClaim('nc-b')).toBeDefined();
    expect(
      c
        .nodeClaimsByProviderID(pid)
        .map((e) => e.info.name)
        .sort(),
    ).toEqual(['nc-a', 'nc-b']);
  });

  it('joins the oldest NodeClaim, whatever order they come in, and logs both names and the providerID', () => {
    const node1 = node('node-1', pid, { initialized: true });
    const older = claimAt('nc-z', 1);
    const newer = claimAt('nc-a', 2);
    for (const order of [
      [node1, older, newer],
      [newer, node1, older],
      [older, newer, node1],
    ]) {
      const { c, lines } = logged();
      for (const o of order) o.kind === 'Node' ? c.applyNode(o) : c.applyNodeClaim(o);
      expect(summary(c.stateNodes())).toEqual([{ name: 'node-1', claim: 'nc-z', hasNode: true, pods: [] }]);
      expect(c.nodeClaimByProviderID(pid)?.info.name).toBe('nc-z');
      expect(c.stateNode(pid)?.nodeClaimName).toBe('nc-z');
      const warned = lines.filter((l) => l['level'] === 'WARN');
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({
        'provider-id': pid,
        NodeClaim: { name: order.filter((o) => o.kind === 'NodeClaim')[1]!.metadata.name },
        nodeclaims: ['nc-a', 'nc-z'],
        joined: 'nc-z',
      });
    }
    // Created together: the first by name.
    const { c } = cluster();
    c.applyNodeClaim(claimAt('nc-b', 1));
    c.applyNodeClaim(claimAt('nc-a', 1));
    expect(c.stateNodes().map((n) => n.nodeClaimName)).toEqual(['nc-a']);
  });

  // Every order of deleting the two NodeClaims and the Node: after each deletion one state node at most, the one a
  // controller fed the remaining objects from nothing lists.
  const orders: ReadonlyArray<readonly ('nc-a' | 'nc-b' | 'node-1')[]> = [
    ['nc-a', 'nc-b', 'node-1'],
    ['nc-a', 'node-1', 'nc-b'],
    ['nc-b', 'nc-a', 'node-1'],
    ['nc-b', 'node-1', 'nc-a'],
    ['node-1', 'nc-a', 'nc-b'],
    ['node-1', 'nc-b', 'nc-a'],
  ];
  it.each(orders)('stays consistent when %s, %s and %s are deleted in turn', (...order) => {
    const objs = new Map<string, KubeObject>([
      ['nc-a', claimAt('nc-a', 1)],
      ['nc-b', claimAt('nc-b', 2)],
      ['node-1', node('node-1', pid, { initialized: true })],
    ]);
    const p1 = pod('p1', { nodeName: 'node-1' });
    const { c, lines } = logged();
    for (const o of objs.values()) o.kind === 'Node' ? c.applyNode(o) : c.applyNodeClaim(o);
    c.workloads.applyPod(p1);
    expect(summary(c.stateNodes())).toEqual([{ name: 'node-1', claim: 'nc-a', hasNode: true, pods: ['p1'] }]);
    c.markForDeletion(pid);
    for (const name of order) {
      const gone = objs.get(name)!;
      objs.delete(name);
      if (gone.kind === 'Node') c.removeNode(gone);
      else c.removeNodeClaim(gone);
      const left = [...objs.values()].reverse();
      const listed = c.stateNodes();
      expect(summary(listed), `after ${name}`).toEqual(summary(fresh([...left, p1])));
      expect(listed.length).toBeLessThanOrEqual(1);
      const claims = left.filter((o) => o.kind === 'NodeClaim').map((o) => o.metadata.name);
      // The NodeClaim left is the instance's, and the mark stays while a NodeClaim records the instance.
      expect(c.nodeClaimByProviderID(pid)?.info.name).toBe(claims.sort()[0]);
      expect(c.isMarkedForDeletion(pid)).toBe(claims.length > 0);
      if (listed[0]) expect(listed[0].markedForDeletion).toBe(claims.length > 0);
    }
    expect(c.stateNodes()).toEqual([]);
    // The joined NodeClaim deleted while the other remained: logged with both names.
    const handover = lines.filter((l) => String(l['message']).includes('is joined now'));
    expect(handover).toEqual(
      order.indexOf('nc-a') < order.indexOf('nc-b')
        ? [expect.objectContaining({ 'provider-id': pid, NodeClaim: { name: 'nc-a' }, joined: 'nc-b' })]
        : [],
    );
  });

  it("moves to the other NodeClaim when the joined one's providerID changes", () => {
    const { c, lines } = logged();
    c.applyNode(node('node-1', pid, { initialized: true }));
    c.applyNodeClaim(claimAt('nc-a', 1));
    c.applyNodeClaim(claimAt('nc-b', 2));
    const moved = claimAt('nc-a', 1);
    (moved.status as Record<string, unknown>)['providerID'] = 'aws:///a/i-2';
    c.applyNodeClaim(moved);
    expect(summary(c.stateNodes())).toEqual([
      { name: 'nc-a', claim: 'nc-a', hasNode: false, pods: [] },
      { name: 'node-1', claim: 'nc-b', hasNode: true, pods: [] },
    ]);
    expect(lines.some((l) => l['joined'] === 'nc-b' && String(l['message']).includes('another providerID'))).toBe(true);
  });
});

describe('the state node list kept up to date', () => {
  /** A seeded generator (mulberry32): a failing sequence replays from its seed. */
  function rng(seed: number): (n: number) => number {
    let a = seed >>> 0;
    return (n) => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    };
  }

  type Step = (c: Cluster) => void;

  /** One random change to cluster state, as a function that makes it on any Cluster. */
  function randomStep(r: (n: number) => number, seq: number): Step {
    const i = r(6);
    const pid = `aws:///a/i-${i}`;
    switch (r(12)) {
      case 0: {
        // Now and then the instance of another NodeClaim (two NodeClaims recording one instance).
        const o = nodeClaim(`nc-${i}`, r(4) ? { providerID: r(4) ? pid : `aws:///a/i-${r(6)}` } : {});
        return (c) => c.applyNodeClaim(o);
      }
      case 1: {
        const o = node(`node-${i}`, r(5) ? pid : `aws:///a/i-${r(6)}`, { initialized: r(2) === 0, ready: r(3) > 0 });
        return (c) => c.applyNode(o);
      }
      case 2: {
        const o = nodeClaim(`nc-${i}`);
        return (c) => c.removeNodeClaim(o);
      }
      case 3: {
        const o = node(`node-${i}`, pid);
        return (c) => c.removeNode(o);
      }
      case 4:
      case 5:
      case 6: {
        const o = pod(`p-${r(20)}`, r(4) ? { nodeName: `node-${i}` } : { unschedulable: true });
        return (c) => c.workloads.applyPod(o);
      }
      case 7: {
        const o = pod(`p-${r(20)}`);
        return (c) => c.workloads.removePod(o);
      }
      case 8:
        return (c) => c.markForDeletion(pid);
      case 9:
        return (c) => c.unmarkForDeletion(pid);
      case 10: {
        const until = 1_000 * (seq + 1 + r(5));
        return (c) => c.nominate(pid, until);
      }
      default: {
        // A Node updated in place: same providerID, new status (capacity) or readiness.
        const o = node(`node-${i}`, pid, { initialized: true, ready: r(2) === 0, capacity: { cpu: `${1 + r(8)}` } });
        return (c) => c.applyNode(o);
      }
    }
  }

  it.each([1, 2, 3, 4, 5])('equals the list joined from scratch after every change (seed %i)', async (seed) => {
    const r = rng(seed);
    const kept = cluster();
    const steps: Step[] = [];
    for (let t = 0; t < 200; t++) {
      const step = randomStep(r, t);
      steps.push(step);
      step(kept.c);
      // Time moves (nominations run out) now and then.
      if (r(4) === 0) await kept.clock.advance(1_000);
      const fresh = cluster();
      await fresh.clock.advance(kept.clock.now());
      for (const s of steps) s(fresh.c);
      const listed = kept.c.stateNodes();
      expect(listed, `seed ${seed}, step ${t}`).toEqual(fresh.c.stateNodes());
      // One state node a name, and one NodeClaim's state node an instance (a second Node naming an instance, a copied
      // providerID, is listed apart: it has pods of its own).
      const names = listed.map((n) => n.name);
      expect(new Set(names).size, `seed ${seed}, step ${t}`).toBe(names.length);
      const pids = listed.flatMap((n) => (n.hasNodeClaim ? (n.providerId ?? []) : []));
      expect(new Set(pids).size, `seed ${seed}, step ${t}`).toBe(pids.length);
    }
  });
});
