import { DescribeSecurityGroupsCommand, DescribeSubnetsCommand } from '@aws-sdk/client-ec2';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { mockedAws } from '../../../../test/fakes/aws.ts';
import {
  describeTerms,
  resolveSecurityGroups,
  resolveSubnets,
  securityGroupFilterSets,
  subnetFilterSets,
} from './network.ts';

describe('selector filters', () => {
  it('turns each tags term into one filter set, "*" into a tag-key filter, and merges ids', () => {
    expect(
      subnetFilterSets([
        { tags: { 'karpenter.sh/discovery': 'c', tier: '*' } },
        { id: 'subnet-1' },
        { id: 'subnet-2' },
      ]),
    ).toEqual([
      [{ Name: 'subnet-id', Values: ['subnet-1', 'subnet-2'] }],
      [
        { Name: 'tag:karpenter.sh/discovery', Values: ['c'] },
        { Name: 'tag-key', Values: ['tier'] },
      ],
    ]);
  });

  it('turns a cidr term (which the engine accepts) into an exact cidr-block filter, ANDed with its tags', () => {
    expect(subnetFilterSets([{ cidr: '10.0.0.0/19' }, { cidr: '10.0.32.0/19', tags: { tier: 'private' } }])).toEqual([
      [{ Name: 'cidr-block', Values: ['10.0.0.0/19'] }],
      [
        { Name: 'cidr-block', Values: ['10.0.32.0/19'] },
        { Name: 'tag:tier', Values: ['private'] },
      ],
    ]);
  });

  it('merges security group ids and names into their own filter sets', () => {
    expect(securityGroupFilterSets([{ id: 'sg-1' }, { name: 'nodes' }, { id: 'sg-2' }, { tags: { a: 'b' } }])).toEqual([
      [{ Name: 'group-id', Values: ['sg-1', 'sg-2'] }],
      [{ Name: 'group-name', Values: ['nodes'] }],
      [{ Name: 'tag:a', Values: ['b'] }],
    ]);
  });

  it('writes terms back as people wrote them', () => {
    expect(describeTerms([{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }, { id: 'sg-1' }])).toBe(
      '{tags: {karpenter.sh/discovery: my-cluster}}, {id: sg-1}',
    );
  });
});

describe('resolution', () => {
  it('ORs the terms, deduplicates and orders subnets by free addresses', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeSubnetsCommand).callsFake((input: { Filters: { Name: string }[] }) =>
      input.Filters[0]!.Name === 'subnet-id'
        ? {
            Subnets: [
              {
                SubnetId: 'subnet-1',
                AvailabilityZone: 'us-west-2a',
                AvailabilityZoneId: 'usw2-az1',
                AvailableIpAddressCount: 10,
              },
            ],
          }
        : {
            Subnets: [
              {
                SubnetId: 'subnet-1',
                AvailabilityZone: 'us-west-2a',
                AvailabilityZoneId: 'usw2-az1',
                AvailableIpAddressCount: 10,
              },
              {
                SubnetId: 'subnet-2',
                AvailabilityZone: 'us-west-2b',
                AvailabilityZoneId: 'usw2-az2',
                AvailableIpAddressCount: 500,
                Tags: [{ Key: 'Name', Value: 'b' }],
              },
            ],
          },
    );
    const got = await resolveSubnets(aws.ports.ec2, [{ id: 'subnet-1' }, { tags: { 'karpenter.sh/discovery': 'c' } }]);
    expect(got.map((s) => [s.id, s.zone, s.zoneId, s.availableIps])).toEqual([
      ['subnet-2', 'us-west-2b', 'usw2-az2', 500],
      ['subnet-1', 'us-west-2a', 'usw2-az1', 10],
    ]);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeSubnetsCommand, 2);
  });

  it('returns nothing (not an error) when no security group matches', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [] });
    expect(await resolveSecurityGroups(aws.ports.ec2, [{ tags: { 'karpenter.sh/discovery': 'c' } }])).toEqual([]);
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeSecurityGroupsCommand, {
      Filters: [{ Name: 'tag:karpenter.sh/discovery', Values: ['c'] }],
    });
  });
});
