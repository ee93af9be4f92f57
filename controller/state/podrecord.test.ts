import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parsePod } from '../../engine/index.ts';
import { findCondition } from '../operator/conditions.ts';
import type { KubeObject } from '../operator/kube.ts';
import { newLogger } from '../operator/logger.ts';
import { PodRecord, PodRecords } from './podrecord.ts';
import { Workloads } from './workloads.ts';

const T = '2025-01-01T00:00:00Z';

function pod(name: string, o: { owner?: 'ReplicaSet' | 'DaemonSet'; deleting?: boolean } = {}): KubeObject {
  const owner = o.owner ?? 'ReplicaSet';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'apps',
      uid: `uid-${name}`,
      resourceVersion: '42',
      creationTimestamp: T,
      ...(o.deleting ? { deletionTimestamp: T } : {}),
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: owner, name: 'web', uid: 'owner-uid', controller: true }],
    },
    spec: {
      nodeName: 'node-1',
      containers: [
        { name: 'app', image: 'web:1', resources: { requests: { cpu: '500m' }, limits: { cpu: '1', memory: '1Gi' } } },
      ],
      initContainers: [{ name: 'proxy', restartPolicy: 'Always', resources: { limits: { cpu: '250m' } } }],
    },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: T },
        { type: 'Ready', status: 'True', lastTransitionTime: T, lastProbeTime: null },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: T, message: 'long text' },
      ],
    },
  };
}

describe('PodRecords', () => {
  it('keeps the parsed pod and the fields controllers read of the object, and nothing else', () => {
    const records = new PodRecords(() => 0);
    const rec = records.record(pod('web-1', { deleting: true }));
    const parsed = parsePod(pod('web-1', { deleting: true }));
    if (!parsed.ok) throw new Error('the test pod does not parse');
    expect(rec.pod).toEqual(parsed.value);
    expect(rec.pod?.requests).toMatchObject({ cpu: 750 });
    const { name, namespace, uid, resourceVersion, deletionTimestamp, ownerReferences, labels } = rec.metadata;
    expect({ name, namespace, uid, resourceVersion, deletionTimestamp, ownerReferences, labels }).toEqual({
      name: 'web-1',
      namespace: 'apps',
      uid: 'uid-web-1',
      resourceVersion: '42',
      deletionTimestamp: T,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'owner-uid', controller: true }],
    });
    expect(rec.spec).toEqual({ nodeName: 'node-1' });
    expect(rec.status).toEqual({
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: T },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: T },
      ],
    });
    expect(findCondition(rec, 'PodScheduled')?.status).toBe('True');
    // containers and sidecars add up: 1 + 0.25 cores.
    expect(rec.limits).toEqual({ cpu: 1250, memory: 1024 ** 3 });
    expect(rec.source).toBeUndefined();
    // Nothing else: the record's own fields are the kept metadata (name, namespace and uid read through the Pod that
    // has them), the parts above and what it notes of the pod.
    expect(Object.keys(rec).sort()).toEqual(
      [
        ...['ident', 'resourceVersion', 'deletionTimestamp', 'ownerReferences'],
        ...['spec', 'status', 'limits', 'pod', 'source'],
        ...['seenAt', 'decidedAt', 'marks'],
      ].sort(),
    );
    expect(rec.errors).toEqual([]);
  });

  it("keeps the object's own name, namespace and uid where the Pod has others, and why a pod does not parse", () => {
    const records = new PodRecords(() => 0);
    // parsePod defaults a missing namespace and uid; the record's metadata says what the object said.
    const raw = pod('raw');
    delete (raw.metadata as { namespace?: string }).namespace;
    delete (raw.metadata as { uid?: string }).uid;
    const rec = records.record(raw);
    expect([rec.pod?.namespace, rec.pod?.uid]).toEqual(['default', 'default/raw']);
    expect([rec.metadata.name, rec.metadata.namespace, rec.metadata.uid]).toEqual(['raw', undefined, undefined]);
    const bad = pod('bad');
    bad.spec = { ...(bad.spec as object), containers: [] };
    const unparsed = records.record(bad);
    expect(unparsed.pod).toBeUndefined();
    expect(unparsed.errors.map((e) => e.path)).toEqual(['spec.containers']);
    expect([unparsed.metadata.name, unparsed.metadata.namespace, unparsed.metadata.uid]).toEqual([
      'bad',
      'apps',
      'uid-bad',
    ]);
  });

  it("parses a pod's next event afresh: what changed shows, what did not is as the first event decoded it", () => {
    const records = new PodRecords(() => 0);
    const first = records.record(pod('web-1'));
    const next = pod('web-1');
    next.spec = { ...(next.spec as object), nodeName: 'node-2' };
    next.status = { phase: 'Succeeded' };
    (next.metadata as { labels?: Record<string, string> }).labels = { app: 'web', tier: 'front' };
    const again = records.record(next);
    const parsed = parsePod(next);
    if (!parsed.ok) throw new Error('the test pod does not parse');
    expect(again.pod).toEqual(parsed.value);
    expect([again.pod?.nodeName, again.pod?.phase, again.pod?.labels]).toEqual([
      'node-2',
      'Succeeded',
      { app: 'web', tier: 'front' },
    ]);
    expect(again.pod?.requests).toEqual(first.pod?.requests);
    expect(again.pod?.tolerations).toEqual(first.pod?.tolerations);
  });

  it('Workloads: a version of a pod it holds is its record again, unparsed; a newer version is parsed', () => {
    const w = new Workloads({ log: newLogger({ level: 'silent' }), changed: () => {} });
    const held = w.podRecord(pod('web-1'));
    w.applyPod(held);
    expect(w.podRecord(pod('web-1')), 'the same resourceVersion').toBe(held);
    const next = pod('web-1');
    next.metadata.resourceVersion = '43';
    next.spec = { ...(next.spec as object), nodeName: 'node-2' };
    const newer = w.podRecord(next);
    expect(newer).not.toBe(held);
    expect(newer.pod?.nodeName).toBe('node-2');
    const other = pod('web-1');
    other.metadata.uid = 'uid-of-a-new-pod';
    expect(w.podRecord(other).metadata.uid, 'another pod of the same name and version').toBe('uid-of-a-new-pod');
  });

  it('shares equal owner lists and limits between the pods of a workload', () => {
    const records = new PodRecords(() => 0);
    const [a, b] = [records.record(pod('web-1')), records.record(pod('web-2'))];
    expect(a.metadata.ownerReferences).toBe(b.metadata.ownerReferences);
    expect(a.limits).toBe(b.limits);
    expect(a.pod?.labels).toBe(b.pod?.labels);
  });

  it("keeps a DaemonSet's pod's stripped object (the DaemonSet's overhead is parsed from its newest pod)", () => {
    const rec = new PodRecords(() => 0).record(pod('agent-1', { owner: 'DaemonSet' }));
    expect(rec.source?.spec?.['containers']).toEqual([
      { name: 'app', resources: { requests: { cpu: '500m' }, limits: { cpu: '1', memory: '1Gi' } } },
    ]);
    expect(rec.source?.status?.['podIP']).toBeUndefined();
  });

  it('returns a record as it is, and says why an object does not parse', () => {
    const records = new PodRecords(() => 0);
    const rec = records.record(pod('web-1'));
    expect(records.record(rec)).toBe(rec);
    const bad = records.record({ ...pod('bad'), spec: { containers: 'none' } });
    expect(bad).toBeInstanceOf(PodRecord);
    expect(bad.pod).toBeUndefined();
    expect(bad.errors.length).toBeGreaterThan(0);
  });
});

describe("a pod's record in cluster state", () => {
  const log = newLogger({ level: 'silent' });
  const version = (o: KubeObject, rv: string, uid?: string): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, resourceVersion: rv, ...(uid ? { uid } : {}) },
  });

  it("carries its times, metric marks and key string to the pod's newer records, and drops them with the pod", () => {
    const w = new Workloads({ log, changed: () => {} });
    w.applyPod(pod('web-1'));
    const first = w.timesOf('apps', 'web-1', 'uid-web-1')!;
    first.seenAt = 1_000;
    first.decidedAt = 3_000;
    first.metricsSeen = true;
    first.boundObserved = true;
    w.applyPod(version(pod('web-1'), '43'));
    const second = w.pod('apps', 'web-1')!;
    expect(second).not.toBe(first);
    expect(second.metadata.resourceVersion).toBe('43');
    expect([second.seenAt, second.decidedAt, second.metricsSeen, second.boundObserved, second.startedObserved]).toEqual(
      [1_000, 3_000, true, true, false],
    );
    // An older version does not replace it (nor take its marks).
    w.applyPod(version(pod('web-1'), '41'));
    expect(w.pod('apps', 'web-1')).toBe(second);
    expect(w.timesOf('apps', 'web-1', 'another-uid')).toBeUndefined();
    w.removePod(pod('web-1'));
    expect(w.timesOf('apps', 'web-1', 'uid-web-1')).toBeUndefined();
    expect([...w.podRecords()]).toEqual([]);
  });

  it('lists the pending pods in the order they were first added, across namespaces, until bound or gone', () => {
    const w = new Workloads({ log, changed: () => {} });
    const pending = (name: string, namespace: string, rv: string, nodeName?: string): KubeObject => {
      const o = version(pod(name), rv, `uid-${namespace}-${name}`);
      return {
        ...o,
        metadata: { ...o.metadata, namespace },
        spec: { ...o.spec, nodeName },
        status: { phase: 'Pending' },
      };
    };
    const names = (): string[] => w.pendingPods().map((p) => `${p.namespace}/${p.name}`);
    w.applyPod(pending('a', 'one', '1'));
    w.applyPod(pending('b', 'two', '2'));
    w.applyPod(pending('a', 'two', '3'));
    w.applyPod(pending('c', 'one', '4'));
    w.applyPod(pending('a', 'one', '5'));
    expect(names()).toEqual(['one/a', 'two/b', 'two/a', 'one/c']);
    w.applyPod(pending('b', 'two', '6', 'node-1'));
    w.removePod(pending('a', 'one', '7'));
    w.applyPod(pending('d', 'one', '8'));
    expect(names()).toEqual(['two/a', 'one/c', 'one/d']);
    expect(w.podsOn('node-1').map((p) => p.name)).toEqual(['b']);
    expect(w.pod('two', 'a')?.metadata.resourceVersion).toBe('3');
    expect(w.pod('one', 'a')).toBeUndefined();
  });

  it("lists a node's pods in the order they last changed, and follows a pod that moves or goes", () => {
    const w = new Workloads({ log, changed: () => {} });
    const on = (name: string, node: string, rv: string): KubeObject => {
      const o = version(pod(name), rv);
      return { ...o, spec: { ...o.spec, nodeName: node } };
    };
    const names = (node: string): string[] => w.podsOn(node).map((p) => p.name);
    for (const n of ['a', 'b', 'c']) w.applyPod(on(n, 'node-1', '1'));
    w.applyPod(on('a', 'node-1', '2'));
    expect(names('node-1')).toEqual(['b', 'c', 'a']);
    const v = w.podsVersion('node-1');
    w.applyPod(on('b', 'node-2', '3'));
    expect([names('node-1'), names('node-2')]).toEqual([['c', 'a'], ['b']]);
    expect(w.podsVersion('node-1')).not.toBe(v);
    w.removePod(pod('c'));
    w.removePod(pod('a'));
    expect(names('node-1')).toEqual([]);
    expect(w.podsVersion('node-1')).toBe(0);
    expect(w.pod('apps', 'b')?.metadata.name).toBe('b');
  });

  it('starts afresh for a new pod of the same name (another uid)', () => {
    const w = new Workloads({ log, changed: () => {} });
    w.applyPod(pod('web-1'));
    const old = w.pod('apps', 'web-1')!;
    old.seenAt = 1_000;
    old.metricsSeen = true;
    w.applyPod(version(pod('web-1'), '50', 'uid-web-1-again'));
    const now = w.pod('apps', 'web-1')!;
    expect(now.metadata.uid).toBe('uid-web-1-again');
    expect([now.seenAt, now.decidedAt, now.metricsSeen]).toEqual([undefined, undefined, false]);
    expect(w.timesOf('apps', 'web-1', 'uid-web-1')).toBeUndefined();
    expect(w.timesOf('apps', 'web-1', 'uid-web-1-again')).toBe(now);
  });

  it('shares equal spec and status parts between pods, frozen', () => {
    const records = new PodRecords(() => 0);
    const [a, b] = [records.record(pod('web-1')), records.record(pod('web-2'))];
    expect(a.spec).toBe(b.spec);
    expect(a.status).toBe(b.status);
    expect(Object.isFrozen(a.status) && Object.isFrozen(a.status.conditions![0])).toBe(true);
    const moved = records.record({ ...pod('web-3'), spec: { ...pod('web-3').spec, nodeName: 'node-2' } });
    expect(moved.spec).toEqual({ nodeName: 'node-2' });
    const later = pod('web-4');
    (later.status!['conditions'] as { type: string; lastTransitionTime: string }[])[1]!.lastTransitionTime =
      '2025-01-01T00:00:05Z';
    const c = records.record(later);
    expect(c.status).not.toBe(a.status);
    expect(findCondition(c, 'Ready')?.lastTransitionTime).toBe('2025-01-01T00:00:05Z');
    expect(findCondition(c, 'PodScheduled')?.lastTransitionTime).toBe(T);
  });

  it('forgets a shared part once no record holds it, and still shares the parts records hold', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const records = new PodRecords(() => 0);
    const entries = (): number => (records as unknown as { parts: Map<string, unknown> }).parts.size;
    const kept = records.record(pod('web-1'));
    // Pods that came and went, each with a status of its own (another transition time): records dropped at once.
    for (let i = 1; i <= 50; i++) {
      const gone = pod(`gone-${i}`);
      const ready = (gone.status!['conditions'] as { lastTransitionTime: string }[])[1]!;
      ready.lastTransitionTime = `2025-01-01T00:01:${String(i).padStart(2, '0')}Z`;
      records.record(gone);
    }
    const made = entries();
    expect(made).toBeGreaterThanOrEqual(51);
    // Collected, then forgotten by the registry's callbacks (tasks of their own after a collection).
    for (let round = 0; round < 50 && entries() > made - 50; round++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      gc();
    }
    expect(entries()).toBe(made - 50);
    const again = records.record(pod('web-2'));
    expect(again.status).toBe(kept.status);
    expect(again.spec).toBe(kept.spec);
  });
});
