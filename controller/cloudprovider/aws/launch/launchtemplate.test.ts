import {
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  DescribeLaunchTemplatesCommand,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { FakeClock, mockedAws, nodeClass } from '../../../../test/fakes/aws.ts';
import { launchTemplateData, launchTemplateName, LaunchTemplates, type TemplateOptions } from './launchtemplate.ts';

const notFound = () =>
  new EC2ServiceException({
    name: 'InvalidLaunchTemplateName.NotFoundException',
    $fault: 'client',
    $metadata: {},
    message: 'none',
  });
const opts = (over: Partial<TemplateOptions> = {}): TemplateOptions => ({
  family: 'AL2023',
  spec: nodeClass().spec,
  imageId: 'ami-1',
  userData: 'hello',
  instanceProfile: 'my-cluster_1',
  securityGroupIds: ['sg-2', 'sg-1'],
  tags: { 'karpenter.sh/nodepool': 'default', 'eks:eks-cluster-name': 'my-cluster' },
  capacityType: 'on-demand',
  ...over,
});

describe('launch template contents', () => {
  it('names templates karpenter.k8s.aws/<hash>, stable for equal contents, different otherwise', () => {
    expect(launchTemplateName(opts())).toMatch(/^karpenter\.k8s\.aws\/\d+$/);
    expect(launchTemplateName(opts({ securityGroupIds: ['sg-1', 'sg-2'] }))).toBe(launchTemplateName(opts()));
    expect(launchTemplateName(opts({ imageId: 'ami-2' }))).not.toBe(launchTemplateName(opts()));
    expect(launchTemplateName(opts({ userData: 'other' }))).not.toBe(launchTemplateName(opts()));
    expect(launchTemplateName(opts({ tags: { 'karpenter.sh/nodepool': 'other' } }))).not.toBe(
      launchTemplateName(opts()),
    );
  });

  it('defaults metadata options, a 20Gi gp3 encrypted root, and base64 user data', () => {
    const d = launchTemplateData(opts());
    expect(d.MetadataOptions).toEqual({
      HttpEndpoint: 'enabled',
      HttpProtocolIpv6: 'disabled',
      HttpPutResponseHopLimit: 1,
      HttpTokens: 'required',
      InstanceMetadataTags: 'disabled',
    });
    expect(d.BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } },
    ]);
    expect(Buffer.from(d.UserData!, 'base64').toString()).toBe('hello');
    expect(d.SecurityGroupIds).toEqual(['sg-1', 'sg-2']);
    expect(d.IamInstanceProfile).toEqual({ Name: 'my-cluster_1' });
  });

  it("carries the guide's block devices, metadata options and a public-IP choice", () => {
    const spec = nodeClass({
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          ebs: {
            volumeSize: '100Gi',
            volumeType: 'gp3',
            iops: 3000,
            throughput: 125,
            encrypted: true,
            deleteOnTermination: true,
          },
        },
      ],
      metadataOptions: {
        httpEndpoint: 'enabled',
        httpProtocolIPv6: 'disabled',
        httpPutResponseHopLimit: 2,
        httpTokens: 'required',
      },
      associatePublicIPAddress: false,
      detailedMonitoring: true,
    }).spec;
    const d = launchTemplateData(opts({ spec, capacityType: 'spot' }));
    expect(d.BlockDeviceMappings).toEqual([
      {
        DeviceName: '/dev/xvda',
        Ebs: {
          VolumeSize: 100,
          VolumeType: 'gp3',
          Iops: 3000,
          Throughput: 125,
          Encrypted: true,
          DeleteOnTermination: true,
        },
      },
    ]);
    expect(d.MetadataOptions?.HttpPutResponseHopLimit).toBe(2);
    expect(d.NetworkInterfaces).toEqual([
      { DeviceIndex: 0, AssociatePublicIpAddress: false, Groups: ['sg-1', 'sg-2'] },
    ]);
    expect(d.SecurityGroupIds).toBeUndefined();
    expect(d.Monitoring).toEqual({ Enabled: true });
    expect(d.TagSpecifications?.map((t) => t.ResourceType)).toEqual(['network-interface', 'spot-instances-request']);
  });

  it('gives Bottlerocket its OS and data volumes and Windows a 50Gi root', () => {
    expect(
      launchTemplateData(opts({ family: 'Bottlerocket' })).BlockDeviceMappings?.map((b) => [
        b.DeviceName,
        b.Ebs?.VolumeSize,
      ]),
    ).toEqual([
      ['/dev/xvda', 4],
      ['/dev/xvdb', 20],
    ]);
    expect(
      launchTemplateData(opts({ family: 'Windows2022' })).BlockDeviceMappings?.map((b) => [
        b.DeviceName,
        b.Ebs?.VolumeSize,
      ]),
    ).toEqual([['/dev/sda1', 50]]);
  });
});

describe('LaunchTemplates', () => {
  it('creates a missing template once, then serves it from the cache', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeLaunchTemplatesCommand).rejects(notFound());
    aws.ec2
      .on(CreateLaunchTemplateCommand)
      .resolves({ LaunchTemplate: { LaunchTemplateId: 'lt-1', LaunchTemplateName: 'x' } });
    const lts = new LaunchTemplates(aws.ports.ec2, new FakeClock(), 'my-cluster');
    const a = await lts.ensure(opts());
    const b = await lts.ensure(opts());
    expect(a).toEqual({ name: launchTemplateName(opts()), id: 'lt-1' });
    expect(b).toEqual(a);
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeLaunchTemplatesCommand, 1);
    expect(aws.ec2).toHaveReceivedCommandTimes(CreateLaunchTemplateCommand, 1);
    expect(aws.ec2).toHaveReceivedCommandWith(CreateLaunchTemplateCommand, {
      LaunchTemplateName: a.name,
      TagSpecifications: [
        {
          ResourceType: 'launch-template',
          Tags: [
            { Key: 'eks:eks-cluster-name', Value: 'my-cluster' },
            { Key: 'karpenter.sh/nodepool', Value: 'default' },
          ],
        },
      ],
    });
  });

  it('reuses a template that already exists in EC2', async () => {
    const aws = mockedAws();
    aws.ec2
      .on(DescribeLaunchTemplatesCommand)
      .resolves({ LaunchTemplates: [{ LaunchTemplateId: 'lt-9', LaunchTemplateName: launchTemplateName(opts()) }] });
    const lts = new LaunchTemplates(aws.ports.ec2, new FakeClock(), 'my-cluster');
    expect(await lts.ensure(opts())).toEqual({ name: launchTemplateName(opts()), id: 'lt-9' });
    expect(aws.ec2).not.toHaveReceivedCommand(CreateLaunchTemplateCommand);
  });

  it('tolerates a concurrent creation of the same template', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeLaunchTemplatesCommand).rejects(notFound());
    aws.ec2.on(CreateLaunchTemplateCommand).rejects(
      new EC2ServiceException({
        name: 'InvalidLaunchTemplateName.AlreadyExistsException',
        $fault: 'client',
        $metadata: {},
        message: 'exists',
      }),
    );
    const lts = new LaunchTemplates(aws.ports.ec2, new FakeClock(), 'my-cluster');
    expect(await lts.ensure(opts())).toEqual({ name: launchTemplateName(opts()) });
  });

  it('deletes templates whose cache entry expired, but not those used within the minute', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [{ LaunchTemplateId: 'lt-1' }] });
    aws.ec2.on(DeleteLaunchTemplateCommand).resolves({});
    const clock = new FakeClock();
    const lts = new LaunchTemplates(aws.ports.ec2, clock, 'my-cluster');
    await lts.ensure(opts());
    await lts.ensure(opts({ imageId: 'ami-2' }));
    clock.step(50_000);
    await lts.ensure(opts()); // refreshed on use
    clock.step(20_000);
    expect(await lts.sweep()).toEqual([launchTemplateName(opts({ imageId: 'ami-2' }))]);
    expect(aws.ec2).toHaveReceivedCommandTimes(DeleteLaunchTemplateCommand, 1);
  });

  it("deletes every template of a deleted node class, found by Karpenter's tags", async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeLaunchTemplatesCommand).resolves({
      LaunchTemplates: [{ LaunchTemplateName: 'karpenter.k8s.aws/1' }, { LaunchTemplateName: 'karpenter.k8s.aws/2' }],
    });
    aws.ec2.on(DeleteLaunchTemplateCommand).resolves({});
    const lts = new LaunchTemplates(aws.ports.ec2, new FakeClock(), 'my-cluster');
    expect(await lts.deleteAll('default')).toEqual(['karpenter.k8s.aws/1', 'karpenter.k8s.aws/2']);
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeLaunchTemplatesCommand, {
      Filters: [
        { Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: ['default'] },
        { Name: 'tag:eks:eks-cluster-name', Values: ['my-cluster'] },
      ],
    });
    expect(aws.ec2).toHaveReceivedCommandTimes(DeleteLaunchTemplateCommand, 2);
  });
});
