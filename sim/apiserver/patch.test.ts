import { describe, expect, it } from 'vitest';
import { jsonPatch, mergePatch } from './patch.ts';
import { serverSideApply, strategicMerge } from './strategic.ts';

describe('merge patch (RFC 7386)', () => {
  it('merges objects, deletes on null, replaces lists, and leaves its inputs alone', () => {
    const target = { a: { b: 1, c: 2 }, list: [1, 2], keep: 'x' };
    const out = mergePatch(target, { a: { b: 9, c: null }, list: [3] });
    expect(out).toEqual({ a: { b: 9 }, list: [3], keep: 'x' });
    expect(target).toEqual({ a: { b: 1, c: 2 }, list: [1, 2], keep: 'x' });
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { labels: { 'a/b': '1' }, finalizers: ['f1', 'f2'] }, spec: { n: 1 } };

  it('applies add, remove, replace, move, copy and test, with ~1 escapes and "-" appends', () => {
    const out = jsonPatch(doc, [
      { op: 'add', path: '/metadata/finalizers/-', value: 'f3' },
      { op: 'remove', path: '/metadata/finalizers/0' },
      { op: 'replace', path: '/metadata/labels/a~1b', value: '2' },
      { op: 'test', path: '/spec/n', value: 1 },
      { op: 'copy', from: '/spec/n', path: '/spec/m' },
      { op: 'move', from: '/spec/n', path: '/spec/k' },
    ]);
    expect(out).toEqual({ metadata: { labels: { 'a/b': '2' }, finalizers: ['f2', 'f3'] }, spec: { m: 1, k: 1 } });
    expect(doc.metadata.finalizers).toEqual(['f1', 'f2']);
  });

  it('answers 422 for a failed test or a missing path, 400 for a malformed patch', () => {
    expect(() => jsonPatch(doc, [{ op: 'test', path: '/spec/n', value: 2 }])).toThrow(
      expect.objectContaining({ code: 422 }),
    );
    expect(() => jsonPatch(doc, [{ op: 'remove', path: '/spec/zz' }])).toThrow(expect.objectContaining({ code: 422 }));
    expect(() => jsonPatch(doc, { op: 'add' })).toThrow(expect.objectContaining({ code: 400 }));
    expect(() => jsonPatch(doc, [{ op: 'frobnicate', path: '/spec' }])).toThrow(expect.objectContaining({ code: 400 }));
  });
});

describe('strategic merge patch', () => {
  const pod = {
    metadata: { finalizers: ['a'] },
    spec: {
      containers: [
        { name: 'app', image: 'v1', env: [{ name: 'X', value: '1' }] },
        { name: 'side', image: 's1' },
      ],
      tolerations: [{ key: 't1', operator: 'Exists' }],
    },
    status: {
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'PodScheduled', status: 'True' },
      ],
    },
  };

  it('merges containers by name and conditions by type, replaces other lists', () => {
    const out = strategicMerge(pod, {
      spec: { containers: [{ name: 'app', image: 'v2' }], tolerations: [{ key: 't2', operator: 'Exists' }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    }) as typeof pod;
    expect(out.spec.containers).toEqual([
      { name: 'app', image: 'v2', env: [{ name: 'X', value: '1' }] },
      { name: 'side', image: 's1' },
    ]);
    expect(out.spec.tolerations).toEqual([{ key: 't2', operator: 'Exists' }]);
    expect(out.status.conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ]);
  });

  it('understands $patch: delete, $deleteFromPrimitiveList, $setElementOrder and set-merges finalizers', () => {
    const out = strategicMerge(pod, {
      metadata: { finalizers: ['b'] },
      spec: { containers: [{ name: 'side', $patch: 'delete' }], '$setElementOrder/containers': [{ name: 'app' }] },
    }) as typeof pod;
    expect(out.metadata.finalizers).toEqual(['a', 'b']);
    expect(out.spec.containers.map((c) => c.name)).toEqual(['app']);
    expect(Object.keys(out.spec).filter((k) => k.startsWith('$'))).toEqual([]);
    const removed = strategicMerge(out, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }) as typeof pod;
    expect(removed.metadata.finalizers).toEqual(['b']);
  });
});

describe('server-side apply', () => {
  it('creates from nothing, merges over fields set by others, and prunes what the same manager dropped', () => {
    const first = { metadata: { labels: { a: '1', b: '2' } }, spec: { replicas: 1, template: { x: 1 } } };
    const created = serverSideApply(undefined, first, undefined, true);
    expect(created).toEqual(first);
    const live = { ...created, metadata: { labels: { a: '1', b: '2', other: 'kept' } } };
    const second = { metadata: { labels: { a: '1' } }, spec: { replicas: 3 } };
    const out = serverSideApply(live, second, first, true) as {
      metadata: { labels: Record<string, string> };
      spec: Record<string, unknown>;
    };
    expect(out.metadata.labels).toEqual({ a: '1', other: 'kept' });
    expect(out.spec).toEqual({ replicas: 3 });
  });

  it('merges keyed lists of core types and replaces lists of custom resources', () => {
    const live = {
      spec: {
        containers: [
          { name: 'a', image: '1' },
          { name: 'b', image: '1' },
        ],
      },
    };
    const applied = { spec: { containers: [{ name: 'a', image: '2' }] } };
    expect((serverSideApply(live, applied, undefined, true).spec as { containers: unknown[] }).containers).toHaveLength(
      2,
    );
    expect((serverSideApply(live, applied, undefined, false).spec as { containers: unknown[] }).containers).toEqual([
      { name: 'a', image: '2' },
    ]);
  });
});
