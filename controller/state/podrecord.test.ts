import { describe, expect, it } from 'vitest';
import { parsePod } from '../../engine/index.ts';
import { findCondition } from '../operator/conditions.ts';
import type { KubeObject } from '../operator/kube.ts';
import { PodRecord, PodRecords } from './podrecord.ts';

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
    expect(rec.metadata).toEqual({
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
