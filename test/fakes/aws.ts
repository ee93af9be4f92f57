// Test kit for the AWS provider: real SDK v3 clients behind aws-sdk-client-mock, the ports built from them
// exactly as production builds them, a settable clock, builders for EC2NodeClass objects (parsed by the
// provider's parser) and the DescribeInstanceTypes fixture (Karpenter's own, in controller/cloudprovider/aws/testdata).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

import { readFileSync } from 'node:fs';
import {
  CreateLaunchTemplateCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeLaunchTemplatesCommand,
  EC2Client,
  EC2ServiceException,
  type InstanceTypeInfo,
  type InstanceTypeOffering,
} from '@aws-sdk/client-ec2';
import {
  DeleteConflictException,
  DeleteInstanceProfileCommand,
  GetInstanceProfileCommand,
  IAMClient,
  ListInstanceProfilesCommand,
  NoSuchEntityException,
  RemoveRoleFromInstanceProfileCommand,
} from '@aws-sdk/client-iam';
import { PricingClient } from '@aws-sdk/client-pricing';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { sdkPorts, type AwsClients } from '../../controller/cloudprovider/aws/sdk-clients.ts';
import { mustParseNodeClass } from '../../controller/cloudprovider/aws/nodeclass/object.ts';
import type { EC2NodeClass } from '../../engine/index.ts';
import type { Timers } from '../../controller/cloudprovider/aws/periodic.ts';
import type { AwsSettings, Clock } from '../../controller/cloudprovider/aws/settings.ts';

const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'test' };

export function mockedAws(region = 'us-west-2') {
  const clients: AwsClients = {
    ec2: new EC2Client({ region, credentials }),
    ssm: new SSMClient({ region, credentials }),
    iam: new IAMClient({ region, credentials }),
    sqs: new SQSClient({ region, credentials }),
    pricing: new PricingClient({ region: 'us-east-1', credentials }),
  };
  return {
    clients,
    ports: sdkPorts(clients),
    ec2: mockClient(clients.ec2),
    ssm: mockClient(clients.ssm),
    iam: mockClient(clients.iam),
    sqs: mockClient(clients.sqs),
    pricing: mockClient(clients.pricing),
  };
}

/** An EC2 client error as the SDK raises it: the error code is its name. */
export const ec2Error = (name: string): EC2ServiceException =>
  new EC2ServiceException({ name, $fault: 'client', $metadata: {}, message: name });

/** mockedAws answering what a launch reads first: the fixture's instance types and offerings, and no launch
 * template yet (DescribeLaunchTemplates: not found; CreateLaunchTemplate makes lt-1). */
export function launchReadyAws(region?: string): ReturnType<typeof mockedAws> {
  const aws = mockedAws(region);
  aws.ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: fixtureInstanceTypes() });
  aws.ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({ InstanceTypeOfferings: fixtureOfferings() });
  aws.ec2.on(DescribeLaunchTemplatesCommand).rejects(ec2Error('InvalidLaunchTemplateName.NotFoundException'));
  aws.ec2.on(CreateLaunchTemplateCommand).resolves({ LaunchTemplate: { LaunchTemplateId: 'lt-1' } });
  return aws;
}

/** Timers that fire on the next turn of the event loop: a batcher's calls started together merge into one. */
/**
 * IAM's instance profiles as the mocked client answers them: Get, RemoveRole and Delete act on this state as IAM
 * would (NoSuchEntity for a profile or role that is not there, DeleteConflict for a profile that still holds a
 * role; List by path prefix). Returns the profiles' roles by name.
 */
export function iamProfiles(
  aws: ReturnType<typeof mockedAws>,
  profiles: readonly { name: string; path: string; role?: string }[],
): Map<string, string[]> {
  const roles = new Map(profiles.map((p) => [p.name, p.role ? [p.role] : []]));
  const paths = new Map(profiles.map((p) => [p.name, p.path]));
  const missing = (what: string) => new NoSuchEntityException({ message: `${what} cannot be found.`, $metadata: {} });
  aws.iam.on(GetInstanceProfileCommand).callsFake(({ InstanceProfileName: n }: { InstanceProfileName: string }) => {
    if (!roles.has(n)) throw missing(`Instance Profile ${n}`);
    const Roles = roles
      .get(n)!
      .map((RoleName) => ({ RoleName, RoleId: 'x', Arn: 'x', Path: '/', CreateDate: new Date() }));
    return { InstanceProfile: { InstanceProfileName: n, Path: paths.get(n), Roles } };
  });
  aws.iam.on(ListInstanceProfilesCommand).callsFake(({ PathPrefix: prefix }: { PathPrefix: string }) => ({
    InstanceProfiles: [...roles.keys()]
      .filter((n) => (paths.get(n) ?? '/').startsWith(prefix))
      .map((n) => ({ InstanceProfileName: n, Path: paths.get(n), Roles: [] })),
  }));
  aws.iam.on(RemoveRoleFromInstanceProfileCommand).callsFake((i: { InstanceProfileName: string; RoleName: string }) => {
    const held = roles.get(i.InstanceProfileName);
    if (!held?.includes(i.RoleName)) throw missing(`Role ${i.RoleName} in instance profile ${i.InstanceProfileName}`);
    roles.set(
      i.InstanceProfileName,
      held.filter((r) => r !== i.RoleName),
    );
    return {};
  });
  aws.iam.on(DeleteInstanceProfileCommand).callsFake(({ InstanceProfileName: n }: { InstanceProfileName: string }) => {
    if (!roles.has(n)) throw missing(`Instance Profile ${n}`);
    if (roles.get(n)!.length)
      throw new DeleteConflictException({
        message: 'Cannot delete entity, must remove roles from instance profile first.',
        $metadata: {},
      });
    roles.delete(n);
    return {};
  });
  return roles;
}

export const nextTurnTimers: Timers = {
  setTimeout: (fn) => setImmediate(fn),
  clearTimeout: (h) => clearImmediate(h as NodeJS.Immediate),
};

export class FakeClock implements Clock {
  constructor(public t = Date.parse('2026-08-21T12:00:00Z')) {}
  now(): number {
    return this.t;
  }
  step(ms: number): void {
    this.t += ms;
  }
}

export const settings = (over: Partial<AwsSettings> = {}): AwsSettings => ({
  clusterName: 'my-cluster',
  region: 'us-west-2',
  clusterEndpoint: 'https://ABCDEF.gr7.us-west-2.eks.amazonaws.com',
  clusterCABundle: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t',
  clusterCIDR: '10.100.0.0/16',
  vmMemoryOverheadPercent: 0.075,
  reservedENIs: 0,
  isolatedVPC: false,
  ...over,
});

type Raw = Record<string, unknown>;

/**
 * An EC2NodeClass as the API server would hold it (spec, and status in its wire shape), parsed by the
 * provider's parser (the engine's, keeping observedGeneration): tests see exactly what production sees.
 */
export function nodeClass(spec: Raw = {}, rest: { metadata?: Raw; status?: Raw } = {}): EC2NodeClass {
  return mustParseNodeClass({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default', uid: '0f6c4f1a-1111-2222-3333-444455556666', generation: 1, ...rest.metadata },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'KarpenterNodeRole-my-cluster',
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
      ...spec,
    },
    ...(rest.status ? { status: rest.status } : {}),
  });
}

/** A node class with a resolved, Ready status in zones test-zone-1a/1b/1c. */
export function readyNodeClass(spec: Raw = {}, generation = 1): EC2NodeClass {
  const at = '2026-08-21T11:00:00Z';
  return nodeClass(spec, {
    metadata: { generation },
    status: {
      subnets: [
        { id: 'subnet-a', zone: 'test-zone-1a', zoneID: 'tz1-az1' },
        { id: 'subnet-b', zone: 'test-zone-1b', zoneID: 'tz1-az2' },
        { id: 'subnet-c', zone: 'test-zone-1c', zoneID: 'tz1-az3' },
      ],
      securityGroups: [{ id: 'sg-1', name: 'nodes' }],
      amis: [
        {
          id: 'ami-amd64',
          name: 'al2023-amd64',
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' },
            { key: 'karpenter.k8s.aws/instance-accelerator-count', operator: 'DoesNotExist' },
          ],
        },
        {
          id: 'ami-arm64',
          name: 'al2023-arm64',
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
            { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' },
            { key: 'karpenter.k8s.aws/instance-accelerator-count', operator: 'DoesNotExist' },
          ],
        },
        {
          id: 'ami-nvidia',
          name: 'al2023-nvidia',
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' },
          ],
        },
      ],
      instanceProfile: 'my-cluster_123',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: '',
          observedGeneration: generation,
          lastTransitionTime: at,
        },
      ],
    },
  });
}

interface Fixture {
  DescribeInstanceTypesOutput: { InstanceTypes: InstanceTypeInfo[] };
  DescribeInstanceTypeOfferingsOutput: { InstanceTypeOfferings: InstanceTypeOffering[] };
}

const fixture = JSON.parse(
  readFileSync(
    new URL('../../controller/cloudprovider/aws/testdata/describe-instance-types.json', import.meta.url),
    'utf8',
  ),
) as Fixture;

/** Karpenter's 17-type DescribeInstanceTypes fixture (us-east-1 facts, zones test-zone-1a/b/c). */
export const fixtureInstanceTypes = (): InstanceTypeInfo[] =>
  structuredClone(fixture.DescribeInstanceTypesOutput.InstanceTypes);
export const fixtureOfferings = (): InstanceTypeOffering[] =>
  structuredClone(fixture.DescribeInstanceTypeOfferingsOutput.InstanceTypeOfferings);

/** Karpenter's test price convention: on-demand = vCPUs + memory GiB / 100 (any positive, type-ordered number will do). */
export function fixturePrices(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of fixture.DescribeInstanceTypesOutput.InstanceTypes) {
    out[t.InstanceType!] = (t.VCpuInfo?.DefaultVCpus ?? 0) * 0.05 + (t.MemoryInfo?.SizeInMiB ?? 0) / 1024 / 100;
  }
  return out;
}
