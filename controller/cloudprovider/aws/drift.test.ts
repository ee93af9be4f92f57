import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { mockedAws, readyNodeClass } from '../../../test/fakes/aws.ts';
import type { DriftQuery } from '../types.ts';
import { isDrifted } from './drift.ts';
import { EC2NODECLASS_HASH_VERSION, nodeClassHash } from './hash.ts';
import { Instances } from './instance.ts';
import type { EC2NodeClass } from '../../../engine/index.ts';

function setup(
  nc: EC2NodeClass,
  instance: { SubnetId?: string; groups?: string[]; reservation?: string } = {},
  reservedCapacity = true,
) {
  const aws = mockedAws();
  const r = instance.reservation;
  aws.ec2.on(DescribeInstancesCommand).resolves({
    Reservations: [
      {
        Instances: [
          {
            InstanceId: 'i-1',
            SubnetId: instance.SubnetId ?? 'subnet-a',
            SecurityGroups: (instance.groups ?? ['sg-1']).map((GroupId) => ({ GroupId })),
            ...(r
              ? {
                  CapacityReservationId: r,
                  CapacityReservationSpecification: { CapacityReservationTarget: { CapacityReservationId: r } },
                }
              : {}),
          },
        ],
      },
    ],
  });
  const instances = new Instances({ ec2: aws.ports.ec2, clusterName: 'my-cluster' });
  return (q: Partial<DriftQuery> = {}) =>
    isDrifted(query(nc, q), { nodeClass: (n) => (n === nc.name ? nc : undefined), instances, reservedCapacity });
}

function query(nc: EC2NodeClass, over: Partial<DriftQuery>): DriftQuery {
  return {
    nodeClaimName: 'default-x',
    providerID: 'aws:///test-zone-1a/i-1',
    nodeClassName: 'default',
    imageID: 'ami-amd64',
    labels: { 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': 'm5.large' },
    annotations: {
      'karpenter.k8s.aws/ec2nodeclass-hash': nodeClassHash({ spec: nc.spec, amiFamily: 'AL2023' }),
      'karpenter.k8s.aws/ec2nodeclass-hash-version': EC2NODECLASS_HASH_VERSION,
    },
    ...over,
  };
}

describe('isDrifted', () => {
  it("reports CapacityReservationDrift when the instance's reservation left status.capacityReservations (gate on only)", async () => {
    const nc = readyNodeClass();
    const listed = { ...nc, status: { ...nc.status, capacityReservations: [{ id: 'cr-1' }] } };
    expect(await setup(listed, { reservation: 'cr-1' })()).toBeUndefined();
    expect(await setup(listed, { reservation: 'cr-2' })()).toBe('CapacityReservationDrift');
    expect(await setup(nc, { reservation: 'cr-2' }, false)()).toBeUndefined();
  });

  it('reports nothing for a NodeClaim that matches its node class', async () => {
    expect(await setup(readyNodeClass())()).toBeUndefined();
  });

  it('reports NodeClassDrift when the static hash differs at the same version', async () => {
    const nc = readyNodeClass();
    const changed = { ...nc, spec: { ...nc.spec, tags: { Team: 'new' } } };
    const check = setup(changed);
    expect(await check(query(nc, {}))).toBe('NodeClassDrift');
  });

  it('does not drift when the hash version differs (the controller rewrites the hash instead)', async () => {
    const nc = readyNodeClass();
    const check = setup({ ...nc, spec: { ...nc.spec, tags: { Team: 'new' } } });
    expect(
      await check({
        annotations: {
          'karpenter.k8s.aws/ec2nodeclass-hash': '123',
          'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v5',
        },
      }),
    ).toBeUndefined();
  });

  it('reports AMIDrift when the image is not the AMI the instance type maps to', async () => {
    const check = setup(readyNodeClass());
    expect(await check({ imageID: 'ami-old' })).toBe('AMIDrift');
    expect(await check({ imageID: 'ami-arm64', labels: { 'kubernetes.io/arch': 'arm64' } })).toBeUndefined();
    expect(
      await check({
        imageID: 'ami-amd64',
        labels: { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-gpu-count': '1' },
      }),
    ).toBe('AMIDrift');
  });

  it('reports SecurityGroupDrift when the instance groups differ from status.securityGroups', async () => {
    expect(await setup(readyNodeClass(), { groups: ['sg-1', 'sg-2'] })()).toBe('SecurityGroupDrift');
    expect(await setup(readyNodeClass(), { groups: ['sg-9'] })()).toBe('SecurityGroupDrift');
  });

  it('reports SubnetDrift when the instance subnet left status.subnets', async () => {
    expect(await setup(readyNodeClass(), { SubnetId: 'subnet-old' })()).toBe('SubnetDrift');
  });

  it('says nothing about a NodeClaim whose node class is gone', async () => {
    expect(await setup(readyNodeClass())({ nodeClassName: 'other' })).toBeUndefined();
  });
});
