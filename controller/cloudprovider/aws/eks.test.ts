// CLUSTER_ENDPOINT is optional, as in Karpenter: the AWS provider asks eks:DescribeCluster for the endpoint
// (and the service CIDR), here answered on the wire by a loopback server speaking EKS's REST-JSON protocol.
import { EKSClient } from '@aws-sdk/client-eks';
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockedAws } from '../../../test/fakes/aws.ts';
import type { CloudProviderContext } from '../../main.ts';
import { realClock } from '../../operator/clock.ts';
import { KubeClient } from '../../operator/kube.ts';
import { newLogger } from '../../operator/logger.ts';
import { Metrics } from '../../operator/metrics.ts';
import { resolveOptions } from '../../operator/options.ts';
import { Cluster } from '../../state/cluster.ts';
import { describeCluster } from './eks.ts';
import { awsProviderFactory, type AwsProviderHandle } from './factory.ts';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
let server: Server;
let endpoint = '';
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const name = decodeURIComponent((req.url ?? '').split('/')[2] ?? '');
    if (name !== 'my-cluster') {
      res
        .writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' })
        .end(JSON.stringify({ message: `No cluster found for name: ${name}.` }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        cluster: {
          name,
          endpoint: 'https://ABC123.gr7.ap-northeast-2.eks.amazonaws.com',
          kubernetesNetworkConfig: { serviceIpv4Cidr: '172.20.0.0/16', ipFamily: 'ipv4' },
        },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const eks = () => new EKSClient({ region: 'ap-northeast-2', endpoint, credentials, maxAttempts: 1 });

function context(env: Record<string, string>): CloudProviderContext {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443' }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const options = resolveOptions([], { CLUSTER_NAME: 'my-cluster', ...env });
  const log = newLogger({ level: 'silent' });
  return {
    options,
    clock: realClock,
    log,
    cluster: new Cluster({ clock: realClock, log, listed: () => true }),
    nodeClass: () => undefined,
    kube: new KubeClient(kc),
    metrics: new Metrics(),
  };
}

describe('eks:DescribeCluster', () => {
  it('reads the endpoint and the service CIDR', async () => {
    expect(await describeCluster(eks(), 'my-cluster')).toEqual({
      endpoint: 'https://ABC123.gr7.ap-northeast-2.eks.amazonaws.com',
      serviceCIDR: '172.20.0.0/16',
    });
    expect(requests.at(-1)).toBe('GET /clusters/my-cluster');
  });

  it('fails naming the cluster, the setting and the permission', async () => {
    await expect(describeCluster(eks(), 'other')).rejects.toThrow(
      /eks:DescribeCluster for cluster other failed \(set --cluster-endpoint \/ CLUSTER_ENDPOINT, or allow eks:DescribeCluster\): No cluster found/,
    );
  });

  it('lets the AWS provider start without CLUSTER_ENDPOINT, and counts the call in the SDK metrics', async () => {
    const aws = mockedAws('ap-northeast-2');
    const ctx = context({ EKS_CONTROL_PLANE: 'true' });
    const cp = await awsProviderFactory({
      env: { AWS_REGION: 'ap-northeast-2' },
      clients: () => ({ ...aws.clients, eks: eks() }),
    })(ctx);
    expect((cp as unknown as AwsProviderHandle).settings.clusterEndpoint).toBe(
      'https://ABC123.gr7.ap-northeast-2.eks.amazonaws.com',
    );
    expect((cp as unknown as AwsProviderHandle).settings.clusterCIDR).toBe('172.20.0.0/16');
    expect(
      await ctx.metrics.value('aws_sdk_go_request_total', { service: 'EKS', action: 'DescribeCluster', code: '200' }),
    ).toBe(1);
  });

  it('does not ask when the options say it all', async () => {
    const before = requests.length;
    const aws = mockedAws('ap-northeast-2');
    const cp = await awsProviderFactory({
      env: { AWS_REGION: 'ap-northeast-2' },
      clients: () => ({ ...aws.clients, eks: eks() }),
    })(context({ CLUSTER_ENDPOINT: 'https://x.example', CLUSTER_CIDR: '10.100.0.0/16' }));
    expect((cp as unknown as AwsProviderHandle).settings.clusterEndpoint).toBe('https://x.example');
    expect(requests.length).toBe(before);
  });
});
