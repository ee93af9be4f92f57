import { describe, expect, it } from 'vitest';
import { createApi, type KObject } from '../apiserver/index.ts';
import { manualClock } from '../clock.ts';
import { settleReactors } from './reactor.ts';
import { schedule, Scheduler } from './scheduler.ts';
import { NodeInfo, podRequests } from './scheduling/nodes.ts';

interface NodeOpts {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: Array<{ key: string; value?: string; effect: string }>;
  ready?: 'True' | 'False' | 'Unknown';
  unschedulable?: boolean;
}

function node(name: string, o: NodeOpts = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: { taints: o.taints ?? [], ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: {
      allocatable: { cpu: o.cpu ?? '4', memory: o.memory ?? '16Gi', pods: o.pods ?? '110' },
      conditions: [{ type: 'Ready', status: o.ready ?? 'True' }],
    },
  };
}

function pod(
  name: string,
  spec: Record<string, unknown> = {},
  labels: Record<string, string> = {},
  status: Record<string, unknown> = {},
): KObject {
  const { cpu, ...rest } = spec as { cpu?: string };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: cpu ?? '100m', memory: '128Mi' } } }], ...rest },
    status: { phase: 'Pending', ...status },
  };
}

/** NodeInfos with the given pods already placed (pod name -> node name). */
function cluster(nodes: KObject[], placed: Array<[KObject, string]> = []): NodeInfo[] {
  const infos = nodes.map((n) => new NodeInfo(n));
  for (const [p, n] of placed)
    infos.find((i) => i.name === n)!.use({ ...p, spec: { ...(p.spec as object), nodeName: n } });
  return infos;
}

const bound = (r: ReturnType<typeof schedule>): string => ('node' in r ? r.node : `none: ${r.message}`);

describe('pod requests', () => {
  it('take the larger of containers (plus sidecars) and each init step, plus overhead', () => {
    const p = pod('p', {
      containers: [
        { name: 'a', resources: { requests: { cpu: '500m' } } },
        { name: 'b', resources: { limits: { cpu: '500m', memory: '1Gi' } } },
      ],
      initContainers: [
        { name: 'sidecar', restartPolicy: 'Always', resources: { requests: { cpu: '250m' } } },
        { name: 'migrate', resources: { requests: { cpu: '2' } } },
      ],
      overhead: { cpu: '50m' },
    });
    // containers 1000m + sidecar 250m = 1250m; the init step is 2000m + 250m sidecar = 2250m; + 50m overhead.
    expect(podRequests(p)).toMatchObject({ cpu: 2300, memory: 1024 ** 3 });
  });
});

describe('schedule', () => {
  it("fits resources including the pod count, with kube-scheduler's message when nothing fits", () => {
    expect(
      bound(schedule(pod('p', { cpu: '2' }), cluster([node('small', { cpu: '1' }), node('big', { cpu: '4' })]))),
    ).toBe('big');
    expect(bound(schedule(pod('p', { cpu: '8' }), cluster([node('a'), node('b', { cpu: '1', pods: '0' })])))).toBe(
      'none: 0/2 nodes are available: 2 Insufficient cpu, 1 Too many pods.',
    );
    const full = cluster([node('one', { pods: '1' })], [[pod('x'), 'one']]);
    expect(bound(schedule(pod('p'), full))).toBe('none: 0/1 nodes are available: 1 Too many pods.');
    expect(bound(schedule(pod('p'), []))).toBe('none: no nodes available to schedule pods');
  });

  it('honours nodeSelector and required node affinity with every operator and matchFields', () => {
    const nodes = cluster([
      node('a', { labels: { zone: 'a', gen: '5', gpu: 'yes' } }),
      node('b', { labels: { zone: 'b', gen: '7' } }),
    ]);
    const affinity = (exprs: unknown[], fields: unknown[] = []) => ({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: exprs, ...(fields.length ? { matchFields: fields } : {}) }],
          },
        },
      },
    });
    expect(bound(schedule(pod('p', { nodeSelector: { zone: 'b' } }), nodes))).toBe('b');
    expect(bound(schedule(pod('p', affinity([{ key: 'gen', operator: 'Gt', values: ['6'] }])), nodes))).toBe('b');
    expect(bound(schedule(pod('p', affinity([{ key: 'gen', operator: 'Lt', values: ['6'] }])), nodes))).toBe('a');
    expect(bound(schedule(pod('p', affinity([{ key: 'gpu', operator: 'DoesNotExist' }])), nodes))).toBe('b');
    expect(
      bound(
        schedule(
          pod(
            'p',
            affinity([
              { key: 'zone', operator: 'NotIn', values: ['b'] },
              { key: 'gpu', operator: 'Exists' },
            ]),
          ),
          nodes,
        ),
      ),
    ).toBe('a');
    expect(
      bound(schedule(pod('p', affinity([], [{ key: 'metadata.name', operator: 'In', values: ['b'] }])), nodes)),
    ).toBe('b');
    expect(bound(schedule(pod('p', affinity([{ key: 'zone', operator: 'In', values: ['c'] }])), nodes))).toBe(
      "none: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
    );
  });

  it('needs NoSchedule and NoExecute taints tolerated, including not-ready and cordon, and ignores PreferNoSchedule', () => {
    const nodes = cluster([
      node('tainted', {
        taints: [
          { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
          { key: 'soft', effect: 'PreferNoSchedule' },
        ],
      }),
      node('booting', { ready: 'False' }),
      node('cordoned', { unschedulable: true }),
    ]);
    expect(bound(schedule(pod('p'), nodes))).toBe(
      'none: 0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) had untolerated taint {node.kubernetes.io/unschedulable: }.',
    );
    expect(
      bound(
        schedule(
          pod('p', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }),
          nodes,
        ),
      ),
    ).toBe('tainted');
    expect(
      bound(
        schedule(pod('p', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }] }), nodes),
      ),
    ).toBe('cordoned');
    expect(
      bound(
        schedule(
          pod('p', { tolerations: [{ operator: 'Exists' }] }),
          cluster([node('x', { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] })]),
        ),
      ),
    ).toBe('x');
  });

  it('refuses a host port already taken on the node', () => {
    const withPort = (name: string) =>
      pod(name, { containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080 }] }] });
    const nodes = cluster([node('a'), node('b')], [[withPort('first'), 'a']]);
    expect(bound(schedule(withPort('second'), nodes))).toBe('b');
    expect(bound(schedule(withPort('second'), cluster([node('a')], [[withPort('first'), 'a']])))).toBe(
      "none: 0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.",
    );
  });

  it('keeps required anti-affinity on hostname, in both directions', () => {
    const anti = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'db' } } },
          ],
        },
      },
    };
    const existing = pod('db-0', anti, { app: 'db' });
    expect(bound(schedule(pod('db-1', anti, { app: 'db' }), cluster([node('a'), node('b')], [[existing, 'a']])))).toBe(
      'b',
    );
    expect(bound(schedule(pod('db-1', anti, { app: 'db' }), cluster([node('a')], [[existing, 'a']])))).toBe(
      "none: 0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.",
    );
    // A plain pod the existing one's anti-affinity selects cannot join it either.
    expect(bound(schedule(pod('intruder', {}, { app: 'db' }), cluster([node('a')], [[existing, 'a']])))).toBe(
      "none: 0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.",
    );
  });

  it('keeps required pod affinity, letting the first pod of a self-affine group start anywhere', () => {
    const aff = {
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'zone', labelSelector: { matchLabels: { app: 'web' } } },
          ],
        },
      },
    };
    const nodes = [
      node('a', { labels: { zone: 'z1' } }),
      node('b', { labels: { zone: 'z2' } }),
      node('c', { labels: { zone: 'z2' }, cpu: '8' }),
    ];
    expect(bound(schedule(pod('web-0', aff, { app: 'web' }), cluster(nodes)))).toBe('c');
    expect(
      bound(schedule(pod('web-1', aff, { app: 'web' }), cluster(nodes, [[pod('web-0', {}, { app: 'web' }), 'a']]))),
    ).toBe('a');
    expect(bound(schedule(pod('cache', aff, { app: 'cache' }), cluster(nodes)))).toMatch(
      /didn't match pod affinity rules/,
    );
  });

  it('spreads over zones with DoNotSchedule topology spread', () => {
    const spread = {
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { app: 'web' } },
        },
      ],
    };
    const nodes = [
      node('a1', { labels: { zone: 'a' }, cpu: '16' }),
      node('b1', { labels: { zone: 'b' } }),
      node('nozone'),
    ];
    const placed: Array<[KObject, string]> = [[pod('w0', {}, { app: 'web' }), 'a1']];
    expect(bound(schedule(pod('w1', spread, { app: 'web' }), cluster(nodes, placed)))).toBe('b1');
    placed.push([pod('w1', {}, { app: 'web' }), 'b1']);
    expect(bound(schedule(pod('w2', spread, { app: 'web' }), cluster(nodes, placed)))).toBe('a1');
    expect(bound(schedule(pod('w1', spread, { app: 'web' }), cluster([node('nozone')])))).toBe(
      "none: 0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label).",
    );
    // Two in zone a, none in zone b (full): a third in zone a would make the skew 3 - 0 > 1.
    const skewed = cluster(
      [node('a1', { labels: { zone: 'a' } }), node('b1', { labels: { zone: 'b' }, cpu: '0' })],
      [
        [pod('w0', {}, { app: 'web' }), 'a1'],
        [pod('w1', {}, { app: 'web' }), 'a1'],
      ],
    );
    expect(bound(schedule(pod('w2', spread, { app: 'web' }), skewed))).toBe(
      "none: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints.",
    );
  });

  it('prefers the nominated node, otherwise the least allocated one', () => {
    const nodes = cluster([node('busy'), node('idle')], [[pod('x', { cpu: '3' }), 'busy']]);
    expect(bound(schedule(pod('p'), nodes))).toBe('idle');
    expect(bound(schedule(pod('p', {}, {}, { nominatedNodeName: 'busy' }), nodes))).toBe('busy');
  });
});

describe('Scheduler (reactor)', () => {
  it('marks pods Unschedulable until a node fits, then binds them in priority order', async () => {
    const clock = manualClock();
    const errors: unknown[] = [];
    const api = createApi({ clock, onError: (e) => errors.push(e) });
    const scheduler = new Scheduler({ api, clock, onError: (e) => errors.push(e) });
    const settle = () => settleReactors([scheduler.reactor]);
    const body = (name: string, priority: number) => ({
      metadata: { name },
      spec: { priority, containers: [{ name: 'c', resources: { requests: { cpu: '3' } } }] },
    });
    api.create('pods', 'default', body('low', 0));
    await clock.advance(1000);
    api.create('pods', 'default', body('high', 100));
    await settle();
    const cond = (name: string) =>
      (
        (api.get('pods', 'default', name).status as { conditions?: Array<Record<string, unknown>> }).conditions ?? []
      ).find((c) => c.type === 'PodScheduled');
    expect(cond('low')).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message: 'no nodes available to schedule pods',
    });
    api.create('nodes', undefined, node('n1'));
    await settle();
    expect((api.get('pods', 'default', 'high').spec as { nodeName?: string }).nodeName).toBe('n1');
    expect(cond('high')).toMatchObject({ status: 'True' });
    expect((api.get('pods', 'default', 'low').spec as { nodeName?: string }).nodeName).toBeUndefined();
    expect(cond('low')).toMatchObject({ status: 'False', message: '0/1 nodes are available: 1 Insufficient cpu.' });
    scheduler.close();
    expect(errors).toEqual([]);
  });
});
