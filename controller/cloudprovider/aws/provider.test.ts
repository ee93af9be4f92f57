import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  DescribeImagesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSpotPriceHistoryCommand,
  DescribeSubnetsCommand,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import {
  DeleteInstanceProfileCommand,
  GetInstanceProfileCommand,
  RemoveRoleFromInstanceProfileCommand,
} from '@aws-sdk/client-iam';
import { GetProductsCommand } from '@aws-sdk/client-pricing';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import 'aws-sdk-client-mock-vitest/extend';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reqs, type NodePool } from '../../../engine/index.ts';
import {
  FakeClock,
  fixtureInstanceTypes,
  fixtureOfferings,
  fixturePrices,
  iamProfiles,
  mockedAws,
  nextTurnTimers,
  readyNodeClass,
  settings,
} from '../../../test/fakes/aws.ts';
import { isNodeClassNotReady, type CloudProvider } from '../types.ts';
import type { EC2NodeClass } from '../../../engine/index.ts';
import type { Timers } from './periodic.ts';
import { awsCloudProvider, type AwsCloudProviderDeps } from './provider.ts';

const pool = (name: string): NodePool =>
  ({
    name: 'default',
    template: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name } },
  }) as unknown as NodePool;

function build(over: Partial<AwsCloudProviderDeps> = {}, classes = new Map<string, EC2NodeClass>()) {
  const aws = mockedAws();
  aws.ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: fixtureInstanceTypes() });
  aws.ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({ InstanceTypeOfferings: fixtureOfferings() });
  const cp = awsCloudProvider({
    settings: settings(),
    ports: aws.ports,
    nodeClass: (n) => classes.get(n),
    kubernetesVersion: async () => '1.31',
    staticPrices: { onDemand: fixturePrices() },
    clock: new FakeClock(),
    timers: nextTurnTimers,
    ...over,
  });
  return { aws, cp, classes };
}

afterEach(() => vi.useRealTimers());

/** The IAM path readyNodeClass()'s own instance profiles are made under. */
const OWN_PATH = '/karpenter/us-west-2/my-cluster/0f6c4f1a-1111-2222-3333-444455556666/';

/** Finalizes the ready node class while EC2 holds one of its launch templates; checks that template was deleted. */
async function finalizeWithOneTemplate(aws: ReturnType<typeof mockedAws>, cp: ReturnType<typeof build>['cp']) {
  aws.ec2
    .on(DescribeLaunchTemplatesCommand)
    .resolves({ LaunchTemplates: [{ LaunchTemplateName: 'karpenter.k8s.aws/1' }] });
  aws.ec2.on(DeleteLaunchTemplateCommand).resolves({});
  await cp.finalizeNodeClass(readyNodeClass());
  expect(aws.ec2).toHaveReceivedCommandWith(DeleteLaunchTemplateCommand, { LaunchTemplateName: 'karpenter.k8s.aws/1' });
}

describe('awsCloudProvider', () => {
  it('is a CloudProvider named aws, with an interruption feed only when a queue is configured', () => {
    const plain: CloudProvider = build().cp;
    expect(plain.name).toBe('aws');
    expect(plain.interruptions).toBeUndefined();
    expect(build({ settings: settings({ interruptionQueue: 'my-cluster' }) }).cp.interruptions).toBeDefined();
  });

  it('refuses settings without a cluster name', () => {
    expect(() => build({ settings: settings({ clusterName: '' }) })).toThrow(
      /clusterName \(CLUSTER_NAME\) is required/,
    );
  });

  it('answers getInstanceTypes for a NodePool through its node class, discovering once', async () => {
    const { aws, cp, classes } = build();
    classes.set('default', readyNodeClass());
    const a = await cp.getInstanceTypes(pool('default'));
    await cp.getInstanceTypes(pool('default'));
    expect(a.length).toBeGreaterThan(10);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeInstanceTypesCommand, 1);
    await expect(cp.getInstanceTypes(pool('missing'))).rejects.toSatisfy(isNodeClassNotReady);
  });

  it("starts from the engine catalog's prices and extra facts unless given others", async () => {
    const { cp, classes } = build({ staticPrices: undefined });
    classes.set('default', readyNodeClass());
    expect(cp.pricing.onDemandPrice('m5.large')).toBe(0.096); // us-west-2 in the catalog
    const m5 = (await cp.getInstanceTypes(pool('default'))).find((t) => t.name === 'm5.large')!;
    expect(m5.capacity['vpc.amazonaws.com/pod-eni']).toBe(9);
    expect(reqs.singleValueLabels(m5.requirements)['karpenter.k8s.aws/instance-network-bandwidth']).toBe('750');
  });

  it('launches into the subnet with the most free addresses that the last node-class reconcile saw', async () => {
    const nc = readyNodeClass();
    const { aws, cp, classes } = build();
    aws.ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'ami-amd64' } });
    aws.ec2.on(DescribeImagesCommand).resolves({ Images: [{ ImageId: 'ami-amd64', Architecture: 'x86_64' }] });
    aws.ec2.on(DescribeSubnetsCommand).resolves({
      Subnets: [
        {
          SubnetId: 'subnet-small',
          AvailabilityZone: 'test-zone-1a',
          AvailabilityZoneId: 'tz1-az1',
          AvailableIpAddressCount: 5,
        },
        {
          SubnetId: 'subnet-big',
          AvailabilityZone: 'test-zone-1a',
          AvailabilityZoneId: 'tz1-az1',
          AvailableIpAddressCount: 900,
        },
      ],
    });
    aws.ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-1' }] });
    aws.iam.on(GetInstanceProfileCommand).resolves({
      InstanceProfile: {
        InstanceProfileName: 'my-cluster_123',
        InstanceProfileId: 'x',
        Arn: 'a',
        Path: '/',
        CreateDate: new Date(),
        Roles: [{ RoleName: 'KarpenterNodeRole-my-cluster', RoleId: 'r', Arn: 'a', Path: '/', CreateDate: new Date() }],
      },
    });
    const r = await cp.reconcileNodeClass(nc);
    expect(r.ready).toBe(true);
    classes.set('default', { ...nc, status: { ...r.status, subnets: [...r.status.subnets!].reverse() } });
    aws.ec2.on(DescribeLaunchTemplatesCommand).rejects(
      new EC2ServiceException({
        name: 'InvalidLaunchTemplateName.NotFoundException',
        $fault: 'client',
        $metadata: {},
        message: 'x',
      }),
    );
    aws.ec2.on(CreateLaunchTemplateCommand).resolves({ LaunchTemplate: { LaunchTemplateId: 'lt-1' } });
    aws.ec2.on(CreateFleetCommand).resolves({
      Instances: [
        {
          InstanceIds: ['i-1'],
          InstanceType: 'm5.large',
          LaunchTemplateAndOverrides: { Overrides: { SubnetId: 'subnet-big', AvailabilityZone: 'test-zone-1a' } },
        },
      ],
    });
    await cp.create({
      nodeClaimName: 'a',
      nodePoolName: 'default',
      nodeClassName: 'default',
      requests: {},
      labels: {},
      annotations: {},
      taints: [],
      startupTaints: [],
      requirements: [
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    const overrides = aws.ec2
      .commandCalls(CreateFleetCommand)[0]!
      .args[0].input.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
    expect(overrides.map((o) => o.SubnetId)).toEqual(['subnet-big']);
  });

  it('cleans up a deleted node class: its launch templates and its managed instance profile', async () => {
    const { aws, cp } = build();
    const iam = iamProfiles(aws, [{ name: 'my-cluster_123', path: OWN_PATH, role: 'KarpenterNodeRole-my-cluster' }]);
    await finalizeWithOneTemplate(aws, cp);
    expect(aws.iam).toHaveReceivedCommandWith(RemoveRoleFromInstanceProfileCommand, {
      InstanceProfileName: 'my-cluster_123',
      RoleName: 'KarpenterNodeRole-my-cluster',
    });
    expect(aws.iam).toHaveReceivedCommandWith(DeleteInstanceProfileCommand, { InstanceProfileName: 'my-cluster_123' });
    expect(iam.has('my-cluster_123')).toBe(false);
  });

  it("deletes the class's own profile with the role it holds now, not spec.role's", async () => {
    const { aws, cp } = build();
    // The profile in status holds another role than spec.role names (changed by hand, or spec.role changed since the
    // last reconcile): IAM refuses to delete it while it holds that role.
    const iam = iamProfiles(aws, [{ name: 'my-cluster_123', path: OWN_PATH, role: 'SomeOtherRole' }]);
    aws.ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    await cp.finalizeNodeClass(readyNodeClass());
    expect(aws.iam).toHaveReceivedCommandWith(RemoveRoleFromInstanceProfileCommand, {
      InstanceProfileName: 'my-cluster_123',
      RoleName: 'SomeOtherRole',
    });
    expect(iam.has('my-cluster_123')).toBe(false);
  });

  it("leaves a profile its status names that is not under the class's path, and says so", async () => {
    const logs: string[] = [];
    const { aws, cp } = build({ log: (m, _f, level) => void logs.push(`${level}: ${m}`) });
    const iam = iamProfiles(aws, [
      { name: 'my-cluster_123', path: '/teams/web/', role: 'KarpenterNodeRole-my-cluster' },
    ]);
    aws.ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    await cp.finalizeNodeClass(readyNodeClass());
    expect(aws.iam).not.toHaveReceivedCommand(RemoveRoleFromInstanceProfileCommand);
    expect(aws.iam).not.toHaveReceivedCommand(DeleteInstanceProfileCommand);
    expect(iam.get('my-cluster_123')).toEqual(['KarpenterNodeRole-my-cluster']);
    expect(logs).toEqual([
      expect.stringMatching(/^warn: .*my-cluster_123 is not one of its own \(IAM path \/teams\/web\//),
    ]);
  });

  it('finishes when the profile its status names is gone already', async () => {
    const { aws, cp } = build();
    iamProfiles(aws, []);
    aws.ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    await cp.finalizeNodeClass(readyNodeClass());
    expect(aws.iam).not.toHaveReceivedCommand(DeleteInstanceProfileCommand);
  });

  it('in an isolated VPC deletes the launch templates and asks IAM nothing', async () => {
    const { aws, cp } = build({ settings: settings({ isolatedVPC: true }) });
    const iam = iamProfiles(aws, [{ name: 'my-cluster_123', path: OWN_PATH, role: 'KarpenterNodeRole-my-cluster' }]);
    await finalizeWithOneTemplate(aws, cp);
    expect(aws.iam.calls()).toHaveLength(0);
    expect(iam.get('my-cluster_123')).toEqual(['KarpenterNodeRole-my-cluster']);
  });

  it('refreshes types and prices at start and every 12 hours, and stops', async () => {
    vi.useFakeTimers();
    const timers: Timers = {
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    };
    const { aws, cp } = build({ timers });
    aws.pricing.on(GetProductsCommand).resolves({
      PriceList: [
        JSON.stringify({
          product: { attributes: { instanceType: 'm5.large' } },
          terms: { OnDemand: { a: { priceDimensions: { b: { pricePerUnit: { USD: '0.1' } } } } } },
        }),
      ],
    });
    aws.ec2.on(DescribeSpotPriceHistoryCommand).resolves({
      SpotPriceHistory: [
        { InstanceType: 'm5.large', AvailabilityZone: 'test-zone-1a', SpotPrice: '0.03', Timestamp: new Date() },
      ],
    });
    aws.ec2.on(DescribeLaunchTemplatesCommand).resolves({});
    const stop = cp.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeInstanceTypesCommand, 1);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeSpotPriceHistoryCommand, 1);
    expect(cp.pricing.onDemandPrice('m5.large')).toBe(0.1);
    await vi.advanceTimersByTimeAsync(12 * 3600_000);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeInstanceTypesCommand, 2);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeSpotPriceHistoryCommand, 2);
    stop();
    await vi.advanceTimersByTimeAsync(24 * 3600_000);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeInstanceTypesCommand, 2);
  });

  it('retries a failed price refresh with backoff rather than waiting 12 hours', async () => {
    vi.useFakeTimers();
    const timers: Timers = {
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    };
    const errors: string[] = [];
    const { aws, cp } = build({ timers, log: (m) => errors.push(m) });
    aws.pricing.on(GetProductsCommand).rejects(new Error('throttled'));
    aws.ec2.on(DescribeSpotPriceHistoryCommand).resolves({ SpotPriceHistory: [] });
    const stop = cp.start();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(aws.pricing).toHaveReceivedCommandTimes(GetProductsCommand, 4); // 2 queries x (first try + one retry after 1 s)
    expect(errors.filter((e) => e === 'refreshing prices failed')).toHaveLength(2);
    stop();
  });
});
