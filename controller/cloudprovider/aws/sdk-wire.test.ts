// Wire-level tests: the real SDK clients against a tiny loopback HTTP server speaking EC2's Query protocol
// (form body, XML answers) and SQS's JSON 1.0 protocol, as docs/stack.md §7 describes them.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { interruptionMetrics } from './interruption/metrics.ts';
import { SqsInterruptionSource } from './interruption/sqs.ts';
import { createFleetInput, fleetBatcher } from './launch/fleet.ts';
import type { Timers } from './periodic.ts';
import { awsClients, sdkPorts } from './sdk-clients.ts';
import type { TimeoutReport } from '../../operator/timeouts.ts';
import { silentServer, type SilentServer } from '../../../test/support/silent.ts';

interface Seen {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function serve(
  handler: (req: Seen) => { status?: number; headers?: Record<string, string>; body: string },
): Promise<{ endpoint: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s = { headers: req.headers, body };
      seen.push(s);
      const out = handler(s);
      res.writeHead(out.status ?? 200, out.headers ?? { 'content-type': 'text/xml' });
      res.end(out.body);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { endpoint: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const clients = (endpoint: string) =>
  sdkPorts(
    awsClients({
      region: 'us-west-2',
      endpoint,
      credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake' },
      maxAttempts: 3,
      backoffMs: () => 1,
    }),
  );

/** Flushes a batch on the next turn of the event loop: requests made in the same turn merge. */
const nextTurn: Timers = {
  setTimeout: (fn) => setImmediate(fn),
  clearTimeout: (h) => clearImmediate(h as NodeJS.Immediate),
};

const XMLNS = 'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"';

describe('EC2 over the Query protocol', () => {
  it('retries a throttled call with the SDK retry strategy and then parses the answer', async () => {
    let calls = 0;
    const { endpoint, seen } = await serve(() => {
      calls++;
      if (calls <= 2) {
        return {
          status: 503,
          body: '<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>r</RequestID></Response>',
        };
      }
      return {
        body: `<DescribeInstanceTypesResponse ${XMLNS}><requestId>r</requestId><instanceTypeSet><item><instanceType>m5.large</instanceType>
          <vCpuInfo><defaultVCpus>2</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>8192</sizeInMiB></memoryInfo>
          <supportedUsageClasses><item>on-demand</item><item>spot</item></supportedUsageClasses></item></instanceTypeSet></DescribeInstanceTypesResponse>`,
      };
    });
    const got = await clients(endpoint).ec2.describeInstanceTypes([
      { Name: 'supported-virtualization-type', Values: ['hvm'] },
    ]);
    expect(seen).toHaveLength(3);
    expect(got).toEqual([
      expect.objectContaining({
        InstanceType: 'm5.large',
        VCpuInfo: { DefaultVCpus: 2 },
        SupportedUsageClasses: ['on-demand', 'spot'],
      }),
    ]);
    const form = new URLSearchParams(seen[2]!.body);
    expect(form.get('Action')).toBe('DescribeInstanceTypes');
    expect(form.get('Filter.1.Name')).toBe('supported-virtualization-type');
    expect(form.get('MaxResults')).toBe('100');
  });

  it('gives up after the configured attempts and surfaces the EC2 error code', async () => {
    const { endpoint, seen } = await serve(() => ({
      status: 503,
      body: '<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>slow down</Message></Error></Errors><RequestID>r</RequestID></Response>',
    }));
    await expect(clients(endpoint).ec2.terminateInstances(['i-1'])).rejects.toMatchObject({
      name: 'RequestLimitExceeded',
    });
    expect(seen).toHaveLength(3);
  });

  it('sends one merged CreateFleet for concurrent identical launches and hands out its instances and errors', async () => {
    const overrides = (type: string, subnet: string, zone: string) =>
      `<launchTemplateAndOverrides><launchTemplateSpecification><launchTemplateName>karpenter.k8s.aws/1</launchTemplateName><version>$Latest</version></launchTemplateSpecification><overrides><instanceType>${type}</instanceType><subnetId>${subnet}</subnetId><availabilityZone>${zone}</availabilityZone></overrides></launchTemplateAndOverrides>`;
    const { endpoint, seen } = await serve(() => ({
      body: `<CreateFleetResponse ${XMLNS}><requestId>r</requestId><fleetId>fleet-123</fleetId>
        <errorSet><item>${overrides('c5.large', 'subnet-b', 'us-west-2b')}<lifecycle>spot</lifecycle><errorCode>InsufficientInstanceCapacity</errorCode><errorMessage>no capacity</errorMessage></item></errorSet>
        <fleetInstanceSet><item>${overrides('m5.large', 'subnet-a', 'us-west-2a')}<lifecycle>spot</lifecycle><instanceIds><item>i-0aaa</item><item>i-0bbb</item></instanceIds><instanceType>m5.large</instanceType></item></fleetInstanceSet>
        </CreateFleetResponse>`,
    }));
    const input = createFleetInput(
      [
        {
          templateName: 'karpenter.k8s.aws/1',
          overrides: [
            { instanceType: 'm5.large', subnetId: 'subnet-a', zone: 'us-west-2a', imageId: 'ami-1', price: 0.04 },
            { instanceType: 'c5.large', subnetId: 'subnet-b', zone: 'us-west-2b', imageId: 'ami-1', price: 0.035 },
          ],
        },
      ],
      'spot',
      { 'karpenter.sh/nodepool': 'default', 'eks:eks-cluster-name': 'my-cluster' },
    );
    const batcher = fleetBatcher(clients(endpoint).ec2, nextTurn);
    const [a, b, c] = await Promise.all([batcher.add(input), batcher.add(input), batcher.add(input)]);
    expect(seen).toHaveLength(1);
    const form = new URLSearchParams(seen[0]!.body);
    expect(Object.fromEntries([...form].filter(([k]) => k !== 'ClientToken'))).toMatchObject({
      Action: 'CreateFleet',
      Type: 'instant',
      'TargetCapacitySpecification.TotalTargetCapacity': '3',
      'TargetCapacitySpecification.DefaultTargetCapacityType': 'spot',
      'SpotOptions.AllocationStrategy': 'price-capacity-optimized',
      'LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName': 'karpenter.k8s.aws/1',
      'LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version': '$Latest',
      'LaunchTemplateConfigs.1.Overrides.1.InstanceType': 'm5.large',
      'LaunchTemplateConfigs.1.Overrides.1.SubnetId': 'subnet-a',
      'LaunchTemplateConfigs.1.Overrides.1.ImageId': 'ami-1',
      'LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone': 'us-west-2a',
      'LaunchTemplateConfigs.1.Overrides.1.Priority': '0.04',
      'LaunchTemplateConfigs.1.Overrides.2.InstanceType': 'c5.large',
      'TagSpecification.1.ResourceType': 'instance',
      'TagSpecification.2.ResourceType': 'volume',
      'TagSpecification.3.ResourceType': 'fleet',
      'TagSpecification.1.Tag.1.Key': 'eks:eks-cluster-name',
      'TagSpecification.1.Tag.2.Key': 'karpenter.sh/nodepool',
      'TagSpecification.1.Tag.2.Value': 'default',
    });
    expect(form.get('OnDemandOptions.AllocationStrategy')).toBeNull();
    expect([a.instance?.id, b.instance?.id, c.instance]).toEqual(['i-0aaa', 'i-0bbb', undefined]);
    expect(a.instance).toMatchObject({
      instanceType: 'm5.large',
      zone: 'us-west-2a',
      subnetId: 'subnet-a',
      lifecycle: 'spot',
    });
    expect(c.errors).toEqual([
      expect.objectContaining({ ErrorCode: 'InsufficientInstanceCapacity', Lifecycle: 'spot' }),
    ]);
    expect(c.errors[0]?.LaunchTemplateAndOverrides?.Overrides).toMatchObject({
      InstanceType: 'c5.large',
      AvailabilityZone: 'us-west-2b',
    });
  });
});

describe('SQS over JSON 1.0', () => {
  it('resolves the queue once, long-polls with Karpenter parameters, verifies MD5OfBody and deletes on acknowledge', async () => {
    const body = readFileSync(
      new URL('./testdata/interruption-events/spot-interruption-warning.json', import.meta.url),
      'utf8',
    );
    const md5 = createHash('md5').update(body).digest('hex');
    const { endpoint, seen } = await serve((req) => {
      const json = { 'content-type': 'application/x-amz-json-1.0' };
      switch (req.headers['x-amz-target']) {
        case 'AmazonSQS.GetQueueUrl':
          return {
            headers: json,
            body: JSON.stringify({ QueueUrl: 'https://sqs.us-west-2.amazonaws.com/123456789012/my-cluster' }),
          };
        case 'AmazonSQS.ReceiveMessage':
          return {
            headers: json,
            body: JSON.stringify({
              Messages: [{ MessageId: 'm-1', ReceiptHandle: 'rh-1', Body: body, MD5OfBody: md5 }],
            }),
          };
        case 'AmazonSQS.DeleteMessage':
          return { headers: json, body: '{}' };
        default:
          return {
            status: 400,
            headers: json,
            body: JSON.stringify({ __type: 'com.amazonaws.sqs#InvalidAction', message: 'no' }),
          };
      }
    });
    const registry = new Registry();
    const source = new SqsInterruptionSource({
      sqs: clients(endpoint).sqs,
      queueName: 'my-cluster',
      metrics: interruptionMetrics(registry),
    });
    const first = await source.receive(new AbortController().signal);
    await source.receive(new AbortController().signal);
    expect(first).toEqual([
      {
        event: {
          kind: 'spotInterruption',
          id: '1e5527d7-bb36-4607-3370-4164db56a40e',
          instanceIds: ['i-0b662ef9931388ba0'],
          time: Date.parse('2026-08-21T14:05:12Z'),
        },
        handle: 'rh-1',
      },
    ]);
    await source.acknowledge('rh-1');
    const targets = seen.map((s) => s.headers['x-amz-target']);
    expect(targets).toEqual([
      'AmazonSQS.GetQueueUrl',
      'AmazonSQS.ReceiveMessage',
      'AmazonSQS.ReceiveMessage',
      'AmazonSQS.DeleteMessage',
    ]);
    expect(seen[1]!.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(JSON.parse(seen[1]!.body)).toMatchObject({
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 20,
      VisibilityTimeout: 20,
      MessageAttributeNames: ['All'],
    });
    expect(JSON.parse(seen[3]!.body)).toEqual({
      QueueUrl: 'https://sqs.us-west-2.amazonaws.com/123456789012/my-cluster',
      ReceiptHandle: 'rh-1',
    });
  });

  it('rejects a message whose MD5OfBody does not match its body', async () => {
    const { endpoint } = await serve(() => ({
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify({
        Messages: [
          { MessageId: 'm-1', ReceiptHandle: 'rh-1', Body: '{}', MD5OfBody: '00000000000000000000000000000000' },
        ],
      }),
    }));
    await expect(clients(endpoint).sqs.receiveMessages('https://sqs.us-west-2.amazonaws.com/1/q')).rejects.toThrow(
      /MD5/i,
    );
  });
});

describe('bounded calls', () => {
  let silent: SilentServer | undefined;
  afterEach(async () => {
    await silent?.close();
    silent = undefined;
  });

  it('an EC2 endpoint that accepts and never answers: every attempt times out, the call fails with TimeoutError and is reported once', async () => {
    silent = await silentServer();
    const reports: TimeoutReport[] = [];
    const ports = sdkPorts(
      awsClients({
        region: 'us-west-2',
        endpoint: silent.url,
        credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake' },
        maxAttempts: 3,
        backoffMs: () => 1,
        requestTimeoutMs: 200,
        onTimeout: (r) => reports.push(r),
      }),
    );
    const input = createFleetInput(
      [
        {
          templateName: 'lt',
          overrides: [
            { instanceType: 'm5.large', subnetId: 'subnet-a', zone: 'us-west-2a', imageId: 'ami-1', price: 0.1 },
          ],
        },
      ],
      'on-demand',
      {},
    );
    await expect(ports.ec2.createFleet(input)).rejects.toMatchObject({ name: 'TimeoutError' });
    // The adaptive retry mode retried the timed-out attempts, each on a new connection.
    expect(silent.requests()).toHaveLength(3);
    expect(silent.requests().every((r) => r.method === 'POST')).toBe(true);
    expect(reports.map((r) => [r.client, r.operation, r.timeoutMs])).toEqual([['aws', 'ec2:CreateFleet', 200]]);
    // Each attempt was given up by the client, not left hanging.
    await new Promise((r) => setTimeout(r, 50));
    expect(silent.abandoned()).toBe(3);
  });

  it('the SQS long poll may stay silent for its 20 s wait: the request timeout counts on top of it', async () => {
    let answerIn = 0;
    const { endpoint } = await serve(() => ({
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify({ Messages: [] }),
    }));
    // A server that holds the receive longer than the request timeout (as SQS does while it waits) answers in time.
    server!.removeAllListeners('request');
    server!.on('request', (req, res) => {
      req.resume();
      answerIn = 600;
      setTimeout(
        () =>
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ Messages: [] })),
        answerIn,
      );
    });
    const reports: TimeoutReport[] = [];
    const ports = sdkPorts(
      awsClients({
        region: 'us-west-2',
        endpoint,
        credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake' },
        maxAttempts: 1,
        requestTimeoutMs: 200,
        onTimeout: (r) => reports.push(r),
      }),
    );
    await expect(ports.sqs.receiveMessages('https://sqs.us-west-2.amazonaws.com/1/q')).resolves.toEqual([]);
    expect(answerIn).toBeGreaterThan(200);
    expect(reports).toEqual([]);
    // Any other call is bounded by the request timeout alone.
    await expect(ports.sqs.deleteMessage('https://sqs.us-west-2.amazonaws.com/1/q', 'rh')).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(reports.map((r) => r.operation)).toEqual(['sqs:DeleteMessage']);
  });
});
