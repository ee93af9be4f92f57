import {
  DescribeCapacityReservationsCommand,
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2ServiceException,
  type CapacityReservation,
} from '@aws-sdk/client-ec2';
import { GetInstanceProfileCommand, ListInstanceProfilesCommand } from '@aws-sdk/client-iam';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { describe, expect, it } from 'vitest';
import { FakeClock, mockedAws, nodeClass } from '../../../../test/fakes/aws.ts';
import { ReservationCapacity } from '../capacityreservation.ts';
import {
  reservationFilterSets,
  resolveCapacityReservations,
  UnknownCapacityReservationError,
} from './capacityreservations.ts';
import { reconcileNodeClass } from './reconcile.ts';

const ODCR = (id: string, over: Partial<CapacityReservation> = {}): CapacityReservation => ({
  CapacityReservationId: id,
  AvailabilityZone: 'us-west-2a',
  InstanceType: 'm5.large',
  OwnerId: '123456789012',
  InstanceMatchCriteria: 'targeted',
  State: 'active',
  AvailableInstanceCount: 3,
  TotalInstanceCount: 4,
  ...over,
});
const notFound = (id: string) =>
  new EC2ServiceException({
    name: 'InvalidCapacityReservationId.NotFound',
    $fault: 'client',
    $metadata: {},
    message: `The capacity reservation ID '${id}' does not exist`,
  });
const inputs = (aws: ReturnType<typeof mockedAws>) =>
  aws.ec2.commandCalls(DescribeCapacityReservationsCommand).map((c) => c.args[0].input);

describe('capacity reservation selection', () => {
  it('turns tag, owner and match-criteria terms into ANDed filters with state=active, and leaves id terms to CapacityReservationIds', () => {
    expect(
      reservationFilterSets([
        { id: 'cr-1' },
        { tags: { team: 'ml', any: '*' }, ownerID: '123456789012' },
        { instanceMatchCriteria: 'open' },
      ]),
    ).toEqual([
      [
        { Name: 'tag:team', Values: ['ml'] },
        { Name: 'tag-key', Values: ['any'] },
        { Name: 'owner-id', Values: ['123456789012'] },
        { Name: 'state', Values: ['active'] },
      ],
      [
        { Name: 'instance-match-criteria', Values: ['open'] },
        { Name: 'state', Values: ['active'] },
      ],
    ]);
  });

  it("merges id terms into one call, reads every page, ORs the terms and writes Karpenter's status fields", async () => {
    const aws = mockedAws();
    const end = new Date('2026-08-21T20:00:00Z');
    aws.ec2
      .on(DescribeCapacityReservationsCommand, { CapacityReservationIds: ['cr-1', 'cr-2'] })
      .resolves({ CapacityReservations: [ODCR('cr-1'), ODCR('cr-2', { AvailabilityZone: 'us-west-2b' })] });
    aws.ec2
      .on(DescribeCapacityReservationsCommand, {
        Filters: [
          { Name: 'tag:team', Values: ['ml'] },
          { Name: 'state', Values: ['active'] },
        ],
      })
      .resolvesOnce({ CapacityReservations: [ODCR('cr-2')], NextToken: 'page-2' })
      .resolvesOnce({
        CapacityReservations: [
          ODCR('cr-9', {
            ReservationType: 'capacity-block',
            EndDate: end,
            InstanceType: 'p5.48xlarge',
            InstanceMatchCriteria: 'open',
            Interruptible: false,
          }),
        ],
      });
    const nc = nodeClass({
      capacityReservationSelectorTerms: [{ id: 'cr-1' }, { id: 'cr-2' }, { tags: { team: 'ml' } }],
    });
    const r = await resolveCapacityReservations(aws.ports.ec2, nc, Date.parse('2026-08-21T12:00:00Z'));
    // One call for both ids, two pages for the tag term (cr-9 is only on the second).
    expect(inputs(aws)).toHaveLength(3);
    expect(inputs(aws)[0]!.CapacityReservationIds).toEqual(['cr-1', 'cr-2']);
    expect(inputs(aws)[0]!.Filters).toEqual([{ Name: 'state', Values: ['active'] }]);
    expect(r.reservations).toEqual([
      {
        id: 'cr-1',
        availabilityZone: 'us-west-2a',
        instanceType: 'm5.large',
        ownerID: '123456789012',
        instanceMatchCriteria: 'targeted',
        reservationType: 'default',
        interruptible: false,
        state: 'active',
      },
      {
        id: 'cr-2',
        availabilityZone: 'us-west-2a',
        instanceType: 'm5.large',
        ownerID: '123456789012',
        instanceMatchCriteria: 'targeted',
        reservationType: 'default',
        interruptible: false,
        state: 'active',
      },
      {
        id: 'cr-9',
        availabilityZone: 'us-west-2a',
        instanceType: 'p5.48xlarge',
        ownerID: '123456789012',
        instanceMatchCriteria: 'open',
        reservationType: 'capacity-block',
        interruptible: false,
        state: 'active',
        endTime: '2026-08-21T20:00:00Z',
      },
    ]);
    expect(r.counts.get('cr-1')).toEqual({ available: 3, total: 4 });
  });

  it('keeps only active reservations and marks a capacity block expiring 40 minutes before its end', async () => {
    const aws = mockedAws();
    const now = Date.parse('2026-08-21T12:00:00Z');
    aws.ec2.on(DescribeCapacityReservationsCommand).resolves({
      CapacityReservations: [
        ODCR('cr-old', { State: 'expired' }),
        ODCR('cr-block', { ReservationType: 'capacity-block', EndDate: new Date(now + 39 * 60_000) }),
        ODCR('cr-later', { ReservationType: 'capacity-block', EndDate: new Date(now + 41 * 60_000) }),
      ],
    });
    const r = await resolveCapacityReservations(
      aws.ports.ec2,
      nodeClass({ capacityReservationSelectorTerms: [{ tags: { a: 'b' } }] }),
      now,
    );
    expect(r.reservations.map((x) => `${x.id}:${x.state}`)).toEqual(['cr-block:expiring', 'cr-later:active']);
  });

  it('names the term of a reservation id EC2 does not know', async () => {
    const aws = mockedAws();
    aws.ec2
      .on(DescribeCapacityReservationsCommand, { CapacityReservationIds: ['cr-1', 'cr-404'] })
      .rejects(notFound('cr-404'));
    aws.ec2
      .on(DescribeCapacityReservationsCommand, { CapacityReservationIds: ['cr-1'] })
      .resolves({ CapacityReservations: [ODCR('cr-1')] });
    aws.ec2.on(DescribeCapacityReservationsCommand, { CapacityReservationIds: ['cr-404'] }).rejects(notFound('cr-404'));
    const nc = nodeClass({ capacityReservationSelectorTerms: [{ id: 'cr-1' }, { id: 'cr-404' }] });
    const err = await resolveCapacityReservations(aws.ports.ec2, nc, 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownCapacityReservationError);
    expect((err as Error).message).toBe(
      'EC2NodeClass default: spec.capacityReservationSelectorTerms[1].id: capacity reservation cr-404 does not exist (or is not shared with this account)',
    );
  });
});

function happyAws() {
  const aws = mockedAws();
  aws.ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'ami-x86' } });
  aws.ec2
    .on(DescribeImagesCommand)
    .resolves({ Images: [{ ImageId: 'ami-x86', Architecture: 'x86_64', Name: 'al2023' }] });
  aws.ec2
    .on(DescribeSubnetsCommand)
    .resolves({ Subnets: [{ SubnetId: 'subnet-a', AvailabilityZone: 'us-west-2a', AvailableIpAddressCount: 100 }] });
  aws.ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-1' }] });
  aws.iam.on(GetInstanceProfileCommand).resolves({
    InstanceProfile: {
      InstanceProfileName: 'my-cluster_1',
      InstanceProfileId: 'x',
      Arn: 'a',
      Path: '/',
      CreateDate: new Date(),
      Roles: [{ RoleName: 'KarpenterNodeRole-my-cluster', RoleId: 'r', Arn: 'a', Path: '/', CreateDate: new Date() }],
    },
  });
  aws.iam.on(ListInstanceProfilesCommand).resolves({ InstanceProfiles: [] });
  return aws;
}

describe('the CapacityReservationsReady step of the node class reconciler', () => {
  const run = (
    aws: ReturnType<typeof mockedAws>,
    terms: unknown[],
    extra: { reservedCapacity?: boolean; reservationCapacity?: ReservationCapacity } = {},
  ) =>
    reconcileNodeClass(
      nodeClass({ capacityReservationSelectorTerms: terms }, { status: { instanceProfile: 'my-cluster_1' } }),
      {
        ec2: aws.ports.ec2,
        ssm: aws.ports.ssm,
        iam: aws.ports.iam,
        clusterName: 'my-cluster',
        region: 'us-west-2',
        kubernetesVersion: async () => '1.31',
        clock: new FakeClock(),
        ...extra,
      },
    );

  it('writes status.capacityReservations, sets the condition True and refreshes the in-memory counts', async () => {
    const aws = happyAws();
    aws.ec2
      .on(DescribeCapacityReservationsCommand)
      .resolves({ CapacityReservations: [ODCR('cr-1', { AvailableInstanceCount: 2 })] });
    const counts = new ReservationCapacity();
    counts.refresh('cr-1', 0);
    const r = await run(aws, [{ id: 'cr-1' }], { reservationCapacity: counts });
    expect(r.ready).toBe(true);
    expect(r.status.capacityReservations.map((c) => c.id)).toEqual(['cr-1']);
    expect(r.conditions.find((c) => c.type === 'CapacityReservationsReady')).toMatchObject({
      status: 'True',
      reason: 'CapacityReservationsReady',
    });
    expect(counts.available('cr-1')).toBe(2);
  });

  it('sets the condition (and Ready) False for an unknown reservation id, naming the field', async () => {
    const aws = happyAws();
    aws.ec2.on(DescribeCapacityReservationsCommand).rejects(notFound('cr-404'));
    const r = await run(aws, [{ id: 'cr-404' }]);
    expect(r.ready).toBe(false);
    expect(r.conditions.find((c) => c.type === 'CapacityReservationsReady')).toMatchObject({
      status: 'False',
      reason: 'CapacityReservationNotFound',
      message: expect.stringContaining(
        'spec.capacityReservationSelectorTerms[0].id: capacity reservation cr-404 does not exist',
      ),
    });
    expect(r.status.capacityReservations).toEqual([]);
  });

  it('with the ReservedCapacity gate off, calls nothing, sets no condition and clears the status field', async () => {
    const aws = happyAws();
    aws.ec2.on(DescribeCapacityReservationsCommand).resolves({ CapacityReservations: [ODCR('cr-1')] });
    const r = await run(aws, [{ id: 'cr-1' }], { reservedCapacity: false });
    expect(inputs(aws)).toEqual([]);
    expect(r.conditions.map((c) => c.type)).not.toContain('CapacityReservationsReady');
    expect(r.status.capacityReservations).toEqual([]);
    expect(r.ready).toBe(true);
  });

  it('keeps the previous reservations when the call fails (throttled), and reports the error', async () => {
    const aws = happyAws();
    aws.ec2.on(DescribeCapacityReservationsCommand).rejects(
      new EC2ServiceException({
        name: 'UnauthorizedOperation',
        $fault: 'client',
        $metadata: {},
        message: 'not authorized',
      }),
    );
    const nc = nodeClass(
      { capacityReservationSelectorTerms: [{ id: 'cr-1' }] },
      {
        status: {
          instanceProfile: 'my-cluster_1',
          capacityReservations: [{ id: 'cr-1', availabilityZone: 'us-west-2a', instanceType: 'm5.large' }],
        },
      },
    );
    const r = await reconcileNodeClass(nc, {
      ec2: aws.ports.ec2,
      ssm: aws.ports.ssm,
      iam: aws.ports.iam,
      clusterName: 'my-cluster',
      region: 'us-west-2',
      kubernetesVersion: async () => '1.31',
      clock: new FakeClock(),
    });
    expect(r.status.capacityReservations.map((c) => c.id)).toEqual(['cr-1']);
    expect(r.errors.map((e) => e.message)).toEqual(['not authorized']);
  });
});
