import { DescribeImagesCommand } from '@aws-sdk/client-ec2';
import { GetParameterCommand, ParameterNotFound } from '@aws-sdk/client-ssm';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { FakeClock, mockedAws, nodeClass } from '../../../../test/fakes/aws.ts';
import { TtlCache } from '../ttl-cache.ts';
import { AmiResolutionError, resolveAmis } from './amis.ts';

const notFound = () => new ParameterNotFound({ $metadata: {}, message: 'not found' });
const NOW = Date.parse('2026-08-21T12:00:00Z');

function withParameters(values: Record<string, string>) {
  const aws = mockedAws();
  aws.ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
    const v = values[input.Name];
    if (v === undefined) throw notFound();
    return { Parameter: { Name: input.Name, Value: v } };
  });
  return aws;
}

describe('resolveAmis by alias', () => {
  it('reads the SSM parameters that exist, skips the missing ones, and labels each image with its variant', async () => {
    const base = '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023';
    const aws = withParameters({
      [`${base}/x86_64/standard/recommended/image_id`]: 'ami-x86',
      [`${base}/arm64/standard/recommended/image_id`]: 'ami-arm',
      [`${base}/x86_64/nvidia/recommended/image_id`]: 'ami-gpu',
    });
    aws.ec2.on(DescribeImagesCommand).resolves({
      Images: [
        { ImageId: 'ami-x86', Architecture: 'x86_64', Name: 'std', CreationDate: '2026-08-01T00:00:00Z' },
        { ImageId: 'ami-arm', Architecture: 'arm64', Name: 'arm', CreationDate: '2026-08-01T00:00:00Z' },
        { ImageId: 'ami-gpu', Architecture: 'x86_64', Name: 'gpu', CreationDate: '2026-08-01T00:00:00Z' },
      ],
    });
    const amis = await resolveAmis(nodeClass(), {
      ec2: aws.ports.ec2,
      ssm: aws.ports.ssm,
      kubernetesVersion: '1.31',
      now: NOW,
    });
    expect(aws.ssm).toHaveReceivedCommandTimes(GetParameterCommand, 5);
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeImagesCommand, {
      Filters: [{ Name: 'image-id', Values: ['ami-x86', 'ami-gpu', 'ami-arm'] }],
    });
    const byId = Object.fromEntries(amis.map((a) => [a.id, a.requirements]));
    expect(byId['ami-gpu']).toContainEqual({ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' });
    expect(byId['ami-arm']).toContainEqual({ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] });
    expect(byId['ami-x86']).toContainEqual({
      key: 'karpenter.k8s.aws/instance-accelerator-count',
      operator: 'DoesNotExist',
    });
  });

  it('gives one AMI entry per variant an image serves (the AL2 gpu image: nvidia and neuron)', async () => {
    const aws = withParameters({
      '/aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/recommended/image_id': 'ami-gpu',
    });
    aws.ec2.on(DescribeImagesCommand).resolves({ Images: [{ ImageId: 'ami-gpu', Architecture: 'x86_64' }] });
    const amis = await resolveAmis(nodeClass({ amiSelectorTerms: [{ alias: 'al2@latest' }] }), {
      ec2: aws.ports.ec2,
      ssm: aws.ports.ssm,
      kubernetesVersion: '1.29',
      now: NOW,
    });
    expect(amis.map((a) => a.id)).toEqual(['ami-gpu', 'ami-gpu']);
    expect(amis.flatMap((a) => a.requirements.filter((r) => r.operator === 'Exists').map((r) => r.key)).sort()).toEqual(
      ['karpenter.k8s.aws/instance-accelerator-count', 'karpenter.k8s.aws/instance-gpu-count'],
    );
  });

  it('fails with the parameter paths when no SSM parameter of the alias exists', async () => {
    const aws = withParameters({});
    const p = resolveAmis(nodeClass({ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }] }), {
      ec2: aws.ports.ec2,
      ssm: aws.ports.ssm,
      kubernetesVersion: '1.31',
      now: NOW,
    });
    await expect(p).rejects.toBeInstanceOf(AmiResolutionError);
    await expect(p).rejects.toThrow(
      /bottlerocket@latest.*\/aws\/service\/bottlerocket\/aws-k8s-1\.31\/x86_64\/latest\/image_id/,
    );
    expect(aws.ec2).not.toHaveReceivedCommand(DescribeImagesCommand);
  });

  it('caches SSM values', async () => {
    const aws = withParameters({
      '/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id': 'ami-win',
    });
    aws.ec2.on(DescribeImagesCommand).resolves({ Images: [{ ImageId: 'ami-win', Architecture: 'x86_64' }] });
    const ssmCache = new TtlCache<string, string>(new FakeClock(), 86_400_000);
    const deps = { ec2: aws.ports.ec2, ssm: aws.ports.ssm, kubernetesVersion: '1.31', now: NOW, ssmCache };
    const nc = nodeClass({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] });
    const [first] = await resolveAmis(nc, deps);
    await resolveAmis(nc, deps);
    expect(aws.ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
    expect(first?.requirements).toContainEqual({ key: 'kubernetes.io/os', operator: 'In', values: ['windows'] });
  });
});

describe('resolveAmis by terms', () => {
  it('picks the newest non-deprecated image per requirement set', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeImagesCommand).resolves({
      Images: [
        { ImageId: 'ami-old', Architecture: 'x86_64', Name: 'custom-1', CreationDate: '2026-01-01T00:00:00Z' },
        { ImageId: 'ami-new', Architecture: 'x86_64', Name: 'custom-2', CreationDate: '2026-06-01T00:00:00Z' },
        {
          ImageId: 'ami-newest-deprecated',
          Architecture: 'x86_64',
          Name: 'custom-3',
          CreationDate: '2026-08-01T00:00:00Z',
          DeprecationTime: '2026-08-10T00:00:00Z',
        },
        { ImageId: 'ami-arm', Architecture: 'arm64', Name: 'custom-arm', CreationDate: '2025-01-01T00:00:00Z' },
      ],
    });
    const nc = nodeClass({
      amiFamily: 'AL2023',
      amiSelectorTerms: [{ tags: { environment: 'production', 'ami-type': 'custom-al2023' } }],
    });
    const amis = await resolveAmis(nc, { ec2: aws.ports.ec2, ssm: aws.ports.ssm, kubernetesVersion: '1.31', now: NOW });
    expect(amis.map((a) => a.id)).toEqual(['ami-new', 'ami-arm']);
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeImagesCommand, {
      Filters: [
        { Name: 'tag:environment', Values: ['production'] },
        { Name: 'tag:ami-type', Values: ['custom-al2023'] },
      ],
    });
  });

  it('searches names under self and amazon unless an owner is given, and merges ids', async () => {
    const aws = mockedAws();
    aws.ec2
      .on(DescribeImagesCommand)
      .resolves({ Images: [{ ImageId: 'ami-0123456789abcdef0', Architecture: 'x86_64' }] });
    const nc = nodeClass({
      amiFamily: 'Custom',
      amiSelectorTerms: [
        { id: 'ami-0123456789abcdef0' },
        { name: 'my-ami-*' },
        { name: 'theirs', owner: '123456789012' },
      ],
    });
    await resolveAmis(nc, { ec2: aws.ports.ec2, ssm: aws.ports.ssm, kubernetesVersion: '1.31', now: NOW });
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeImagesCommand, {
      Filters: [{ Name: 'image-id', Values: ['ami-0123456789abcdef0'] }],
    });
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeImagesCommand, {
      Filters: [{ Name: 'name', Values: ['my-ami-*'] }],
      Owners: ['self', 'amazon'],
    });
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeImagesCommand, {
      Filters: [{ Name: 'name', Values: ['theirs'] }],
      Owners: ['123456789012'],
    });
  });

  it('reads an ssmParameter term and refuses a value that is not an AMI id', async () => {
    const aws = withParameters({ '/my/ami': 'ami-fromssm', '/my/bad': 'hello' });
    aws.ec2.on(DescribeImagesCommand).resolves({ Images: [{ ImageId: 'ami-fromssm', Architecture: 'arm64' }] });
    const deps = { ec2: aws.ports.ec2, ssm: aws.ports.ssm, kubernetesVersion: '1.31', now: NOW };
    expect(
      (
        await resolveAmis(nodeClass({ amiFamily: 'AL2023', amiSelectorTerms: [{ ssmParameter: '/my/ami' }] }), deps)
      ).map((a) => a.id),
    ).toEqual(['ami-fromssm']);
    await expect(
      resolveAmis(nodeClass({ amiFamily: 'AL2023', amiSelectorTerms: [{ ssmParameter: '/my/bad' }] }), deps),
    ).rejects.toThrow(/not an AMI id/);
    await expect(
      resolveAmis(nodeClass({ amiFamily: 'AL2023', amiSelectorTerms: [{ ssmParameter: '/my/missing' }] }), deps),
    ).rejects.toThrow(/\/my\/missing does not exist/);
  });

  it('caches a user ssmParameter for 5 minutes only', async () => {
    const aws = withParameters({ '/my/ami': 'ami-fromssm' });
    aws.ec2.on(DescribeImagesCommand).resolves({ Images: [{ ImageId: 'ami-fromssm', Architecture: 'x86_64' }] });
    const clock = new FakeClock();
    const deps = {
      ec2: aws.ports.ec2,
      ssm: aws.ports.ssm,
      kubernetesVersion: '1.31',
      now: NOW,
      ssmCache: new TtlCache<string, string>(clock, 86_400_000),
    };
    const nc = nodeClass({ amiFamily: 'AL2023', amiSelectorTerms: [{ ssmParameter: '/my/ami' }] });
    await resolveAmis(nc, deps);
    clock.step(4 * 60_000);
    await resolveAmis(nc, deps);
    expect(aws.ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
    clock.step(60_000);
    await resolveAmis(nc, deps);
    expect(aws.ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
  });

  it('names the terms when nothing matches', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeImagesCommand).resolves({ Images: [] });
    await expect(
      resolveAmis(nodeClass({ amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] }), {
        ec2: aws.ports.ec2,
        ssm: aws.ports.ssm,
        kubernetesVersion: '1.31',
        now: NOW,
      }),
    ).rejects.toThrow('no AMI matches amiSelectorTerms [{id: ami-0123456789abcdef0}]');
  });
});
