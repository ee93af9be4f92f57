// Capacity reservations through awsCloudProvider(): reserved offerings, reserved launches (CreateFleet and
// launch templates), the in-memory count and the ReservedCapacity gate, with the real SDK clients behind
// aws-sdk-client-mock.
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  DescribeInstancesCommand,
  TerminateInstancesCommand,
  type CreateFleetCommandInput,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import type { EC2NodeClass, NodePool, NodeSelectorRequirement } from '../../../../engine/index.ts';
import {
  FakeClock,
  fixturePrices,
  launchReadyAws,
  type mockedAws,
  nextTurnTimers,
  readyNodeClass,
  settings,
} from '../../../../test/fakes/aws.ts';
import { isInsufficientCapacity, type LaunchRequest } from '../../types.ts';
import { awsCloudProvider } from '../provider.ts';

const RID = 'karpenter.k8s.aws/capacity-reservation-id';

const reservation = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  availabilityZone: 'test-zone-1a',
  instanceType: 'm5.large',
  ownerID: '123456789012',
  instanceMatchCriteria: 'targeted',
  reservationType: 'default',
  interruptible: false,
  state: 'active',
  ...over,
});
const withReservations = (nc: EC2NodeClass, rs: ReturnType<typeof reservation>[]): EC2NodeClass => ({
  ...nc,
  status: { ...nc.status, capacityReservations: rs },
});

function harness(rs: ReturnType<typeof reservation>[], counts: Record<string, number>, reservedCapacity = true) {
  const aws = launchReadyAws();
  const nc = withReservations(readyNodeClass(), rs);
  const cp = awsCloudProvider({
    settings: settings(),
    ports: aws.ports,
    nodeClass: (n) => (n === nc.name ? nc : undefined),
    kubernetesVersion: async () => '1.31',
    staticPrices: { onDemand: fixturePrices() },
    clock: new FakeClock(),
    timers: nextTurnTimers,
    reservedCapacity,
  });
  for (const [id, n] of Object.entries(counts)) cp.reservationCapacity.refresh(id, n, n);
  return { aws, cp, nc };
}

const pool = {
  name: 'default',
  template: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
} as unknown as NodePool;
const request = (requirements: NodeSelectorRequirement[]): LaunchRequest => ({
  nodeClaimName: 'default-abcde',
  nodePoolName: 'default',
  nodeClassName: 'default',
  requirements: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] }, ...requirements],
  requests: { cpu: 500, memory: 2 ** 30, pods: 1 },
  labels: { 'karpenter.sh/nodepool': 'default' },
  annotations: {},
  taints: [],
  startupTaints: [],
});
const types = (...names: string[]): NodeSelectorRequirement => ({
  key: 'node.kubernetes.io/instance-type',
  operator: 'In',
  values: names,
});
const capacity = (...cts: string[]): NodeSelectorRequirement => ({
  key: 'karpenter.sh/capacity-type',
  operator: 'In',
  values: cts,
});
const fleetInstance = (id: string, type: string, zone: string, subnet: string) => ({
  InstanceIds: [id],
  InstanceType: type as 'm5.large',
  Lifecycle: 'on-demand' as const,
  LaunchTemplateAndOverrides: {
    Overrides: { InstanceType: type as 'm5.large', SubnetId: subnet, AvailabilityZone: zone },
  },
});
const sentFleets = (aws: ReturnType<typeof mockedAws>): CreateFleetCommandInput[] =>
  aws.ec2.commandCalls(CreateFleetCommand).map((c) => c.args[0].input);
const sentTemplates = (aws: ReturnType<typeof mockedAws>) =>
  aws.ec2.commandCalls(CreateLaunchTemplateCommand).map((c) => c.args[0].input.LaunchTemplateData!);

describe('reserved offerings', () => {
  it('adds one reserved offering per reservation of the type, at the on-demand price / 10,000,000, with the count left', async () => {
    const { cp } = harness(
      [
        reservation('cr-1'),
        reservation('cr-2', { availabilityZone: 'test-zone-1b', reservationType: 'capacity-block' }),
        reservation('cr-x', { instanceType: 'c5.large' }),
      ],
      { 'cr-1': 2, 'cr-2': 0 },
    );
    const m5 = (await cp.getInstanceTypes(pool)).find((t) => t.name === 'm5.large')!;
    const reserved = m5.offerings.filter((o) => o.capacityType === 'reserved');
    expect(reserved).toEqual([
      {
        zone: 'test-zone-1a',
        zoneId: 'tz1-az1',
        capacityType: 'reserved',
        price: fixturePrices()['m5.large']! / 10_000_000,
        available: true,
        reservationId: 'cr-1',
        reservationCapacity: 2,
      },
      {
        zone: 'test-zone-1b',
        zoneId: 'tz1-az2',
        capacityType: 'reserved',
        price: fixturePrices()['m5.large']! / 10_000_000,
        available: false,
        reservationId: 'cr-2',
        reservationCapacity: 0,
      },
    ]);
    expect([...m5.requirements.get('karpenter.sh/capacity-type')!.values].sort()).toEqual([
      'on-demand',
      'reserved',
      'spot',
    ]);
    expect([...m5.requirements.get(RID)!.values]).toEqual(['cr-1', 'cr-2']);
    expect([...m5.requirements.get('karpenter.k8s.aws/capacity-reservation-type')!.values]).toEqual([
      'capacity-block',
      'default',
    ]);
    // A type without reservations keeps reservation-id DoesNotExist and no reserved capacity type.
    const m5x = (await cp.getInstanceTypes(pool)).find((t) => t.name === 'm5.xlarge')!;
    expect(m5x.requirements.get(RID)!.values.size).toBe(0);
    expect(m5x.requirements.get(RID)!.complement).toBe(false);
    expect(m5x.offerings.some((o) => o.capacityType === 'reserved')).toBe(false);
  });

  it('makes an expiring capacity block unavailable, and none at all with the ReservedCapacity gate off', async () => {
    const { cp } = harness([reservation('cr-1', { reservationType: 'capacity-block', state: 'expiring' })], {
      'cr-1': 5,
    });
    const m5 = (await cp.getInstanceTypes(pool)).find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.find((o) => o.capacityType === 'reserved')).toMatchObject({
      available: false,
      reservationCapacity: 5,
    });
    const off = harness([reservation('cr-1')], { 'cr-1': 5 }, false);
    const m5off = (await off.cp.getInstanceTypes(pool)).find((t) => t.name === 'm5.large')!;
    expect(m5off.offerings.some((o) => o.capacityType === 'reserved')).toBe(false);
    expect(m5off.requirements.get(RID)!.values.size).toBe(0);
  });
});

describe('reserved launches', () => {
  it('launches into the reservation: on-demand target, a template targeting it, reservation labels, one instance fewer left', async () => {
    const { aws, cp } = harness([reservation('cr-1')], { 'cr-1': 1 });
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    const inst = await cp.create(request([types('m5.large'), capacity('reserved', 'on-demand')]));
    const [input] = sentFleets(aws);
    expect(input!.TargetCapacitySpecification).toEqual({
      TotalTargetCapacity: 1,
      DefaultTargetCapacityType: 'on-demand',
    });
    expect(
      input!
        .LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? [])
        .map((o) => `${o.InstanceType}@${o.AvailabilityZone}`),
    ).toEqual(['m5.large@test-zone-1a']);
    const [lt] = sentTemplates(aws);
    expect(lt!.CapacityReservationSpecification).toEqual({
      CapacityReservationTarget: { CapacityReservationId: 'cr-1' },
    });
    expect(lt!.InstanceMarketOptions).toBeUndefined();
    expect(inst.capacityType).toBe('reserved');
    expect(inst.labels).toMatchObject({
      'karpenter.sh/capacity-type': 'reserved',
      [RID]: 'cr-1',
      'karpenter.k8s.aws/capacity-reservation-type': 'default',
      'karpenter.k8s.aws/capacity-reservation-interruptible': 'false',
    });
    expect(cp.reservationCapacity.available('cr-1')).toBe(0);
    const m5 = (await cp.getInstanceTypes(pool)).find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.find((o) => o.capacityType === 'reserved')).toMatchObject({
      available: false,
      reservationCapacity: 0,
    });
  });

  it('launches a capacity block with the capacity-block target and market type', async () => {
    const { aws, cp } = harness([reservation('cr-b', { reservationType: 'capacity-block' })], { 'cr-b': 4 });
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    const inst = await cp.create(request([types('m5.large'), capacity('reserved')]));
    expect(sentFleets(aws)[0]!.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('capacity-block');
    expect(sentTemplates(aws)[0]!.InstanceMarketOptions).toEqual({ MarketType: 'capacity-block' });
    expect(inst.labels['karpenter.k8s.aws/capacity-reservation-type']).toBe('capacity-block');
  });

  it('prefers an ODCR over a capacity block at the same price, and keeps only that partition', async () => {
    const { aws, cp } = harness(
      [
        reservation('cr-b', { reservationType: 'capacity-block', availabilityZone: 'test-zone-1b' }),
        reservation('cr-o'),
      ],
      { 'cr-b': 4, 'cr-o': 1 },
    );
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    await cp.create(request([types('m5.large'), capacity('reserved')]));
    expect(
      sentFleets(aws)[0]!
        .LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? [])
        .map((o) => o.AvailabilityZone),
    ).toEqual(['test-zone-1a']);
    expect(sentTemplates(aws).map((t) => t.CapacityReservationSpecification)).toEqual([
      { CapacityReservationTarget: { CapacityReservationId: 'cr-o' } },
    ]);
  });

  it('honours a capacity-reservation-id requirement', async () => {
    const { aws, cp } = harness([reservation('cr-1'), reservation('cr-2', { availabilityZone: 'test-zone-1b' })], {
      'cr-1': 9,
      'cr-2': 1,
    });
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'test-zone-1b', 'subnet-b')], Errors: [] });
    const inst = await cp.create(
      request([types('m5.large'), capacity('reserved'), { key: RID, operator: 'In', values: ['cr-2'] }]),
    );
    expect(
      sentTemplates(aws).map(
        (t) => t.CapacityReservationSpecification?.CapacityReservationTarget?.CapacityReservationId,
      ),
    ).toEqual(['cr-2']);
    expect(inst.labels[RID]).toBe('cr-2');
  });

  it('marks the reservation (not the offering) unavailable on ReservationCapacityExceeded', async () => {
    const { aws, cp } = harness([reservation('cr-1')], { 'cr-1': 3 });
    aws.ec2.on(CreateFleetCommand).resolves({
      Instances: [],
      Errors: [
        {
          ErrorCode: 'ReservationCapacityExceeded',
          ErrorMessage: 'no room',
          LaunchTemplateAndOverrides: {
            Overrides: { InstanceType: 'm5.large', SubnetId: 'subnet-a', AvailabilityZone: 'test-zone-1a' },
          },
        },
      ],
    });
    const err = await cp
      .create(request([types('m5.large'), capacity('reserved', 'on-demand')]))
      .catch((e: unknown) => e);
    expect(isInsufficientCapacity(err)).toBe(true);
    expect(cp.reservationCapacity.available('cr-1')).toBe(0);
    expect(cp.unavailableOfferings.isUnavailable('on-demand', 'm5.large', 'test-zone-1a')).toBe(false);
    expect(cp.unavailableOfferings.isUnavailable('reserved', 'm5.large', 'test-zone-1a')).toBe(false);
    // The next launch of the same claim goes on-demand.
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-0def', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    const inst = await cp.create(request([types('m5.large'), capacity('reserved', 'on-demand')]));
    expect(inst.capacityType).toBe('on-demand');
    expect(inst.labels[RID]).toBeUndefined();
    expect(sentTemplates(aws).at(-1)!.CapacityReservationSpecification).toEqual({
      CapacityReservationPreference: 'none',
    });
  });

  it('gives the instance back when an instance launched into the reservation is terminated (once)', async () => {
    const { aws, cp } = harness([reservation('cr-1')], { 'cr-1': 2 });
    cp.reservationCapacity.launched('cr-1');
    aws.ec2.on(DescribeInstancesCommand).resolves({
      Reservations: [
        {
          Instances: [
            {
              InstanceId: 'i-0abc',
              InstanceType: 'm5.large',
              State: { Name: 'running' },
              Placement: { AvailabilityZone: 'test-zone-1a' },
              CapacityReservationId: 'cr-1',
              CapacityReservationSpecification: { CapacityReservationTarget: { CapacityReservationId: 'cr-1' } },
              Tags: [
                { Key: 'eks:eks-cluster-name', Value: 'my-cluster' },
                { Key: 'karpenter.sh/nodepool', Value: 'default' },
              ],
            },
          ],
        },
      ],
    });
    aws.ec2.on(TerminateInstancesCommand).resolves({ TerminatingInstances: [{ InstanceId: 'i-0abc' }] });
    expect((await cp.get('aws:///test-zone-1a/i-0abc')).labels).toMatchObject({
      'karpenter.sh/capacity-type': 'reserved',
      [RID]: 'cr-1',
    });
    await cp.delete('aws:///test-zone-1a/i-0abc');
    await cp.delete('aws:///test-zone-1a/i-0abc');
    expect(cp.reservationCapacity.available('cr-1')).toBe(2);
  });
});
