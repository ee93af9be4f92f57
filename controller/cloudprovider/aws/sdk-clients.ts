// The ports of sdk.ts backed by the real AWS SDK v3 clients, and the one place that builds those clients.
// Every call is bounded: the SDK's HTTP handler gives each attempt a connection timeout and a request
// timeout (request sent to response read; a TimeoutError, never a warning), and retries are the SDK's
// adaptive mode (throttling and transient errors, timeouts included, retried with the given backoff while
// a client-side rate limiter slows the client down under throttling), so every port call is retried the
// same way; tests pass millisecond delays. A call whose attempts all timed out is reported once (a log line
// and karpenter_ts_request_timeouts_total{client="aws"}) and fails with the SDK's error. The SQS long poll
// gets its 20 s wait on top of the request timeout.
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  CreateTagsCommand,
  DeleteLaunchTemplateCommand,
  DescribeLaunchTemplatesCommand,
  EC2Client,
  TerminateInstancesCommand,
  paginateDescribeCapacityReservations,
  paginateDescribeImages,
  paginateDescribeInstanceTypeOfferings,
  paginateDescribeInstanceTypes,
  paginateDescribeInstances,
  paginateDescribeLaunchTemplates,
  paginateDescribeSecurityGroups,
  paginateDescribeSpotPriceHistory,
  paginateDescribeSubnets,
} from '@aws-sdk/client-ec2';
import {
  AddRoleToInstanceProfileCommand,
  CreateInstanceProfileCommand,
  DeleteInstanceProfileCommand,
  GetInstanceProfileCommand,
  IAMClient,
  RemoveRoleFromInstanceProfileCommand,
  paginateListInstanceProfiles,
} from '@aws-sdk/client-iam';
import { PricingClient, paginateGetProducts } from '@aws-sdk/client-pricing';
import { DeleteMessageCommand, GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { AdaptiveRetryStrategy } from '@smithy/core/retry';
import { AWS_CONNECT_TIMEOUT_MS, AWS_REQUEST_TIMEOUT_MS, type TimeoutReporter } from '../../operator/timeouts.ts';
import { isNotFound } from './errors.ts';
import type { AwsPorts, Ec2Port, IamPort, PricingPort, SqsPort, SsmPort } from './sdk.ts';
import { EKSClient } from '@aws-sdk/client-eks';

/** Collects every item of every page of an SDK paginator. */
async function all<P, T>(pages: AsyncIterable<P>, items: (page: P) => readonly T[] | undefined): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(...(items(page) ?? []));
  return out;
}

async function unlessNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

function ec2Port(client: EC2Client): Ec2Port {
  const c = { client };
  return {
    describeInstanceTypes: (filters) =>
      all(paginateDescribeInstanceTypes(c, { Filters: filters, MaxResults: 100 }), (p) => p.InstanceTypes),
    describeInstanceTypeOfferings: () =>
      all(
        paginateDescribeInstanceTypeOfferings(c, { LocationType: 'availability-zone', MaxResults: 1000 }),
        (p) => p.InstanceTypeOfferings,
      ),
    describeSpotPriceHistory: ({ productDescriptions, startTime }) =>
      all(
        paginateDescribeSpotPriceHistory(c, {
          ProductDescriptions: productDescriptions,
          StartTime: startTime,
          MaxResults: 2000,
        }),
        (p) => p.SpotPriceHistory,
      ),
    describeSubnets: (filters) => all(paginateDescribeSubnets(c, { Filters: filters }), (p) => p.Subnets),
    describeSecurityGroups: (filters) =>
      all(paginateDescribeSecurityGroups(c, { Filters: filters }), (p) => p.SecurityGroups),
    describeCapacityReservations: ({ ids, filters }) =>
      all(
        paginateDescribeCapacityReservations(c, {
          ...(ids?.length ? { CapacityReservationIds: ids } : {}),
          ...(filters?.length ? { Filters: filters } : {}),
          MaxResults: 1000,
        }),
        (p) => p.CapacityReservations,
      ),
    describeImages: ({ filters, owners }) =>
      all(
        paginateDescribeImages(c, {
          Filters: filters,
          ...(owners ? { Owners: owners } : {}),
          IncludeDeprecated: true,
          MaxResults: 1000,
        }),
        (p) => p.Images,
      ),
    describeLaunchTemplate: async (name) => {
      const out = await unlessNotFound(
        client.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: [name] })),
      );
      return out?.LaunchTemplates?.[0];
    },
    describeLaunchTemplates: (filters) =>
      all(paginateDescribeLaunchTemplates(c, { Filters: filters }), (p) => p.LaunchTemplates),
    createLaunchTemplate: async (input) => {
      const out = await client.send(new CreateLaunchTemplateCommand(input));
      if (!out.LaunchTemplate)
        throw new Error(`creating launch template ${input.LaunchTemplateName}: the response has no LaunchTemplate`);
      return out.LaunchTemplate;
    },
    deleteLaunchTemplate: async (name) => {
      await unlessNotFound(client.send(new DeleteLaunchTemplateCommand({ LaunchTemplateName: name })));
    },
    createFleet: async (input) => {
      const out = await client.send(new CreateFleetCommand(input));
      return { instances: out.Instances ?? [], errors: out.Errors ?? [] };
    },
    describeInstances: (input) =>
      all(
        paginateDescribeInstances(c, {
          ...(input.instanceIds ? { InstanceIds: input.instanceIds } : {}),
          ...(input.filters ? { Filters: input.filters } : {}),
        }),
        (p) => (p.Reservations ?? []).flatMap((r) => r.Instances ?? []),
      ),
    terminateInstances: async (ids) =>
      (await client.send(new TerminateInstancesCommand({ InstanceIds: ids }))).TerminatingInstances ?? [],
    createTags: async (ids, tags) => {
      await client.send(
        new CreateTagsCommand({ Resources: ids, Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }),
      );
    },
  };
}

function ssmPort(client: SSMClient): SsmPort {
  return {
    getParameter: async (name) =>
      (await unlessNotFound(client.send(new GetParameterCommand({ Name: name }))))?.Parameter?.Value,
  };
}

function iamPort(client: IAMClient): IamPort {
  return {
    getInstanceProfile: async (name) =>
      (await unlessNotFound(client.send(new GetInstanceProfileCommand({ InstanceProfileName: name }))))
        ?.InstanceProfile,
    listInstanceProfiles: (pathPrefix) =>
      all(paginateListInstanceProfiles({ client }, { PathPrefix: pathPrefix }), (p) => p.InstanceProfiles),
    createInstanceProfile: async ({ name, path, tags }) => {
      const out = await client.send(
        new CreateInstanceProfileCommand({
          InstanceProfileName: name,
          Path: path,
          Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
        }),
      );
      if (!out.InstanceProfile)
        throw new Error(`creating instance profile ${name}: the response has no InstanceProfile`);
      return out.InstanceProfile;
    },
    addRoleToInstanceProfile: async (profile, role) => {
      await client.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName: profile, RoleName: role }));
    },
    removeRoleFromInstanceProfile: async (profile, role) => {
      await unlessNotFound(
        client.send(new RemoveRoleFromInstanceProfileCommand({ InstanceProfileName: profile, RoleName: role })),
      );
    },
    deleteInstanceProfile: async (name) => {
      await unlessNotFound(client.send(new DeleteInstanceProfileCommand({ InstanceProfileName: name })));
    },
  };
}

/** ReceiveMessage parameters of docs/karpenter/aws-provider.md §6. */
const RECEIVE_PARAMETERS = {
  MaxNumberOfMessages: 10,
  WaitTimeSeconds: 20,
  VisibilityTimeout: 20,
  MessageSystemAttributeNames: ['SentTimestamp'],
  MessageAttributeNames: ['All'],
} as const;

/** The long poll's own wait on top of the request timeout (an SQS receive is silent while it waits). */
const RECEIVE_WAIT_MS = RECEIVE_PARAMETERS.WaitTimeSeconds * 1000;

function sqsPort(client: SQSClient, requestTimeoutMs = AWS_REQUEST_TIMEOUT_MS): SqsPort {
  return {
    getQueueUrl: async (queueName) => {
      const out = await client.send(new GetQueueUrlCommand({ QueueName: queueName }));
      if (!out.QueueUrl) throw new Error(`getting the url of queue ${queueName}: the response has no QueueUrl`);
      return out.QueueUrl;
    },
    receiveMessages: async (queueUrl, signal) => {
      const input = {
        QueueUrl: queueUrl,
        ...RECEIVE_PARAMETERS,
        MessageSystemAttributeNames: [...RECEIVE_PARAMETERS.MessageSystemAttributeNames],
        MessageAttributeNames: [...RECEIVE_PARAMETERS.MessageAttributeNames],
      };
      const out = await client.send(new ReceiveMessageCommand(input), {
        requestTimeout: RECEIVE_WAIT_MS + requestTimeoutMs,
        ...(signal ? { abortSignal: signal } : {}),
      });
      return out.Messages ?? [];
    },
    deleteMessage: async (queueUrl, receiptHandle) => {
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }));
    },
  };
}

function pricingPort(client: PricingClient): PricingPort {
  return {
    getProducts: (filters) =>
      all(
        paginateGetProducts(
          { client },
          {
            ServiceCode: 'AmazonEC2',
            MaxResults: 100,
            Filters: filters.map((f) => ({ Field: f.field, Type: 'TERM_MATCH', Value: f.value })),
          },
        ),
        (p) => p.PriceList,
      ),
  };
}

/** The Pricing API lives in a few regions; Karpenter picks the endpoint by the cluster region's prefix (§7). */
export function pricingRegion(region: string): string {
  if (region.startsWith('ap-')) return 'ap-south-1';
  if (region.startsWith('cn-')) return 'cn-northwest-1';
  if (region.startsWith('eu-')) return 'eu-central-1';
  return 'us-east-1';
}

export interface ClientOptions {
  readonly region: string;
  /** Loopback tests and VPC endpoints. */
  readonly endpoint?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Total attempts per call (default 3, the SDK's). */
  readonly maxAttempts?: number;
  /** Delay before retry n (1-based), ms. Default: the SDK's exponential shape capped at 20 s. */
  readonly backoffMs?: (attempt: number) => number;
  /** One attempt, request sent to response read (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Establishing the connection (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** Told about every call whose attempts all timed out. */
  readonly onTimeout?: TimeoutReporter;
}

export interface AwsClients {
  readonly ec2: EC2Client;
  readonly ssm: SSMClient;
  readonly iam: IAMClient;
  readonly sqs: SQSClient;
  readonly pricing: PricingClient;
  /** eks:DescribeCluster, when the options leave the endpoint or the service CIDR out. */
  readonly eks?: EKSClient;
  /** The request timeout the clients were built with (the SQS long poll adds its wait to it). */
  readonly requestTimeoutMs?: number;
}

export function awsClients(o: ClientOptions): AwsClients {
  const backoff = o.backoffMs ?? ((attempt: number) => Math.min(20_000, 100 * 2 ** attempt));
  const maxAttempts = o.maxAttempts ?? 3;
  const common = () => ({
    ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    ...(o.credentials ? { credentials: { ...o.credentials } } : {}),
    retryStrategy: new AdaptiveRetryStrategy(maxAttempts, {
      maxAttempts,
      backoff: { computeNextBackoffDelay: (retry: number) => backoff(retry + 1), setDelayBase: () => {} },
    }),
    requestHandler: {
      connectionTimeout: o.connectTimeoutMs ?? AWS_CONNECT_TIMEOUT_MS,
      requestTimeout: o.requestTimeoutMs ?? AWS_REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
    },
  });
  const clients = {
    ec2: new EC2Client({ region: o.region, ...common() }),
    ssm: new SSMClient({ region: o.region, ...common() }),
    iam: new IAMClient({ region: o.region, ...common() }),
    sqs: new SQSClient({ region: o.region, ...common() }),
    pricing: new PricingClient({ region: pricingRegion(o.region), ...common() }),
    eks: new EKSClient({ region: o.region, ...common() }),
  };
  for (const [service, client] of Object.entries(clients)) observeTimeouts(client, service, o);
  return { ...clients, requestTimeoutMs: o.requestTimeoutMs ?? AWS_REQUEST_TIMEOUT_MS };
}

/** SDK errors that mean no answer in time (connection, request or socket timeout). */
const isSdkTimeout = (e: unknown): boolean =>
  e instanceof Error && (e.name === 'TimeoutError' || (e as { code?: string }).code === 'ETIMEDOUT');

interface Observable {
  readonly middlewareStack: {
    add(
      mw: (
        next: (args: unknown) => Promise<unknown>,
        context: { commandName?: string },
      ) => (args: unknown) => Promise<unknown>,
      o: { step: 'initialize'; name: string },
    ): void;
  };
}

/** Reports a call that failed by timing out, after the SDK's retries (the initialize step wraps them all). */
function observeTimeouts(client: unknown, service: string, o: ClientOptions): void {
  const report = o.onTimeout;
  if (!report) return;
  (client as Observable).middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (e) {
        if (isSdkTimeout(e))
          report({
            client: 'aws',
            operation: `${service}:${(context.commandName ?? 'unknown').replace(/Command$/, '')}`,
            timeoutMs: o.requestTimeoutMs ?? AWS_REQUEST_TIMEOUT_MS,
            err: e,
          });
        throw e;
      }
    },
    { step: 'initialize', name: 'karpenterTimeoutReport' },
  );
}

export function sdkPorts(c: AwsClients): AwsPorts {
  return {
    ec2: ec2Port(c.ec2),
    ssm: ssmPort(c.ssm),
    iam: iamPort(c.iam),
    sqs: sqsPort(c.sqs, c.requestTimeoutMs),
    pricing: pricingPort(c.pricing),
  };
}
