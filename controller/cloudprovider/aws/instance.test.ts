import {
  CreateTagsCommand,
  DescribeInstancesCommand,
  EC2ServiceException,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { mockedAws, nextTurnTimers } from '../../../test/fakes/aws.ts';
import { isInstanceNotOwned, isNodeClaimNotFound } from '../types.ts';
import { ACTIVE_STATES, capacityTypeOf, Instances, parseProviderID } from './instance.ts';

const notFound = () =>
  new EC2ServiceException({ name: 'InvalidInstanceID.NotFound', $fault: 'client', $metadata: {}, message: 'gone' });
const ec2Instance = (id: string, over: Record<string, unknown> = {}) => ({
  InstanceId: id,
  InstanceType: 'm5.large' as const,
  ImageId: 'ami-1',
  LaunchTime: new Date('2026-08-21T10:00:00Z'),
  Placement: { AvailabilityZone: 'us-west-2a', Tenancy: 'default' as const },
  State: { Name: 'running' as const, Code: 16 },
  SubnetId: 'subnet-a',
  Tags: [
    { Key: 'karpenter.sh/nodepool', Value: 'default' },
    { Key: 'karpenter.sh/nodeclaim', Value: 'default-x' },
    { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' },
    { Key: 'eks:eks-cluster-name', Value: 'my-cluster' },
    { Key: 'kubernetes.io/cluster/my-cluster', Value: 'owned' },
  ],
  ...over,
});

const make = (aws: ReturnType<typeof mockedAws>) =>
  new Instances({ ec2: aws.ports.ec2, clusterName: 'my-cluster', timers: nextTurnTimers });

describe('providerID', () => {
  it('parses aws:///<zone>/<id> and names a bad value', () => {
    expect(parseProviderID('aws:///us-west-2a/i-0abc123')).toBe('i-0abc123');
    expect(() => parseProviderID('kind://x/y')).toThrow(
      'providerID "kind://x/y" is not of the form aws:///<zone>/<instance-id>',
    );
  });
});

describe('Instances', () => {
  it('gets a live instance with its zone, type, capacity type, image and tags', async () => {
    const aws = mockedAws();
    aws.ec2
      .on(DescribeInstancesCommand)
      .resolves({ Reservations: [{ Instances: [ec2Instance('i-1', { SpotInstanceRequestId: 'sir-1' })] }] });
    const got = await make(aws).get('aws:///us-west-2a/i-1');
    expect(got).toMatchObject({
      providerID: 'aws:///us-west-2a/i-1',
      instanceType: 'm5.large',
      zone: 'us-west-2a',
      capacityType: 'spot',
      imageID: 'ami-1',
      launchTime: Date.parse('2026-08-21T10:00:00Z'),
      nodeClaimName: 'default-x',
      nodePoolName: 'default',
      state: 'running',
      labels: {
        'karpenter.sh/capacity-type': 'spot',
        'topology.kubernetes.io/zone': 'us-west-2a',
        'karpenter.sh/nodepool': 'default',
      },
    });
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeInstancesCommand, {
      InstanceIds: ['i-1'],
      Filters: [{ Name: 'instance-state-name', Values: ACTIVE_STATES }],
    });
  });

  it('throws NodeClaimNotFoundError for an unknown or terminated instance', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeInstancesCommand).rejectsOnce(notFound()).resolves({ Reservations: [] });
    await expect(make(aws).get('aws:///us-west-2a/i-1')).rejects.toSatisfy(isNodeClaimNotFound);
    await expect(make(aws).get('aws:///us-west-2a/i-1')).rejects.toSatisfy(isNodeClaimNotFound);
  });

  it("lists by Karpenter's tags, the cluster and live states", async () => {
    const aws = mockedAws();
    aws.ec2
      .on(DescribeInstancesCommand)
      .resolves({ Reservations: [{ Instances: [ec2Instance('i-1'), ec2Instance('i-2')] }] });
    expect((await make(aws).list()).map((i) => i.providerID)).toEqual([
      'aws:///us-west-2a/i-1',
      'aws:///us-west-2a/i-2',
    ]);
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeInstancesCommand, {
      Filters: [
        { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
        { Name: 'tag-key', Values: ['karpenter.k8s.aws/ec2nodeclass'] },
        { Name: 'tag:eks:eks-cluster-name', Values: ['my-cluster'] },
        { Name: 'instance-state-name', Values: ACTIVE_STATES },
      ],
    });
  });

  it('terminates concurrent deletes in one batched call, and is NotFound once the instance is gone', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeInstancesCommand).callsFake((input: { InstanceIds: string[] }) => ({
      Reservations: [{ Instances: input.InstanceIds.map((id) => ec2Instance(id)) }],
    }));
    aws.ec2.on(TerminateInstancesCommand).callsFake((input: { InstanceIds: string[] }) => ({
      TerminatingInstances: input.InstanceIds.map((id) => ({ InstanceId: id })),
    }));
    const instances = make(aws);
    await Promise.all([instances.delete('aws:///us-west-2a/i-1'), instances.delete('aws:///us-west-2b/i-2')]);
    expect(aws.ec2).toHaveReceivedCommandTimes(TerminateInstancesCommand, 1);
    expect(aws.ec2).toHaveReceivedCommandWith(TerminateInstancesCommand, { InstanceIds: ['i-1', 'i-2'] });
    aws.ec2.on(DescribeInstancesCommand).resolves({ Reservations: [] });
    await expect(instances.delete('aws:///us-west-2a/i-1')).rejects.toSatisfy(isNodeClaimNotFound);
  });

  it('retries a batch one id at a time when EC2 rejects it for an unknown id', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeInstancesCommand).callsFake((input: { InstanceIds: string[] }) => ({
      Reservations: [{ Instances: input.InstanceIds.map((id) => ec2Instance(id)) }],
    }));
    aws.ec2.on(TerminateInstancesCommand).callsFake((input: { InstanceIds: string[] }) => {
      if (input.InstanceIds.includes('i-gone')) throw notFound();
      return { TerminatingInstances: input.InstanceIds.map((id) => ({ InstanceId: id })) };
    });
    const instances = make(aws);
    const [ok, gone] = await Promise.allSettled([
      instances.delete('aws:///z/i-ok'),
      instances.delete('aws:///z/i-gone'),
    ]);
    expect(ok.status).toBe('fulfilled');
    expect(gone.status === 'rejected' && isNodeClaimNotFound(gone.reason)).toBe(true);
    expect(aws.ec2).toHaveReceivedCommandTimes(TerminateInstancesCommand, 3);
  });

  it('tags a registered instance', async () => {
    const aws = mockedAws();
    aws.ec2.on(CreateTagsCommand).resolves({});
    await make(aws).tag('aws:///z/i-1', { Name: 'ip-10-0-0-1', 'karpenter.sh/nodeclaim': 'default-x' });
    expect(aws.ec2).toHaveReceivedCommandWith(CreateTagsCommand, {
      Resources: ['i-1'],
      Tags: [
        { Key: 'Name', Value: 'ip-10-0-0-1' },
        { Key: 'karpenter.sh/nodeclaim', Value: 'default-x' },
      ],
    });
  });

  it('reads the capacity type: spot request, reservation-only, else on-demand', () => {
    expect(capacityTypeOf({ SpotInstanceRequestId: 'sir' })).toBe('spot');
    expect(
      capacityTypeOf({
        CapacityReservationId: 'cr-1',
        CapacityReservationSpecification: { CapacityReservationPreference: 'capacity-reservations-only' },
      }),
    ).toBe('reserved');
    expect(capacityTypeOf({ CapacityReservationId: 'cr-1' })).toBe('on-demand');
  });

  it("refuses to terminate an instance without this cluster's tags: InstanceNotOwnedError, no TerminateInstances", async () => {
    const tagged = (tags: Array<[string, string]>) =>
      ec2Instance('i-1', { Tags: tags.map(([Key, Value]) => ({ Key, Value })) });
    const cases: Array<[string, Array<[string, string]>, RegExp | undefined]> = [
      [
        'another cluster',
        [
          ['karpenter.sh/nodepool', 'default'],
          ['eks:eks-cluster-name', 'other-cluster'],
          ['kubernetes.io/cluster/other-cluster', 'owned'],
        ],
        /does not carry this cluster's tags/,
      ],
      [
        'no cluster tag',
        [['karpenter.sh/nodepool', 'default']],
        /does not carry this cluster's tags \(eks:eks-cluster-name=my-cluster or kubernetes.io\/cluster\/my-cluster=owned\)/,
      ],
      ['not launched by Karpenter', [['eks:eks-cluster-name', 'my-cluster']], /has no karpenter.sh\/nodepool tag/],
      [
        'the legacy cluster tag alone',
        [
          ['karpenter.sh/nodepool', 'default'],
          ['kubernetes.io/cluster/my-cluster', 'owned'],
        ],
        undefined,
      ],
    ];
    for (const [what, tags, refused] of cases) {
      const aws = mockedAws();
      aws.ec2.on(DescribeInstancesCommand).resolves({ Reservations: [{ Instances: [tagged(tags)] }] });
      aws.ec2.on(TerminateInstancesCommand).resolves({ TerminatingInstances: [{ InstanceId: 'i-1' }] });
      const result = await make(aws)
        .delete('aws:///us-west-2a/i-1')
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      if (refused) {
        expect(isInstanceNotOwned(result), what).toBe(true);
        expect((result as Error).message, what).toMatch(refused);
        expect(aws.ec2, what).not.toHaveReceivedCommand(TerminateInstancesCommand);
      } else {
        expect(result, what).toBeUndefined();
        expect(aws.ec2, what).toHaveReceivedCommandWith(TerminateInstancesCommand, { InstanceIds: ['i-1'] });
      }
    }
  });
});
