// kubectl habits against the simulator with the controller running, as `karpenter-ts sim --serve` leaves it:
// create (namespace and deployment, sent as protobuf, and from files), apply, scale, rollout, cordon, drain,
// delete, get -o wide/yaml for every kind, describe, events with real
// ages, explain from the served OpenAPI, and the controller's metrics through `kubectl get --raw /metrics`.
// Runs the real kubectl when the machine has it (skipped otherwise), with the kubeconfig and token
// `sim --serve` writes.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUIDE_EXAMPLES_DIR } from '../test/fixtures/guide.ts';
import { manualClock } from './clock.ts';
import { startSimulation, type Simulation } from './environment.ts';
import { kubeConfigText } from './kubeconfig.ts';

const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
const run = promisify(execFile);
const guide = (f: string): string => join(GUIDE_EXAMPLES_DIR, f);
const running = (sim: Simulation, app: string): number =>
  sim.cluster.store
    .list('pods', { namespace: 'default' })
    .filter((p) => p.metadata.labels?.['app'] === app && (p.status as { phase?: string }).phase === 'Running').length;

describe.skipIf(!KUBECTL)('kubectl against the simulator with the controller running', () => {
  let sim: Simulation;
  let dir: string;

  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(
      KUBECTL!,
      [`--kubeconfig=${join(dir, 'kubeconfig')}`, `--cache-dir=${join(dir, 'cache')}`, ...args],
      {
        env: { ...process.env, KUBECONFIG: '', HOME: dir },
        timeout: 60_000,
      },
    );
    return stdout;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubectl-parity-'));
    // As `sim` runs it: the clock starts now, so ages are real.
    sim = await startSimulation({
      clock: manualClock(Date.now()),
      tls: true,
      options: { 'batch-idle-duration': '1s' },
    });
    writeFileSync(join(dir, 'kubeconfig'), kubeConfigText(sim.cluster.server), { mode: 0o600 });
  }, 60_000);

  afterAll(async () => {
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates a namespace, a deployment and objects from files', async () => {
    // `kubectl create namespace|deployment` send protobuf bodies; the server decodes them into what
    // `--dry-run=client -o json` prints for the same command.
    expect(await kubectl('create', 'namespace', 'team-a')).toContain('namespace/team-a created');
    expect(
      await kubectl('create', 'deployment', 'web', '--image=nginx', '--replicas=2', '--port=80', '-n', 'team-a'),
    ).toContain('deployment.apps/web created');
    const expected = JSON.parse(
      await kubectl(
        'create',
        'deployment',
        'web',
        '--image=nginx',
        '--replicas=2',
        '--port=80',
        '-n',
        'team-a',
        '--dry-run=client',
        '-o',
        'json',
      ),
    ) as {
      metadata: { labels: unknown };
      spec: {
        replicas: number;
        selector: unknown;
        template: {
          metadata: { labels: unknown };
          spec: { containers: Array<{ name: string; image: string; ports: object[] }> };
        };
      };
    };
    const web = sim.cluster.store.get('deployments.apps', 'team-a', 'web')!;
    expect(web.metadata.labels).toEqual(expected.metadata.labels);
    const e = expected.spec;
    expect(web.spec).toMatchObject({
      replicas: 2,
      selector: e.selector,
      template: {
        metadata: { labels: e.template.metadata.labels },
        spec: { containers: e.template.spec.containers.map((c) => ({ name: c.name, image: c.image, ports: c.ports })) },
      },
    });
    expect(JSON.parse(await kubectl('get', 'namespace', 'team-a', '-o', 'json')).status.phase).toBe('Active');
    expect(await kubectl('create', '-f', guide('guide-03.yaml'))).toContain(
      'ec2nodeclass.karpenter.k8s.aws/default created',
    );
    expect(await kubectl('apply', '-f', guide('guide-07.yaml'))).toMatch(/nodepool\.karpenter\.sh\/\S+ created/);
    expect(await kubectl('apply', '-f', guide('guide-08.yaml'))).toContain('deployment.apps/inflate created');
  });

  it('scales, and the controller provisions a node the rollout waits for', async () => {
    expect(await kubectl('scale', 'deployment', 'inflate', '--replicas=3')).toContain('deployment.apps/inflate scaled');
    await sim.clock.advanceUntil(() => running(sim, 'inflate') === 3, 180_000, 'inflate running');
    expect(await kubectl('rollout', 'status', 'deployment/inflate', '--timeout=20s')).toContain(
      'successfully rolled out',
    );
  }, 60_000);

  for (const kind of [
    'nodepools',
    'nodeclaims',
    'ec2nodeclasses',
    'nodes',
    'pods',
    'deployments',
    'replicasets',
    'namespaces',
    'events',
    'leases',
    'poddisruptionbudgets',
    'daemonsets',
  ]) {
    it(`gets ${kind} -o wide and -o yaml`, async () => {
      const wide = await kubectl('get', kind, '-A', '-o', 'wide');
      // An empty list prints nothing on stdout ("No resources found" goes to stderr).
      if (wide) expect(wide.split('\n')[0]).toMatch(/^(NAMESPACE\s+)?(NAME|LAST SEEN)\s/);
      expect(await kubectl('get', kind, '-A', '-o', 'yaml')).toMatch(/^apiVersion: v1\nitems:/);
    });
  }

  it('shows events with their columns and real ages', async () => {
    const out = await kubectl('get', 'events', '-A');
    expect(out.split('\n')[0]).toMatch(/^NAMESPACE\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(out).toMatch(/Nominated\s+pod\/inflate-\S+\s+Pod should schedule on: nodeclaim\//);
    const ages = [...out.matchAll(/^\S+\s+(\S+)\s+(Normal|Warning)/gm)].map((m) => m[1]!);
    expect(ages.length).toBeGreaterThan(0);
    for (const age of ages) expect(age).toMatch(/^(\d+s|\d+m\d*s?)$/);
  });

  it('describes a NodeClaim and a pod, with their events', async () => {
    const claim = sim.cluster.store.list('nodeclaims.karpenter.sh')[0]!.metadata.name!;
    const d = await kubectl('describe', 'nodeclaim', claim);
    expect(d).toMatch(/^Name:\s+/m);
    expect(d).toContain('Events:');
    const pod = sim.cluster.store
      .list('pods', { namespace: 'default' })
      .find((p) => p.metadata.labels?.['app'] === 'inflate')!.metadata.name!;
    expect(await kubectl('describe', 'pod', pod)).toMatch(/Nominated\s+\S+\s+karpenter\s+Pod should schedule on/);
  });

  it('explains Karpenter kinds and built-in kinds from the served OpenAPI (v3 and v2)', async () => {
    const np = await kubectl('explain', 'nodepool.spec.disruption');
    expect(np).toContain('consolidationPolicy');
    expect(np).toMatch(/GROUP:\s+karpenter\.sh/);
    expect(await kubectl('explain', 'pods.spec')).toContain('containers');
    // kubectl reads /openapi/v2 only as protobuf, which this server does not speak; the JSON document is there.
    const v2 = JSON.parse(await kubectl('get', '--raw', '/openapi/v2')) as {
      definitions: Record<string, { 'x-kubernetes-group-version-kind'?: Array<{ kind: string }> }>;
    };
    expect(
      Object.values(v2.definitions).some((d) => d['x-kubernetes-group-version-kind']?.[0]?.kind === 'EC2NodeClass'),
    ).toBe(true);
  });

  it("shows the controller's metrics through get --raw /metrics", async () => {
    await sim.clock.advance(10_000);
    const text = await kubectl('get', '--raw', '/metrics');
    expect(text).toMatch(/^karpenter_nodes_allocatable\{.*resource_type="cpu".*\} \d/m);
    expect(text).toMatch(/^controller_runtime_reconcile_total\{controller="provisioner",result="success"\} [1-9]/m);
  });

  it('cordons and uncordons a node', async () => {
    const node = sim.cluster.store.list('nodes')[0]!.metadata.name!;
    expect(await kubectl('cordon', node)).toContain(`node/${node} cordoned`);
    expect((sim.cluster.store.get('nodes', '', node)!.spec as { unschedulable?: boolean }).unschedulable).toBe(true);
    expect(await kubectl('uncordon', node)).toContain(`node/${node} uncordoned`);
  });

  it('drains a node: cordoned, its pods evicted through the Eviction API and placed again', async () => {
    const pods = () =>
      sim.cluster.store
        .list('pods', { namespace: 'default' })
        .filter((p) => p.metadata.labels?.['app'] === 'inflate' && !p.metadata.deletionTimestamp);
    const node = (pods()[0]!.spec as { nodeName: string }).nodeName;
    let done = false;
    const drain = kubectl('drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=90s').finally(
      () => {
        done = true;
      },
    );
    // kubectl waits in real time for the evicted pods to go; the simulated kubelets need simulated time.
    while (!done) {
      await sim.clock.advance(1_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    const out = await drain;
    expect(out).toMatch(/evicting pod default\/inflate-/);
    expect(out).toContain(`node/${node} drained`);
    expect((sim.cluster.store.get('nodes', '', node)!.spec as { unschedulable?: boolean }).unschedulable).toBe(true);
    expect(pods().every((p) => (p.spec as { nodeName?: string }).nodeName !== node)).toBe(true);
    await sim.clock.advanceUntil(() => running(sim, 'inflate') === 3, 180_000, 'inflate running again');
  }, 120_000);

  it('deletes what it created', async () => {
    expect(await kubectl('delete', '-f', guide('guide-08.yaml'), '--wait=false')).toContain(
      'deployment.apps "inflate" deleted',
    );
    expect(await kubectl('delete', 'namespace', 'team-a', '--wait=false')).toContain('namespace "team-a" deleted');
  });
});
