import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../domain/types.ts';
import { PartMemo } from './decode.ts';
import { formatFieldError } from './errors.ts';
import { parsePod } from './pod.ts';

type Obj = Record<string, any>;
const GI = 1024 ** 3;
const MI = 1024 ** 2;

function pod(spec: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', ...extra.metadata },
    spec,
    ...(extra.status ? { status: extra.status } : {}),
  };
}
const c = (name: string, requests?: Obj, more: Obj = {}): Obj => ({
  name,
  image: 'x',
  ...(requests ? { resources: { requests } } : {}),
  ...more,
});

function requests(p: Obj): Record<string, number> {
  const r = parsePod(p);
  if (!r.ok) throw new Error(r.errors.map(formatFieldError).join('\n'));
  return { ...r.value.requests };
}

describe('pod requests (component-helpers semantics)', () => {
  it('sums app containers and counts the pod as one unit of pods', () => {
    expect(
      requests(
        pod({ containers: [c('a', { cpu: '250m', memory: '64Mi' }), c('b', { cpu: '1', 'nvidia.com/gpu': 1 })] }),
      ),
    ).toEqual({ cpu: 1250, memory: 64 * MI, 'nvidia.com/gpu': 1, pods: 1 });
  });

  it('defaults requests to limits where only limits are set', () => {
    expect(
      requests(
        pod({
          containers: [
            c('a', undefined, { resources: { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '500m' } } }),
          ],
        }),
      ),
    ).toEqual({ cpu: 500, memory: GI, pods: 1 });
  });

  it('takes the larger of the containers and a bigger regular init container, per resource', () => {
    const p = pod({
      containers: [c('app', { cpu: '1', memory: '2Gi' })],
      initContainers: [c('init', { cpu: '3', memory: '1Gi' })],
    });
    expect(requests(p)).toEqual({ cpu: 3000, memory: 2 * GI, pods: 1 });
  });

  it('adds sidecars (restartable init containers) to the app containers', () => {
    const p = pod({
      containers: [c('app', { cpu: '1' })],
      initContainers: [c('proxy', { cpu: '500m', memory: '128Mi' }, { restartPolicy: 'Always' })],
    });
    expect(requests(p)).toEqual({ cpu: 1500, memory: 128 * MI, pods: 1 });
  });

  it('charges a regular init container for the sidecars started before it, not after it', () => {
    const before = pod({
      containers: [c('app', { cpu: '1' })],
      initContainers: [c('proxy', { cpu: '500m' }, { restartPolicy: 'Always' }), c('migrate', { cpu: '2' })],
    });
    expect(requests(before).cpu).toBe(2500); // max(1 + 0.5, 2 + 0.5)
    const after = pod({
      containers: [c('app', { cpu: '1' })],
      initContainers: [c('migrate', { cpu: '2' }), c('proxy', { cpu: '500m' }, { restartPolicy: 'Always' })],
    });
    expect(requests(after).cpu).toBe(2000); // max(1 + 0.5, 2)
  });

  it('lets pod-level requests replace cpu and memory but keeps other resources', () => {
    const p = pod({
      containers: [c('app', { cpu: '1', memory: '1Gi', 'example.com/dongle': 2 })],
      resources: { requests: { cpu: '4' }, limits: { memory: '8Gi' } },
    });
    expect(requests(p)).toEqual({ cpu: 4000, memory: 8 * GI, 'example.com/dongle': 2, pods: 1 });
  });

  it('adds the runtime overhead last', () => {
    const p = pod({
      containers: [c('app', { cpu: '1' })],
      resources: { requests: { cpu: '2' } },
      overhead: { cpu: '250m', memory: '120Mi' },
    });
    expect(requests(p)).toEqual({ cpu: 2250, memory: 120 * MI, pods: 1 });
  });

  it('uses the larger of spec and status during an in-place resize, and only status when the resize is infeasible', () => {
    const status = {
      containerStatuses: [
        { name: 'app', resources: { requests: { cpu: '3' } }, allocatedResources: { cpu: '2', memory: '1Gi' } },
      ],
    };
    expect(requests(pod({ containers: [c('app', { cpu: '4', memory: '512Mi' })] }, { status }))).toEqual({
      cpu: 4000,
      memory: GI,
      pods: 1,
    });
    const infeasible = { ...status, conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }] };
    expect(requests(pod({ containers: [c('app', { cpu: '4', memory: '512Mi' })] }, { status: infeasible }))).toEqual({
      cpu: 3000,
      memory: GI,
      pods: 1,
    });
  });

  it('counts a pod without requests as one pod and nothing else', () => {
    expect(requests(pod({ containers: [c('app')] }))).toEqual({ pods: 1 });
  });
});

describe('parsePod', () => {
  const full = pod(
    {
      priority: 1000,
      priorityClassName: 'high',
      nodeName: 'node-1',
      terminationGracePeriodSeconds: 30,
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      tolerations: [
        { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
        { operator: 'Exists' },
      ],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] },
            ],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 10,
              preference: {
                matchExpressions: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
              },
            },
          ],
        },
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } },
          ],
        },
      },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
          minDomains: 3,
        },
      ],
      containers: [
        c(
          'web',
          { cpu: '1' },
          {
            ports: [
              { containerPort: 80, hostPort: 8080 },
              { containerPort: 443 },
              { containerPort: 53, hostPort: 53, protocol: 'UDP', hostIP: '10.0.0.1' },
            ],
          },
        ),
      ],
      initContainers: [c('init', {}, { ports: [{ containerPort: 9, hostPort: 9999 }] })],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: 'data-0' } },
        { name: 'scratch', ephemeral: { volumeClaimTemplate: {} } },
        { name: 'tmp', emptyDir: {} },
      ],
    },
    {
      metadata: {
        uid: 'u-1',
        labels: { app: 'web' },
        annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
        creationTimestamp: '2026-01-01T00:00:00Z',
        deletionTimestamp: '2026-01-01T01:00:00Z',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-1', controller: true },
        ],
      },
      status: {
        phase: 'Running',
        startTime: '2026-01-01T00:01:00Z',
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable' },
        ],
      },
    },
  );

  it('reads identity, scheduling constraints, ownership and status', () => {
    const r = parsePod(full);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const p = r.value;
    expect(p).toMatchObject({
      uid: 'u-1',
      namespace: 'ns',
      name: 'p',
      labels: { app: 'web' },
      priority: 1000,
      priorityClassName: 'high',
      nodeName: 'node-1',
      terminationGracePeriodSeconds: 30,
      phase: 'Running',
      ready: true,
      unschedulable: true,
      creationTimestamp: Date.parse('2026-01-01T00:00:00Z'),
      deletionTimestamp: Date.parse('2026-01-01T01:00:00Z'),
      startTime: Date.parse('2026-01-01T00:01:00Z'),
      owner: { kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-1', controller: true, apiVersion: 'apps/v1' },
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      pvcNames: ['data-0', 'p-scratch'],
    });
    expect(p.hostPorts).toEqual([
      { ip: '0.0.0.0', port: 8080, protocol: 'TCP' },
      { ip: '10.0.0.1', port: 53, protocol: 'UDP' },
    ]);
    expect(p.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
      { operator: 'Exists' },
    ]);
    expect(p.affinity?.nodeAffinity?.required?.[0]?.matchExpressions).toEqual([
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] },
    ]);
    expect(p.affinity?.nodeAffinity?.preferred?.[0]?.weight).toBe(10);
    expect(p.affinity?.podAntiAffinity?.required?.[0]).toEqual({
      topologyKey: 'kubernetes.io/hostname',
      labelSelector: { matchLabels: { app: 'web' } },
    });
    expect(p.topologySpreadConstraints[0]).toEqual({
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
      minDomains: 3,
      labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
    });
    expect(p.ignoredReason).toBeUndefined();
  });

  it('lists the fields the pod has, in the order it sets them, whatever pods were parsed before', () => {
    const base = ['uid', 'namespace', 'name', 'labels', 'annotations', 'requests', 'nodeSelector', 'tolerations'];
    const first = [...base, 'topologySpreadConstraints', 'hostPorts', 'creationTimestamp', 'phase'];
    const raw = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'raw' }, spec: { containers: [c('a')] } };
    const running = pod(
      { nodeName: 'n', containers: [c('a')] },
      {
        status: {
          phase: 'Running',
          startTime: '2026-01-01T00:01:00Z',
          conditions: [{ type: 'Ready', status: 'True' }],
        },
      },
    );
    const keys = (o: Obj) => {
      const r = parsePod(o);
      return r.ok ? Object.keys(r.value) : r.errors.map(formatFieldError);
    };
    for (let round = 0; round < 2; round++) {
      expect(keys(raw)).toEqual(first);
      expect(keys(running)).toEqual([...first, 'nodeName', 'startTime', 'ready']);
      expect(keys(full)).toEqual([
        ...first,
        'affinity',
        'priority',
        'priorityClassName',
        'owner',
        'nodeName',
        'deletionTimestamp',
        'startTime',
        'terminationGracePeriodSeconds',
        'ready',
        'unschedulable',
        'pvcNames',
      ]);
    }
  });

  it('holds every field inside the pod object, none in a property array beside it', () => {
    // In a process of its own, a heap snapshot: each pod's `properties` (V8's array of the fields that did not fit
    // in the object) is the shared empty array. Built field by field, a running pod's last three fields went there.
    const script = `
      const { getHeapSnapshot } = await import('node:v8');
      const { parsePod } = await import(${JSON.stringify(fileURLToPath(new URL('./pod.ts', import.meta.url)))});
      const meta = (i) => ({ name: 'compact-' + i, namespace: 'ns', uid: 'u-compact-' + i });
      const status = { phase: 'Running', startTime: '2026-01-01T00:01:00Z', conditions: [{ type: 'Ready', status: 'True' }] };
      globalThis.held = [0, 1, 2].map((i) => parsePod({ metadata: meta(i), spec: { nodeName: 'n', containers: [{ name: 'a' }] }, status }).value);
      let json = '';
      for await (const chunk of getHeapSnapshot()) json += chunk;
      const snap = JSON.parse(json);
      const [nf, ef] = [snap.snapshot.meta.node_fields, snap.snapshot.meta.edge_fields];
      const [ec, size, nname] = ['edge_count', 'self_size', 'name'].map((f) => nf.indexOf(f));
      const [etype, ename, eto] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
      const edgeTypes = snap.snapshot.meta.edge_types[0];
      const sizes = [];
      for (let n = 0, e = 0; n < snap.nodes.length; n += nf.length) {
        const edges = [];
        for (let k = 0; k < snap.nodes[n + ec]; k++, e += ef.length)
          edges.push([edgeTypes[snap.edges[e + etype]], snap.strings[snap.edges[e + ename]], snap.edges[e + eto]]);
        const uid = edges.find(([t, name]) => t === 'property' && name === 'uid');
        if (!uid || !snap.strings[snap.nodes[uid[2] + nname]].startsWith('u-compact-')) continue;
        const props = edges.find(([t, name]) => t === 'internal' && name === 'properties');
        sizes.push(props ? snap.nodes[props[2] + size] : 0);
      }
      process.stdout.write(JSON.stringify(sizes));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    const sizes = JSON.parse(out) as number[];
    expect(sizes).toHaveLength(3);
    // The empty array V8 shares is 16 bytes; one holding fields is larger.
    for (const bytes of sizes) expect(bytes).toBeLessThanOrEqual(16);
  });

  it('parses where code cannot be made from strings: the pod as it was built', () => {
    const script = `
      const { parsePod } = await import(${JSON.stringify(fileURLToPath(new URL('./pod.ts', import.meta.url)))});
      const r = parsePod({ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { nodeName: 'n', containers: [{ name: 'a' }] } });
      process.stdout.write(JSON.stringify(r.ok && [Object.keys(r.value), r.value.nodeName]));`;
    const flags = ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', script];
    const [keys, nodeName] = JSON.parse(execFileSync(process.execPath, flags, { encoding: 'utf8' })) as [
      string[],
      string,
    ];
    expect(keys).toHaveLength(13);
    expect(nodeName).toBe('n');
  });

  it('defaults namespace, uid, phase and creation time for raw manifests', () => {
    const r = parsePod(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'raw' }, spec: { containers: [c('a')] } },
      { now: 42 },
    );
    expect(r.ok && r.value).toMatchObject({
      namespace: 'default',
      uid: 'default/raw',
      phase: 'Pending',
      creationTimestamp: 42,
      tolerations: [],
      hostPorts: [],
    });
  });

  it('marks pods Karpenter would ignore, with the reason', () => {
    const withSelector = (nodeSelector: Obj) => parsePod(pod({ containers: [c('a')], nodeSelector }));
    const hostname = withSelector({ 'kubernetes.io/hostname': 'node-1' });
    expect(hostname.ok && hostname.value.ignoredReason).toMatch(
      /nodeSelector kubernetes.io\/hostname: label "kubernetes.io\/hostname" is restricted/,
    );
    const domain = withSelector({ 'karpenter.sh/custom': 'x' });
    expect(domain.ok && domain.value.ignoredReason).toMatch(/domain "karpenter.sh" is restricted/);
    const pool = withSelector({ 'karpenter.sh/nodepool': 'default', 'karpenter.k8s.aws/instance-family': 'm5' });
    expect(pool.ok && pool.value.ignoredReason).toBeUndefined();
    const fields = parsePod(
      pod({
        containers: [c('a')],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] }],
            },
          },
        },
      }),
    );
    expect(fields.ok && fields.value.ignoredReason).toMatch(/matchFields/);
    const emptyIn = parsePod(
      pod({
        containers: [c('a')],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: [] }] }],
            },
          },
        },
      }),
    );
    expect(emptyIn.ok && emptyIn.value.ignoredReason).toMatch(/In needs at least one value/);
  });

  it('reports bad fields with their paths instead of throwing', () => {
    const r = parsePod(
      pod({
        containers: [c('a', { cpu: 'lots', memory: true })],
        tolerations: [{ operator: 'Maybe' }],
        topologySpreadConstraints: [{ maxSkew: 0, topologyKey: 'zone' }],
        priority: '5',
      }),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map(formatFieldError)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^Pod\/ns\/p: spec\.containers\[0\]\.resources\.requests\[cpu\]: "lots" is not a valid quantity/,
        ),
        expect.stringMatching(/^Pod\/ns\/p: spec\.containers\[0\]\.resources\.requests\[memory\]: must be a quantity/),
        expect.stringMatching(/spec\.tolerations\[0\]\.operator: "Maybe" is not allowed/),
        expect.stringMatching(/spec\.topologySpreadConstraints\[0\]\.maxSkew: must be an integer of at least 1/),
        expect.stringMatching(/spec\.topologySpreadConstraints\[0\]\.whenUnsatisfiable: is required/),
        expect.stringMatching(/spec\.priority: must be an integer, not a string/),
      ]),
    );
  });

  it('rejects a pod without containers or spec, and non-objects', () => {
    const none = parsePod(pod({ containers: [] }));
    expect(!none.ok && none.errors.map((e) => e.path)).toEqual(['spec.containers']);
    const nospec = parsePod({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } });
    expect(!nospec.ok && nospec.errors.map((e) => e.path)).toContain('spec');
    expect(parsePod('nope').ok).toBe(false);
  });
});

describe('parsePod with a part memo', () => {
  // Parts as the controller's stripped pods share them: one object for all the pods of a workload.
  const parts = (): Obj => ({
    labels: { app: 'web' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
    containers: [
      c('app', { cpu: '250m', memory: '64Mi' }, { ports: [{ containerPort: 80, hostPort: 8080 }] }),
      { name: 'gpu', resources: { limits: { 'nvidia.com/gpu': '1' }, claims: [{ name: 'gpus' }] } },
    ],
    initContainers: [{ name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } }],
    nodeSelector: { 'kubernetes.io/arch': 'amd64' },
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
        },
      },
    },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: {} } },
    ],
  });
  const podOf = (name: string, p: Obj, extra: { nodeName?: string; phase?: string } = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: p['labels'] },
    spec: {
      containers: p['containers'],
      initContainers: p['initContainers'],
      tolerations: p['tolerations'],
      nodeSelector: p['nodeSelector'],
      affinity: p['affinity'],
      topologySpreadConstraints: p['topologySpreadConstraints'],
      resourceClaims: [{ name: 'gpus', resourceClaimTemplateName: 'gpu' }],
      ...(extra.nodeName ? { nodeName: extra.nodeName } : {}),
    },
    status: { phase: extra.phase ?? 'Pending' },
  });
  const parsed = (o: Obj, memo?: PartMemo) => {
    const r = parsePod(o, memo ? { memo } : {});
    if (!r.ok) throw new Error(r.errors.map(formatFieldError).join('\n'));
    return r.value;
  };

  it('gives what a parse without it gives, each shared part decoded once for all the pods that share it', () => {
    const memo = new PartMemo();
    const shared = parts();
    const pods = [podOf('a', shared), podOf('b', shared, { nodeName: 'n1', phase: 'Running' }), podOf('a', shared)];
    const withMemo = pods.map((o) => parsed(o, memo));
    pods.forEach((o, i) => expect(withMemo[i]).toEqual(parsed(o)));
    const [a, b] = withMemo as [Pod, Pod];
    for (const k of ['labels', 'tolerations', 'nodeSelector', 'affinity', 'topologySpreadConstraints', 'hostPorts'])
      expect(b[k as keyof Pod], k).toBe(a[k as keyof Pod]);
    expect(b.requests).toEqual({ cpu: 350, memory: 64 * MI, 'nvidia.com/gpu': 1, pods: 1 });
    expect(b.containerClaims).toEqual(['gpus']);
    expect([b.nodeName, b.phase]).toEqual(['n1', 'Running']);
    // Without a memo, every parse decodes its own.
    expect(parsed(pods[1]!).tolerations).not.toBe(parsed(pods[1]!).tolerations);
  });

  it('decodes a part that is another object again, even when its content is equal', () => {
    const memo = new PartMemo();
    const first = parts();
    const a = parsed(podOf('a', first), memo);
    const changed = { ...first, tolerations: [...first['tolerations'], { operator: 'Exists' }] };
    const b = parsed(podOf('a', changed), memo);
    expect(b.tolerations).toEqual([...a.tolerations, { operator: 'Exists' }]);
    expect(b.labels).toBe(a.labels);
    expect(parsed(podOf('a', parts()), memo).tolerations).not.toBe(a.tolerations);
  });

  it('keeps no part that has an error: every pod with it is told, at its own path', () => {
    const memo = new PartMemo();
    const bad = { ...parts(), tolerations: [{ key: 'k', operator: 'Sometimes' }] };
    for (const name of ['a', 'b']) {
      const r = parsePod(podOf(name, bad), { memo });
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect(r.errors.map(formatFieldError)).toEqual([
          expect.stringMatching(`^Pod/ns/${name}: spec.tolerations\\[0\\].operator: `),
        ]);
    }
  });
});
