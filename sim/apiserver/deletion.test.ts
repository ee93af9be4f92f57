// Deletion semantics in process (the HTTP path is covered in server.test.ts).
import { describe, expect, it } from 'vitest';
import { manualClock } from '../clock.ts';
import { createApi, type KObject } from './index.ts';

const owner = (o: KObject) => ({
  apiVersion: o.apiVersion!,
  kind: o.kind!,
  name: o.metadata.name!,
  uid: o.metadata.uid!,
  controller: true,
  blockOwnerDeletion: true,
});

function setup() {
  const api = createApi({ clock: manualClock() });
  const rs = api.create('replicasets.apps', 'default', {
    metadata: { name: 'rs' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [] } },
    },
  });
  for (const n of ['p1', 'p2'])
    api.create('pods', 'default', {
      metadata: { name: n, labels: { a: 'b' }, ownerReferences: [owner(rs)] },
      spec: { containers: [] },
    });
  api.bind('default', 'p1', 'node-1');
  return api;
}

describe('deletion', () => {
  it('holds a Foreground owner until its dependents are gone', () => {
    const api = setup();
    api.delete('replicasets.apps', 'default', 'rs', { propagationPolicy: 'Foreground' });
    const rs = api.get('replicasets.apps', 'default', 'rs');
    expect(rs.metadata.finalizers).toEqual(['foregroundDeletion']);
    // p2 was unbound and went at once; p1 is bound and terminates gracefully.
    expect(api.find('pods', 'default', 'p2')).toBeUndefined();
    expect(api.get('pods', 'default', 'p1').metadata.deletionTimestamp).toBeDefined();
    api.delete('pods', 'default', 'p1', { gracePeriodSeconds: 0 });
    expect(api.find('replicasets.apps', 'default', 'rs')).toBeUndefined();
  });

  it('keeps an object whose other owner still exists, dropping only the deleted owner reference', () => {
    const api = setup();
    const other = api.create('configmaps', 'default', { metadata: { name: 'other-owner' } });
    const p2 = api.get('pods', 'default', 'p2');
    api.patch('pods', 'default', 'p2', 'merge', {
      metadata: { ownerReferences: [...p2.metadata.ownerReferences!, { ...owner(other), controller: false }] },
    });
    api.delete('replicasets.apps', 'default', 'rs');
    expect(api.get('pods', 'default', 'p2').metadata.ownerReferences?.map((o) => o.name)).toEqual(['other-owner']);
  });

  it("deletes a namespace's contents and the namespace once it is empty, refusing new content meanwhile", () => {
    const api = setup();
    api.create('namespaces', undefined, { metadata: { name: 'team' } });
    api.create('configmaps', 'team', { metadata: { name: 'cm' } });
    api.delete('namespaces', undefined, 'team');
    expect(api.find('configmaps', 'team', 'cm')).toBeUndefined();
    expect(api.find('namespaces', undefined, 'team')).toBeUndefined();

    api.delete('namespaces', undefined, 'default');
    expect((api.get('namespaces', undefined, 'default').status as { phase: string }).phase).toBe('Terminating');
    expect(() => api.create('configmaps', 'default', { metadata: { name: 'late' } })).toThrow(
      expect.objectContaining({ code: 403 }),
    );
    api.delete('pods', 'default', 'p1', { gracePeriodSeconds: 0 });
    expect(api.find('namespaces', undefined, 'default')).toBeUndefined();
  });

  it('deletes a collection by label selector', () => {
    const api = setup();
    api.create('configmaps', 'default', { metadata: { name: 'keep', labels: { a: 'x' } } });
    api.create('configmaps', 'default', { metadata: { name: 'go', labels: { a: 'b' } } });
    api.deleteCollection('configmaps', 'default', { labelSelector: 'a=b' });
    expect(api.list('configmaps', 'default').items.map((c) => c.metadata.name)).toEqual(['keep']);
  });
});
