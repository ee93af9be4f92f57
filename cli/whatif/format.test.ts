import { describe, expect, it } from 'vitest';
import { Packr } from 'msgpackr';
import { decodeSnapshot, encodeSnapshot, looksLikeMsgpack, SNAPSHOT_FORMAT, type SnapshotFile } from './format.ts';

const file: SnapshotFile = {
  format: SNAPSHOT_FORMAT,
  version: 1,
  createdAt: '2026-11-30T11:30:00.000Z',
  source: { server: 'http://127.0.0.1:1' },
  objects: {
    Node: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } }],
    Pod: [],
    NodePool: [],
    NodeClaim: [],
    EC2NodeClass: [],
    DaemonSet: [],
    PodDisruptionBudget: [],
  },
};
const raw = (v: unknown) => new Packr({ useRecords: false }).pack(v);

describe('msgpack snapshot format', () => {
  it('round-trips and is recognised by its first byte', () => {
    const bytes = encodeSnapshot(file);
    expect(looksLikeMsgpack(bytes)).toBe(true);
    expect(looksLikeMsgpack(new TextEncoder().encode('apiVersion: v1'))).toBe(false);
    expect(decodeSnapshot(bytes, 'f.msgpack')).toEqual(file);
  });

  it('says a truncated file is truncated, naming it', () => {
    const bytes = encodeSnapshot(file);
    expect(() => decodeSnapshot(bytes.slice(0, bytes.length - 7), 'cut.msgpack')).toThrow(
      /^cut\.msgpack: not a readable karpenter-ts snapshot: the msgpack data is truncated or corrupt/,
    );
  });

  it('rejects other formats, newer versions and malformed sections with the field', () => {
    expect(() => decodeSnapshot(raw({ hello: 1 }), 'x')).toThrow(
      'x: not a valid karpenter-ts snapshot: format is undefined, expected "karpenter-ts/snapshot"',
    );
    expect(() => decodeSnapshot(raw({ ...file, version: 2 }), 'x')).toThrow(
      'format version 2 is newer than this karpenter-ts reads (1)',
    );
    expect(() => decodeSnapshot(raw({ ...file, objects: { ...file.objects, Pod: {} } }), 'x')).toThrow(
      'objects.Pod is not a list',
    );
    expect(() => decodeSnapshot(raw({ ...file, objects: { ...file.objects, Service: [] } }), 'x')).toThrow(
      'objects.Service: unknown kind',
    );
    expect(() => decodeSnapshot(raw({ ...file, objects: { ...file.objects, Node: [3] } }), 'x')).toThrow(
      'objects.Node[0] is not an object',
    );
    expect(() => decodeSnapshot(raw({ ...file, createdAt: 'yesterday' }), 'x')).toThrow('createdAt is not an ISO time');
  });
});
