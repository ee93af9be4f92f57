// `karpenter-ts controller` through its composition root, against the simulated cluster and cloud: the
// options, the kubeconfig, the metrics and health endpoints, a clean stop.
import { createServer } from 'node:net';
import { DescribeInstanceTypeOfferingsCommand, DescribeInstanceTypesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { toNodeClass } from '../../engine/index.ts';
import { SimCloudProvider } from '../../sim/cloud/provider.ts';
import { startSimCluster } from '../../sim/cluster/cluster.ts';
import { scaledClock } from '../../sim/clock.ts';
import { installAdmission } from '../../sim/admission.ts';
import { memoryIo } from '../io.ts';
import { run } from './controller.ts';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'; // the image runs Node 22; tests may run on 20

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe('karpenter-ts controller', () => {
  it('loads the AWS provider by default; without CLUSTER_ENDPOINT it asks eks:DescribeCluster, and says what to set when that fails', async () => {
    const io = memoryIo({ env: { CLUSTER_NAME: 'my-cluster', LEADER_ELECTION_NAMESPACE: 'kube-system' } });
    const cluster = await startSimCluster({ clock: scaledClock(1) });
    const eks = mockClient(EKSClient);
    eks.on(DescribeClusterCommand).rejects(new Error('User is not authorized to perform: eks:DescribeCluster'));
    const region = process.env['AWS_REGION'];
    process.env['AWS_REGION'] = 'ap-northeast-2';
    try {
      expect(await run([], io, { kubeConfig: cluster.kubeConfig() })).toBe(2);
      expect(io.stderr).toContain(
        'eks:DescribeCluster for cluster my-cluster failed (set --cluster-endpoint / CLUSTER_ENDPOINT, or allow eks:DescribeCluster)',
      );
      expect(eks.commandCalls(DescribeClusterCommand)[0]?.args[0].input).toEqual({ name: 'my-cluster' });
    } finally {
      eks.restore();
      if (region === undefined) delete process.env['AWS_REGION'];
      else process.env['AWS_REGION'] = region;
      await cluster.close();
    }
  });

  it('runs with the AWS provider: its metrics on /metrics, stopped cleanly', async () => {
    // Every SDK client of these classes is answered in process: nothing leaves the machine.
    const ec2 = mockClient(EC2Client);
    const pricing = mockClient(PricingClient);
    const mocks = [ec2, pricing, mockClient(SSMClient), mockClient(IAMClient), mockClient(SQSClient)];
    ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: [] });
    ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({ InstanceTypeOfferings: [] });
    pricing.on(GetProductsCommand).resolves({ PriceList: [] });
    const region = process.env['AWS_REGION'];
    process.env['AWS_REGION'] = 'ap-northeast-2';
    const cluster = await startSimCluster({ clock: scaledClock(1) });
    installAdmission(cluster.server);
    try {
      const metricsPort = await freePort();
      const io = memoryIo({
        env: {
          CLUSTER_NAME: 'my-cluster',
          CLUSTER_ENDPOINT: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
          LOG_LEVEL: 'info',
          LEADER_ELECTION_NAMESPACE: 'kube-system',
        },
      });
      const stop = new AbortController();
      let ready: () => void = () => {};
      const started = new Promise<void>((r) => (ready = r));
      const done = run([`--metrics-port=${metricsPort}`, '--health-probe-port=0'], io, {
        kubeConfig: cluster.kubeConfig(),
        signal: stop.signal,
        onStarted: () => ready(),
      });
      await started;
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain('# TYPE karpenter_cloudprovider_batcher_batch_size histogram');
      expect(io.stdout).toMatch(/"region":"ap-northeast-2".*"message":"AWS cloud provider ready"/);
      expect(io.stdout).toMatch(/"provider":"aws".*"message":"controller started"/);
      stop.abort();
      expect(await done).toBe(0);
    } finally {
      if (region === undefined) delete process.env['AWS_REGION'];
      else process.env['AWS_REGION'] = region;
      for (const m of mocks) m.restore();
      await cluster.close();
    }
  });

  it('needs a cluster name and valid options', async () => {
    const io = memoryIo();
    expect(await run([], io)).toBe(2);
    expect(io.stderr).toContain('--cluster-name (CLUSTER_NAME) is required');
    const bad = memoryIo({ env: { BATCH_MAX_DURATION: '1ms' } });
    expect(await run(['--cluster-name=x'], bad)).toBe(2);
    expect(bad.stderr).toContain('--batch-max-duration (1ms) must be >= --batch-idle-duration (1s)');
  });

  it('runs against a cluster, serves /metrics, /healthz and /readyz, and stops on request', async () => {
    const cluster = await startSimCluster({ clock: scaledClock(1) });
    installAdmission(cluster.server);
    const [metricsPort, healthPort] = [await freePort(), await freePort()];
    const io = memoryIo({
      env: { CLUSTER_NAME: 'my-cluster', LOG_LEVEL: 'warn', LEADER_ELECTION_NAMESPACE: 'kube-system' },
    });
    const stop = new AbortController();
    let ready: () => void = () => {};
    const started = new Promise<void>((r) => (ready = r));
    const done = run([`--metrics-port=${metricsPort}`, `--health-probe-port=${healthPort}`], io, {
      kubeConfig: cluster.kubeConfig(),
      cloudProvider: ({ clock, nodeClass }) =>
        new SimCloudProvider({ clock, kubelet: cluster.kubelet, nodeClass, zonesOf: (nc) => toNodeClass(nc).zones }),
      signal: stop.signal,
      onStarted: () => ready(),
    });
    await started;
    const get = async (port: number, path: string) => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: r.status, text: await r.text() };
    };
    expect(await get(healthPort, '/healthz')).toEqual({ status: 200, text: 'ok' });
    expect((await get(healthPort, '/readyz')).status).toBe(200);
    const metrics = await get(metricsPort, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('karpenter_build_info{version="0.1.0"');
    expect(metrics.text).toContain('# TYPE karpenter_nodeclaims_created_total counter');
    expect(metrics.text).toContain('process_cpu_seconds_total');
    // It took the leader Lease (a single replica acquires it at once) and says so.
    await expect
      .poll(() => cluster.store.get('leases.coordination.k8s.io', 'kube-system', 'karpenter-leader-election'))
      .toBeDefined();
    const lease = cluster.store.get('leases.coordination.k8s.io', 'kube-system', 'karpenter-leader-election')!;
    expect(lease.spec as { holderIdentity: string; leaseDurationSeconds: number }).toMatchObject({
      holderIdentity: expect.stringMatching(/_/),
      leaseDurationSeconds: 15,
    });
    expect((await get(metricsPort, '/metrics')).text).toContain(
      'leader_election_master_status{name="karpenter-leader-election"} 1',
    );
    stop.abort();
    expect(await done).toBe(0);
    // A clean stop hands the lease back.
    expect(
      (
        cluster.store.get('leases.coordination.k8s.io', 'kube-system', 'karpenter-leader-election')!.spec as {
          holderIdentity: string;
        }
      ).holderIdentity,
    ).toBe('');
    await cluster.close();
  });

  it('needs a namespace for the leader Lease outside a cluster, unless leader election is off', async () => {
    const cluster = await startSimCluster({ clock: scaledClock(1) });
    const io = memoryIo({ env: { CLUSTER_NAME: 'my-cluster', LOG_LEVEL: 'warn' } });
    const cloudProvider = ({
      clock,
      nodeClass,
    }: Parameters<NonNullable<Parameters<typeof run>[2]>['cloudProvider'] & {}>[0]) =>
      new SimCloudProvider({ clock, kubelet: cluster.kubelet, nodeClass });
    expect(
      await run(['--metrics-port=0', '--health-probe-port=0'], io, { kubeConfig: cluster.kubeConfig(), cloudProvider }),
    ).toBe(2);
    expect(io.stderr).toContain('set --leader-election-namespace (LEADER_ELECTION_NAMESPACE)');
    const stop = new AbortController();
    const off = memoryIo({ env: { CLUSTER_NAME: 'my-cluster', LOG_LEVEL: 'warn' } });
    const done = run(['--metrics-port=0', '--health-probe-port=0', '--disable-leader-election'], off, {
      kubeConfig: cluster.kubeConfig(),
      cloudProvider,
      signal: stop.signal,
      onStarted: () => stop.abort(),
    });
    expect(await done).toBe(0);
    expect(cluster.store.list('leases.coordination.k8s.io')).toEqual([]);
    await cluster.close();
  });

  it('exits 1 when it cannot renew its leader lease, as controller-runtime does', async () => {
    const cluster = await startSimCluster({ clock: scaledClock(1) });
    const io = memoryIo({
      env: { CLUSTER_NAME: 'my-cluster', LOG_LEVEL: 'error', LEADER_ELECTION_NAMESPACE: 'kube-system' },
    });
    let leading: () => void = () => {};
    const started = new Promise<void>((r) => (leading = r));
    // The operator's clock runs 50x, so the 10 s renew deadline passes in a fifth of a second.
    const done = run(['--metrics-port=0', '--health-probe-port=0'], io, {
      kubeConfig: cluster.kubeConfig(),
      clock: scaledClock(50),
      cloudProvider: ({ clock, nodeClass }) => new SimCloudProvider({ clock, kubelet: cluster.kubelet, nodeClass }),
      onStarted: (op) =>
        void (async () => {
          while (!op.leading()) await new Promise((r) => setTimeout(r, 5));
          leading();
        })(),
    });
    await started;
    cluster.server.faults.failNext({ resource: 'leases', verbs: ['update'], code: 500, count: 1_000 });
    expect(await done).toBe(1);
    expect(io.stdout).toContain('leader election lost; exiting');
    cluster.server.faults.reset();
    await cluster.close();
  });
});
