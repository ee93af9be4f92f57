import {
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  DescribeImagesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSpotPriceHistoryCommand,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import { GetInstanceProfileCommand, IAMServiceException } from '@aws-sdk/client-iam';
import { GetProductsCommand } from '@aws-sdk/client-pricing';
import { GetParameterCommand, ParameterNotFound } from '@aws-sdk/client-ssm';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { mockedAws } from '../../../test/fakes/aws.ts';
import { pricingRegion } from './sdk-clients.ts';

const ec2Error = (name: string) =>
  new EC2ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: 400 }, message: name });

describe('SDK-backed ports', () => {
  it('pages DescribeInstanceTypes 100 at a time with the given filters and returns every page', async () => {
    const aws = mockedAws();
    // Pages keyed by the token the paginator sends (the SDK reuses one input object, so the recorded
    // calls cannot show each token: we record it at send time instead).
    const pages: Record<string, { InstanceTypes: { InstanceType: string }[]; NextToken?: string }> = {
      '': { InstanceTypes: [{ InstanceType: 'm5.large' }, { InstanceType: 'm5.xlarge' }], NextToken: 'p2' },
      p2: { InstanceTypes: [{ InstanceType: 'c6g.large' }], NextToken: 'p3' },
      p3: { InstanceTypes: [{ InstanceType: 't3.large' }] },
    };
    const sent: Array<string | undefined> = [];
    aws.ec2.on(DescribeInstanceTypesCommand).callsFake((input: { NextToken?: string; MaxResults?: number }) => {
      sent.push(input.NextToken);
      expect(input.MaxResults).toBe(100);
      return pages[input.NextToken ?? '']!;
    });
    const filters = [{ Name: 'supported-virtualization-type', Values: ['hvm'] }];
    const got = await aws.ports.ec2.describeInstanceTypes(filters);
    expect(got.map((t) => t.InstanceType)).toEqual(['m5.large', 'm5.xlarge', 'c6g.large', 't3.large']);
    expect(sent).toEqual([undefined, 'p2', 'p3']);
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeInstanceTypesCommand, { Filters: filters });
  });

  it('pages DescribeInstanceTypeOfferings by availability zone, 1000 at a time', async () => {
    const aws = mockedAws();
    aws.ec2
      .on(DescribeInstanceTypeOfferingsCommand)
      .resolvesOnce({ InstanceTypeOfferings: [{ InstanceType: 'm5.large', Location: 'us-west-2a' }], NextToken: 'n' })
      .resolvesOnce({ InstanceTypeOfferings: [{ InstanceType: 'm5.large', Location: 'us-west-2b' }] });
    const got = await aws.ports.ec2.describeInstanceTypeOfferings();
    expect(got.map((o) => o.Location)).toEqual(['us-west-2a', 'us-west-2b']);
    expect(aws.ec2).toHaveReceivedNthCommandWith(DescribeInstanceTypeOfferingsCommand, 1, {
      LocationType: 'availability-zone',
      MaxResults: 1000,
    });
  });

  it('pages DescribeSpotPriceHistory 2000 at a time from the given start time', async () => {
    const aws = mockedAws();
    const start = new Date('2026-08-21T12:00:00Z');
    aws.ec2
      .on(DescribeSpotPriceHistoryCommand)
      .resolvesOnce({
        SpotPriceHistory: [{ InstanceType: 'm5.large', AvailabilityZone: 'a', SpotPrice: '0.04' }],
        NextToken: 'n',
      })
      .resolvesOnce({ SpotPriceHistory: [{ InstanceType: 'm5.large', AvailabilityZone: 'b', SpotPrice: '0.05' }] });
    const got = await aws.ports.ec2.describeSpotPriceHistory({ productDescriptions: ['Linux/UNIX'], startTime: start });
    expect(got).toHaveLength(2);
    expect(aws.ec2).toHaveReceivedNthCommandWith(DescribeSpotPriceHistoryCommand, 1, {
      ProductDescriptions: ['Linux/UNIX'],
      StartTime: start,
      MaxResults: 2000,
    });
  });

  it('pages GetProducts with TERM_MATCH filters and returns the PriceList strings', async () => {
    const aws = mockedAws();
    aws.pricing
      .on(GetProductsCommand)
      .resolvesOnce({ PriceList: ['{"a":1}'], NextToken: 'n' })
      .resolvesOnce({ PriceList: ['{"b":2}'] });
    const got = await aws.ports.pricing.getProducts([{ field: 'regionCode', value: 'us-west-2' }]);
    expect(got).toEqual(['{"a":1}', '{"b":2}']);
    expect(aws.pricing).toHaveReceivedNthCommandWith(GetProductsCommand, 1, {
      ServiceCode: 'AmazonEC2',
      MaxResults: 100,
      Filters: [{ Field: 'regionCode', Type: 'TERM_MATCH', Value: 'us-west-2' }],
    });
  });

  it('flattens the reservations of DescribeInstances', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeInstancesCommand).resolves({
      Reservations: [
        { Instances: [{ InstanceId: 'i-1' }] },
        { Instances: [{ InstanceId: 'i-2' }, { InstanceId: 'i-3' }] },
      ],
    });
    expect((await aws.ports.ec2.describeInstances({ instanceIds: ['i-1'] })).map((i) => i.InstanceId)).toEqual([
      'i-1',
      'i-2',
      'i-3',
    ]);
  });

  it('includes deprecated images when describing AMIs', async () => {
    const aws = mockedAws();
    aws.ec2.on(DescribeImagesCommand).resolves({ Images: [{ ImageId: 'ami-1' }] });
    await aws.ports.ec2.describeImages({ filters: [{ Name: 'name', Values: ['x'] }], owners: ['self'] });
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeImagesCommand, { IncludeDeprecated: true, Owners: ['self'] });
  });

  it('answers undefined for a missing SSM parameter, launch template or instance profile', async () => {
    const aws = mockedAws();
    aws.ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ $metadata: {}, message: 'nope' }));
    aws.ec2.on(DescribeLaunchTemplatesCommand).rejects(ec2Error('InvalidLaunchTemplateName.NotFoundException'));
    aws.iam
      .on(GetInstanceProfileCommand)
      .rejects(new IAMServiceException({ name: 'NoSuchEntity', $fault: 'client', $metadata: {}, message: 'no' }));
    expect(await aws.ports.ssm.getParameter('/aws/service/x')).toBeUndefined();
    expect(await aws.ports.ec2.describeLaunchTemplate('karpenter.k8s.aws/1')).toBeUndefined();
    expect(await aws.ports.iam.getInstanceProfile('p')).toBeUndefined();
  });

  it('rethrows errors that are not about absence', async () => {
    const aws = mockedAws();
    aws.ssm.on(GetParameterCommand).rejects(ec2Error('AccessDeniedException'));
    aws.ec2.on(CreateLaunchTemplateCommand).rejects(ec2Error('UnauthorizedOperation'));
    await expect(aws.ports.ssm.getParameter('/x')).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(
      aws.ports.ec2.createLaunchTemplate({ LaunchTemplateName: 'n', LaunchTemplateData: {} }),
    ).rejects.toMatchObject({ name: 'UnauthorizedOperation' });
  });

  it('treats deleting an already deleted launch template as done', async () => {
    const aws = mockedAws();
    aws.ec2.on(DeleteLaunchTemplateCommand).rejects(ec2Error('InvalidLaunchTemplateName.NotFoundException'));
    await expect(aws.ports.ec2.deleteLaunchTemplate('karpenter.k8s.aws/1')).resolves.toBeUndefined();
  });
});

describe('pricingRegion', () => {
  it('chooses the Pricing API endpoint by the region prefix', () => {
    expect(pricingRegion('ap-northeast-2')).toBe('ap-south-1');
    expect(pricingRegion('cn-north-1')).toBe('cn-northwest-1');
    expect(pricingRegion('eu-west-1')).toBe('eu-central-1');
    expect(pricingRegion('us-west-2')).toBe('us-east-1');
    expect(pricingRegion('sa-east-1')).toBe('us-east-1');
  });
});
