// kubectl against the simulated cluster, when this machine has kubectl (skipped otherwise).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from './clock.ts';
import { startSimCluster, type SimCluster } from './cluster/cluster.ts';
import { kubeConfigText } from './kubeconfig.ts';
import { GUIDE_EXAMPLES_DIR } from '../test/fixtures/guide.ts';

const KUBECTL = '/usr/bin/kubectl';
const GUIDE_08 = join(GUIDE_EXAMPLES_DIR, 'guide-08.yaml');
const run = promisify(execFile);

describe.skipIf(!existsSync(KUBECTL))('kubectl', () => {
  let cluster: SimCluster;
  let cacheDir: string;

  const kubectl = async (...args: string[]): Promise<string> => {
    // The kubeconfig `sim --serve` prints: https with the server's own CA, and its bearer token.
    const { stdout } = await run(
      KUBECTL,
      [`--kubeconfig=${join(cacheDir, 'kubeconfig')}`, `--cache-dir=${cacheDir}`, ...args],
      {
        env: { ...process.env, KUBECONFIG: '', HOME: cacheDir },
        timeout: 30_000,
      },
    );
    return stdout;
  };

  beforeAll(async () => {
    cacheDir = mkdtempSync(join(tmpdir(), 'kubectl-cache-'));
    const clock = manualClock();
    cluster = await startSimCluster({ clock, apiServer: { tls: true } });
    writeFileSync(join(cacheDir, 'kubeconfig'), kubeConfigText(cluster), { mode: 0o600 });
    cluster.kubelet.registerInstance({
      providerID: 'aws:///us-east-1a/i-0abc',
      nodeName: 'ip-10-0-1-7.ec2.internal',
      capacity: { cpu: '2', memory: '8Gi', pods: '29' },
      allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' },
    });
    await clock.advance(60_000);
    cluster.api.create('nodeclaims', undefined, {
      metadata: {
        name: 'default-x7k2p',
        labels: {
          'node.kubernetes.io/instance-type': 't3.large',
          'karpenter.sh/capacity-type': 'spot',
          'topology.kubernetes.io/zone': 'us-east-1a',
        },
      },
      spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
    });
  });

  afterAll(async () => {
    await cluster?.close();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('gets nodes', async () => {
    const out = await kubectl('get', 'nodes');
    expect(out).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION/);
    expect(out).toMatch(/ip-10-0-1-7\.ec2\.internal\s+Ready\s+<none>\s+30s\s+v1\.32\.0/);
  });

  it("applies the guide's Deployment with default (strict server-side) validation, idempotently", async () => {
    expect(await kubectl('apply', '-f', GUIDE_08)).toContain('deployment.apps/inflate created');
    const d = cluster.api.get('deployments.apps', 'default', 'inflate');
    expect((d.spec as { replicas: number }).replicas).toBe(0);
    expect(await kubectl('apply', '-f', GUIDE_08)).toContain('deployment.apps/inflate unchanged');
    expect(cluster.requests.find({ verb: 'create', resource: 'deployments.apps' })[0]?.query).toContain(
      'fieldValidation=Strict',
    );
  });

  it('scales the Deployment and the simulated controllers create its pods', async () => {
    expect(await kubectl('scale', 'deployment', 'inflate', '--replicas=2')).toContain('scaled');
    await cluster.settle();
    expect(cluster.api.list('pods', 'default', { labelSelector: 'app=inflate' }).items).toHaveLength(2);
  });

  it("gets nodeclaims with Karpenter's printer columns", async () => {
    const out = await kubectl('get', 'nodeclaims');
    expect(out).toMatch(/^NAME\s+TYPE\s+CAPACITY\s+ZONE\s+NODE\s+READY\s+AGE/);
    expect(out).toMatch(/default-x7k2p\s+t3\.large\s+spot\s+us-east-1a/);
  });

  it('deletes what it applied, and the pods go with the Deployment', async () => {
    expect(await kubectl('delete', '-f', GUIDE_08)).toContain('deployment.apps "inflate" deleted');
    expect(cluster.api.find('deployments.apps', 'default', 'inflate')).toBeUndefined();
    expect(cluster.api.list('pods', 'default').items).toEqual([]);
  });
});
