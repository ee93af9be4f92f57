// The simulated API server through the real @kubernetes/client-node over HTTP.
import * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, type SimClock } from '../clock.ts';
import { kubeConfigFor } from '../kubeconfig.ts';
import { startApiServer, type ApiServer } from './index.ts';

let clock: SimClock;
let server: ApiServer;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let co: k8s.CustomObjectsApi;

beforeEach(async () => {
  clock = manualClock();
  server = await startApiServer({ clock });
  kc = kubeConfigFor(server);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  co = kc.makeApiClient(k8s.CustomObjectsApi);
});

afterEach(async () => {
  await server.close();
});

/** The metav1 Status a failed call carried. */
async function failure(p: Promise<unknown>): Promise<{
  code: number;
  reason: string;
  message: string;
  details?: { causes?: Array<{ field: string; reason: string }> };
}> {
  try {
    await p;
  } catch (e) {
    const body = (e as k8s.ApiException<string>).body;
    return JSON.parse(typeof body === 'string' ? body : JSON.stringify(body));
  }
  throw new Error('expected the call to fail');
}

const pod = (name: string, labels: Record<string, string> = {}): k8s.V1Pod => ({
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', image: 'pause' }] },
});
const NC = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' };
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

describe('CRUD', () => {
  it('creates with uid, creationTimestamp from the sim clock, a global resourceVersion and defaults', async () => {
    await clock.advance(5000);
    const a = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const b = await core.createNamespacedPod({ namespace: 'default', body: pod('b') });
    expect(a.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata?.uid).not.toBe(b.metadata?.uid);
    expect(a.metadata?.creationTimestamp?.toISOString()).toBe('2025-01-01T00:00:05.000Z');
    expect(Number(b.metadata?.resourceVersion)).toBeGreaterThan(Number(a.metadata?.resourceVersion));
    expect(a.status?.phase).toBe('Pending');
    expect(a.spec?.terminationGracePeriodSeconds).toBe(30);
    expect(a.spec?.schedulerName).toBe('default-scheduler');
  });

  it('generates names from generateName', async () => {
    const p = await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { generateName: 'web-' }, spec: { containers: [] } },
    });
    expect(p.metadata?.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('lists with label and field selectors', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('a', { app: 'web', tier: 'fe' }) });
    await core.createNamespacedPod({ namespace: 'default', body: pod('b', { app: 'web' }) });
    await core.createNamespacedPod({ namespace: 'kube-system', body: pod('c', { app: 'dns' }) });
    server.api.bind('default', 'a', 'node-1');
    const names = (l: k8s.V1PodList) => l.items.map((p) => p.metadata?.name).sort();
    expect(names(await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web,tier' }))).toEqual(['a']);
    expect(names(await core.listPodForAllNamespaces({ labelSelector: 'app in (web,dns),tier!=fe' }))).toEqual([
      'b',
      'c',
    ]);
    expect(names(await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=' }))).toEqual(['b', 'c']);
    expect(names(await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-1' }))).toEqual(['a']);
    expect(
      names(
        await core.listPodForAllNamespaces({ fieldSelector: 'metadata.namespace=kube-system,status.phase=Pending' }),
      ),
    ).toEqual(['c']);
    expect(names(await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'metadata.name=b' }))).toEqual([
      'b',
    ]);
    const bad = await failure(core.listNamespacedPod({ namespace: 'default', labelSelector: 'a in b' }));
    expect(bad.code).toBe(400);
  });

  it('answers NotFound, AlreadyExists and Invalid with Status objects', async () => {
    const nf = await failure(core.readNamespacedPod({ namespace: 'default', name: 'nope' }));
    expect(nf).toMatchObject({ code: 404, reason: 'NotFound', message: 'pods "nope" not found' });
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    expect(await failure(core.createNamespacedPod({ namespace: 'default', body: pod('a') }))).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
    });
    expect(await failure(core.createNamespacedPod({ namespace: 'default', body: pod('Bad_Name') }))).toMatchObject({
      code: 422,
      reason: 'Invalid',
    });
    expect(await failure(core.createNamespacedPod({ namespace: 'nowhere', body: pod('a') }))).toMatchObject({
      code: 404,
      message: 'namespaces "nowhere" not found',
    });
  });

  it('rejects an update with a stale resourceVersion with 409 Conflict, and accepts a fresh one', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const updated = await core.replaceNamespacedPod({
      namespace: 'default',
      name: 'a',
      body: { ...created, metadata: { ...created.metadata, labels: { v: '2' } } },
    });
    expect(updated.metadata?.labels).toEqual({ v: '2' });
    const stale = await failure(
      core.replaceNamespacedPod({
        namespace: 'default',
        name: 'a',
        body: { ...created, metadata: { ...created.metadata, labels: { v: '3' } } },
      }),
    );
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(stale.message).toContain('the object has been modified');
  });

  it('does not bump the resourceVersion for an update that changes nothing', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const same = await core.replaceNamespacedPod({ namespace: 'default', name: 'a', body: created });
    expect(same.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });
});

describe('patches', () => {
  it('applies merge patches and JSON patches to custom resources, and refuses strategic merge on them', async () => {
    await co.createClusterCustomObject({
      ...NC,
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name: 'nc', labels: { a: '1' } },
        spec: { requirements: [] },
      },
    });
    const merged = (await co.patchClusterCustomObject(
      { ...NC, name: 'nc', body: { metadata: { labels: { b: '2' } } } },
      mergePatch,
    )) as k8s.KubernetesObject;
    expect(merged.metadata?.labels).toEqual({ a: '1', b: '2' });
    const jp = (await co.patchClusterCustomObject({
      ...NC,
      name: 'nc',
      body: [{ op: 'remove', path: '/metadata/labels/a' }],
    })) as k8s.KubernetesObject;
    expect(jp.metadata?.labels).toEqual({ b: '2' });
    const smp = await failure(
      co.patchClusterCustomObject(
        { ...NC, name: 'nc', body: { metadata: { labels: { c: '3' } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(smp.code).toBe(415);
  });

  it('applies strategic merge patches to core kinds, merging containers by name', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'a' },
        spec: {
          containers: [
            { name: 'app', image: 'v1' },
            { name: 'side', image: 's1' },
          ],
        },
      },
    });
    const p = await core.patchNamespacedPod(
      { namespace: 'default', name: 'a', body: { spec: { containers: [{ name: 'app', image: 'v2' }] } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    expect(p.spec?.containers.map((c) => `${c.name}:${c.image}`)).toEqual(['app:v2', 'side:s1']);
  });

  it('honours a resourceVersion carried in a patch as an optimistic lock', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    await core.patchNamespacedPod(
      { namespace: 'default', name: 'a', body: { metadata: { labels: { x: '1' } } } },
      mergePatch,
    );
    const stale = await failure(
      core.patchNamespacedPod(
        {
          namespace: 'default',
          name: 'a',
          body: { metadata: { resourceVersion: created.metadata?.resourceVersion, labels: { y: '1' } } },
        },
        mergePatch,
      ),
    );
    expect(stale.code).toBe(409);
  });

  it('server-side applies through KubernetesObjectApi: create, then merge and prune per field manager', async () => {
    const oa = k8s.KubernetesObjectApi.makeApiClient(kc);
    const cm = (data: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', namespace: 'default' },
      data,
    });
    await oa.patch(
      cm({ a: '1', b: '2' }),
      undefined,
      undefined,
      'karpenter-ts',
      true,
      k8s.PatchStrategy.ServerSideApply,
    );
    await core.patchNamespacedConfigMap(
      { namespace: 'default', name: 'cfg', body: { data: { other: 'x' } } },
      mergePatch,
    );
    const out = (await oa.patch(
      cm({ a: '9' }),
      undefined,
      undefined,
      'karpenter-ts',
      true,
      k8s.PatchStrategy.ServerSideApply,
    )) as k8s.V1ConfigMap;
    expect(out.data).toEqual({ a: '9', other: 'x' });
    expect(server.requests.find({ verb: 'patch', resource: 'configmaps' }).map((r) => r.query)).toContain(
      'fieldManager=karpenter-ts&force=true',
    );
  });
});

describe('status subresource', () => {
  const body = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'nc' },
    spec: { requirements: [] },
    status: { providerID: 'x' },
  };

  it('drops status on create and keeps main-resource writes from changing it', async () => {
    const created = (await co.createClusterCustomObject({ ...NC, body })) as Record<string, unknown>;
    expect(created.status).toBeUndefined();
    await co.patchClusterCustomObjectStatus(
      { ...NC, name: 'nc', body: { status: { providerID: 'aws:///a/i-1' } } },
      mergePatch,
    );
    const patched = (await co.patchClusterCustomObject(
      { ...NC, name: 'nc', body: { spec: { x: 1 }, status: { providerID: 'hacked' } } },
      mergePatch,
    )) as Record<string, any>;
    expect(patched.status).toEqual({ providerID: 'aws:///a/i-1' });
    expect(patched.spec.x).toBe(1);
  });

  it('changes only status through /status and bumps generation only on spec changes', async () => {
    const created = (await co.createClusterCustomObject({ ...NC, body })) as Record<string, any>;
    expect(created.metadata.generation).toBe(1);
    const s = (await co.replaceClusterCustomObjectStatus({
      ...NC,
      name: 'nc',
      body: {
        ...created,
        spec: { changed: true },
        metadata: { ...created.metadata, labels: { l: '1' } },
        status: { nodeName: 'n1' },
      },
    })) as Record<string, any>;
    expect(s.status).toEqual({ nodeName: 'n1' });
    expect(s.spec).toEqual({ requirements: [] });
    expect(s.metadata.labels).toBeUndefined();
    expect(s.metadata.generation).toBe(1);
    const m = (await co.patchClusterCustomObject(
      { ...NC, name: 'nc', body: { spec: { requirements: [{ key: 'k', operator: 'Exists' }] } } },
      mergePatch,
    )) as Record<string, any>;
    expect(m.metadata.generation).toBe(2);
  });
});

describe('deletion', () => {
  const nodeclaim = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'nc', finalizers: ['karpenter.sh/termination'] },
    spec: {},
  };

  it('keeps an object with finalizers, with a deletionTimestamp, until the last finalizer is removed', async () => {
    await co.createClusterCustomObject({ ...NC, body: nodeclaim });
    await clock.advance(7000);
    await co.deleteClusterCustomObject({ ...NC, name: 'nc' });
    const deleting = (await co.getClusterCustomObject({ ...NC, name: 'nc' })) as Record<string, any>;
    expect(deleting.metadata.deletionTimestamp).toBe('2025-01-01T00:00:07Z');
    const refused = await failure(
      co.patchClusterCustomObject(
        { ...NC, name: 'nc', body: { metadata: { finalizers: ['karpenter.sh/termination', 'new'] } } },
        mergePatch,
      ),
    );
    expect(refused.code).toBe(422);
    await co.patchClusterCustomObject({ ...NC, name: 'nc', body: { metadata: { finalizers: null } } }, mergePatch);
    expect((await failure(co.getClusterCustomObject({ ...NC, name: 'nc' }))).code).toBe(404);
  });

  it('deletes pods bound to a node gracefully and unbound pods at once', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('bound') });
    await core.createNamespacedPod({ namespace: 'default', body: pod('loose') });
    await core.createNamespacedPodBinding({
      namespace: 'default',
      name: 'bound',
      body: { metadata: { name: 'bound' }, target: { kind: 'Node', name: 'n1' } },
    });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'loose' });
    expect((await failure(core.readNamespacedPod({ namespace: 'default', name: 'loose' }))).code).toBe(404);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'bound' });
    const terminating = await core.readNamespacedPod({ namespace: 'default', name: 'bound' });
    expect(terminating.metadata?.deletionTimestamp?.toISOString()).toBe('2025-01-01T00:00:30.000Z');
    expect(terminating.metadata?.deletionGracePeriodSeconds).toBe(30);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'bound', gracePeriodSeconds: 0 });
    expect((await failure(core.readNamespacedPod({ namespace: 'default', name: 'bound' }))).code).toBe(404);
  });

  it('checks delete preconditions', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    const c = await failure(
      core.deleteNamespacedPod({ namespace: 'default', name: 'a', body: { preconditions: { uid: 'other' } } }),
    );
    expect(c).toMatchObject({ code: 409, reason: 'Conflict' });
  });

  it('garbage-collects dependents in the background and leaves orphans when asked', async () => {
    const dep = (name: string) => ({
      metadata: { name },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [] } },
      },
    });
    for (const name of ['gc', 'orphan']) {
      const d = await apps.createNamespacedDeployment({ namespace: 'default', body: dep(name) });
      server.api.create('replicasets.apps', 'default', {
        metadata: {
          name: `${name}-rs`,
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'Deployment', name, uid: d.metadata!.uid!, controller: true },
          ],
        },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { containers: [] } },
        },
      });
    }
    await apps.deleteNamespacedDeployment({ namespace: 'default', name: 'gc' });
    await apps.deleteNamespacedDeployment({ namespace: 'default', name: 'orphan', propagationPolicy: 'Orphan' });
    expect(server.api.find('replicasets.apps', 'default', 'gc-rs')).toBeUndefined();
    const orphan = server.api.find('replicasets.apps', 'default', 'orphan-rs');
    expect(orphan?.metadata.ownerReferences).toBeUndefined();
  });
});

describe('validation hook', () => {
  it('turns field errors into a 422 Invalid Status and lets the hook default fields', async () => {
    server.addValidator('nodepools', ({ object }) => {
      const spec = (object.spec ?? {}) as Record<string, any>;
      spec.weight ??= 0;
      return spec.template?.spec?.nodeClassRef
        ? []
        : [{ field: 'spec.template.spec.nodeClassRef', type: 'FieldValueRequired', message: 'Required value' }];
    });
    const np = { group: 'karpenter.sh', version: 'v1', plural: 'nodepools' };
    const bad = await failure(
      co.createClusterCustomObject({
        ...np,
        body: {
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodePool',
          metadata: { name: 'spot' },
          spec: { template: { spec: {} } },
        },
      }),
    );
    expect(bad).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'NodePool.karpenter.sh "spot" is invalid: spec.template.spec.nodeClassRef: Required value',
    });
    expect(bad.details?.causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template.spec.nodeClassRef' },
    ]);
    const ok = (await co.createClusterCustomObject({
      ...np,
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'ok' },
        spec: { template: { spec: { nodeClassRef: { name: 'default' } } } },
      },
    })) as Record<string, any>;
    expect(ok.spec.weight).toBe(0);
  });
});

describe('leases', () => {
  it('supports leader-election style create and update with resourceVersion conflicts', async () => {
    const coord = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await coord.createNamespacedLease({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'karpenter-leader-election' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15 },
      },
    });
    const taken = await coord.replaceNamespacedLease({
      namespace: 'kube-system',
      name: 'karpenter-leader-election',
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
    });
    expect(taken.spec?.holderIdentity).toBe('b');
    const lost = await failure(
      coord.replaceNamespacedLease({
        namespace: 'kube-system',
        name: 'karpenter-leader-election',
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'c' } },
      }),
    );
    expect(lost).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(
      await failure(
        coord.createNamespacedLease({
          namespace: 'kube-system',
          body: { metadata: { name: 'karpenter-leader-election' }, spec: {} },
        }),
      ),
    ).toMatchObject({ code: 409, reason: 'AlreadyExists' });
  });
});

describe('scale subresource', () => {
  it('reads and patches a deployment scale', async () => {
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } },
        },
      },
    });
    const s = await apps.readNamespacedDeploymentScale({ namespace: 'default', name: 'web' });
    expect(s.spec?.replicas).toBe(1);
    expect(s.status?.selector).toBe('app=web');
    await apps.patchNamespacedDeploymentScale(
      { namespace: 'default', name: 'web', body: { spec: { replicas: 3 } } },
      mergePatch,
    );
    expect((await apps.readNamespacedDeployment({ namespace: 'default', name: 'web' })).spec?.replicas).toBe(3);
  });
});

describe('discovery', () => {
  const get = async (path: string, accept = 'application/json') => {
    const res = await fetch(server.url + path, { headers: { accept, authorization: `Bearer ${server.token}` } });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('serves /version, /api, /apis and APIResourceLists with subresources, short names and categories', async () => {
    expect((await get('/version')).body.gitVersion).toBe('v1.32.0');
    expect((await get('/api')).body.versions).toEqual(['v1']);
    const groups = (await get('/apis')).body.groups.map((g: any) => g.name);
    expect(groups).toEqual(
      expect.arrayContaining([
        'apps',
        'policy',
        'coordination.k8s.io',
        'storage.k8s.io',
        'events.k8s.io',
        'karpenter.sh',
        'karpenter.k8s.aws',
      ]),
    );
    const v1 = (await get('/api/v1')).body.resources.map((r: any) => r.name);
    expect(v1).toEqual(
      expect.arrayContaining([
        'pods',
        'pods/status',
        'pods/eviction',
        'pods/binding',
        'nodes',
        'nodes/status',
        'namespaces',
        'events',
        'services',
        'persistentvolumes',
        'persistentvolumeclaims',
        'bindings',
      ]),
    );
    const ksh = (await get('/apis/karpenter.sh/v1')).body.resources;
    expect(ksh.find((r: any) => r.name === 'nodeclaims')).toMatchObject({
      singularName: 'nodeclaim',
      namespaced: false,
      kind: 'NodeClaim',
      categories: ['karpenter'],
    });
    expect(ksh.map((r: any) => r.name)).toContain('nodeclaims/status');
    const aws = (await get('/apis/karpenter.k8s.aws/v1')).body.resources;
    expect(aws.find((r: any) => r.name === 'ec2nodeclasses').shortNames).toEqual(['ec2nc', 'ec2ncs']);
    expect((await get('/apis/apps/v1')).body.resources.find((r: any) => r.name === 'deployments/scale')).toMatchObject({
      group: 'autoscaling',
      kind: 'Scale',
    });
    expect((await get('/apis/nope/v1')).status).toBe(404);
  });

  it('serves openapi v3 documents that declare fieldValidation on PATCH for every kind', async () => {
    const root = (await get('/openapi/v3')).body.paths;
    expect(Object.keys(root)).toEqual(expect.arrayContaining(['api/v1', 'apis/apps/v1', 'apis/karpenter.sh/v1']));
    const doc = (await get(root['apis/karpenter.sh/v1'].serverRelativeURL)).body;
    const patch = doc.paths['/apis/karpenter.sh/v1/nodeclaims/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({
      group: 'karpenter.sh',
      version: 'v1',
      kind: 'NodeClaim',
    });
    expect(patch.parameters.map((p: any) => p.name)).toContain('fieldValidation');
    expect(Object.keys((await get('/openapi/v3/api/v1')).body.paths)).toContain(
      '/api/v1/namespaces/{namespace}/pods/{name}',
    );
  });

  it('answers Table requests with the kind printer columns', async () => {
    await co.createClusterCustomObject({
      ...NC,
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: {
          name: 'nc',
          labels: {
            'node.kubernetes.io/instance-type': 'm5.large',
            'karpenter.sh/capacity-type': 'spot',
            'topology.kubernetes.io/zone': 'us-east-1a',
          },
        },
        spec: {},
      },
    });
    await clock.advance(90_000);
    const t = (
      await get('/apis/karpenter.sh/v1/nodeclaims', 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json')
    ).body;
    expect(t.kind).toBe('Table');
    expect(t.columnDefinitions.filter((c: any) => c.priority === 0).map((c: any) => c.name)).toEqual([
      'Name',
      'Type',
      'Capacity',
      'Zone',
      'Node',
      'Ready',
      'Age',
    ]);
    expect(t.rows[0].cells.slice(0, 4)).toEqual(['nc', 'm5.large', 'spot', 'us-east-1a']);
    expect(t.rows[0].cells[6]).toBe('90s');
    expect(t.rows[0].object.metadata.name).toBe('nc');
  });
});

describe('fault injection and the request log', () => {
  it('fails the next N matching writes with the given status, then recovers', async () => {
    server.faults.failNext({ resource: 'pods', verbs: ['create'], count: 2, code: 500 });
    expect((await failure(core.createNamespacedPod({ namespace: 'default', body: pod('a') }))).code).toBe(500);
    await core.listNamespacedPod({ namespace: 'default' });
    expect((await failure(core.createNamespacedPod({ namespace: 'default', body: pod('a') }))).code).toBe(500);
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
    expect(server.faults.pending()).toBe(0);
    server.faults.failNext({ resource: 'nodeclaims', code: 409 });
    const c = await failure(
      co.createClusterCustomObject({
        ...NC,
        body: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name: 'x' }, spec: {} },
      }),
    );
    expect(c).toMatchObject({ code: 409, reason: 'Conflict' });
    const creates = server.requests.find({ verb: 'create', resource: 'pods' });
    expect(creates.map((r) => r.status)).toEqual([500, 500, 201]);
  });

  it('adds latency to matching requests without failing them', async () => {
    server.faults.addLatency(5, { resource: 'pods', verbs: ['list'] });
    const l = await core.listNamespacedPod({ namespace: 'default' });
    expect(l.items).toEqual([]);
  });
});
