// The fake AWS account answers as the services do where the controller could get it wrong: a launch from a
// template that does not exist, a second role on an instance profile, a role or profile that is not there, tags
// for an unknown instance. Each is an error that names what is missing, never a quiet success the end-to-end
// tests would then trust.
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  CreateTagsCommand,
  DescribeInstancesCommand,
  type CreateFleetCommandInput,
} from '@aws-sdk/client-ec2';
import {
  AddRoleToInstanceProfileCommand,
  CreateInstanceProfileCommand,
  DeleteInstanceProfileCommand,
  GetInstanceProfileCommand,
  RemoveRoleFromInstanceProfileCommand,
} from '@aws-sdk/client-iam';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../sim/clock.ts';
import { FakeAwsAccount } from './aws-account.ts';

function account(): FakeAwsAccount {
  return new FakeAwsAccount({ region: 'us-west-2', clusterName: 'c', clock: manualClock(), zones: ['us-west-2a'] });
}

/** A fleet of `count` from launch template `template`, offering two overrides (the cheaper m5.large first by
 * Priority, though listed second). */
function fleet(template: string, count = 1): CreateFleetCommandInput {
  const ov = (InstanceType: 'm5.large' | 'm5.xlarge', Priority: number) => ({
    InstanceType,
    Priority,
    SubnetId: 'subnet-1',
    ImageId: 'ami-1',
    AvailabilityZone: 'us-west-2a',
  });
  return {
    Type: 'instant',
    TargetCapacitySpecification: { TotalTargetCapacity: count, DefaultTargetCapacityType: 'on-demand' },
    LaunchTemplateConfigs: [
      {
        LaunchTemplateSpecification: { LaunchTemplateName: template, Version: '$Latest' },
        Overrides: [ov('m5.xlarge', 0.2), ov('m5.large', 0.1)],
      },
    ],
    TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'owner', Value: 'test' }] }],
  };
}

describe('the fake AWS account', () => {
  it('launches the lowest-Priority override from a template it has, and refuses one it does not have', async () => {
    const a = account();
    const ec2 = a.clients.ec2;
    const missing = await ec2.send(new CreateFleetCommand(fleet('nope')));
    expect(missing.Instances).toEqual([]);
    expect(missing.Errors?.[0]?.ErrorCode).toBe('InvalidLaunchTemplateName.NotFoundException');
    expect(missing.Errors?.[0]?.ErrorMessage).toMatch(/LaunchTemplateName: launch template "nope" does not exist/);
    expect(a.instances.size).toBe(0);

    await ec2.send(
      new CreateLaunchTemplateCommand({ LaunchTemplateName: 'lt', LaunchTemplateData: { SecurityGroupIds: ['sg-1'] } }),
    );
    const out = await ec2.send(new CreateFleetCommand(fleet('lt', 2)));
    expect(out.Errors).toEqual([]);
    const ids = out.Instances?.[0]?.InstanceIds ?? [];
    expect(ids).toHaveLength(2);
    const described = await ec2.send(new DescribeInstancesCommand({ InstanceIds: ids }));
    for (const i of described.Reservations?.[0]?.Instances ?? []) {
      expect(i.InstanceType).toBe('m5.large');
      expect(i.SecurityGroups).toEqual([{ GroupId: 'sg-1' }]);
      expect(i.Tags).toEqual([{ Key: 'owner', Value: 'test' }]);
      expect(i.State?.Name).toBe('pending');
    }
  });

  it('tags no instance when one of the resources is unknown', async () => {
    const a = account();
    const ec2 = a.clients.ec2;
    await ec2.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: 'lt', LaunchTemplateData: {} }));
    const id = (await ec2.send(new CreateFleetCommand(fleet('lt')))).Instances?.[0]?.InstanceIds?.[0] ?? '';
    await expect(
      ec2.send(new CreateTagsCommand({ Resources: [id, 'i-0missing'], Tags: [{ Key: 'k', Value: 'v' }] })),
    ).rejects.toMatchObject({ name: 'InvalidInstanceID.NotFound', message: /'i-0missing' does not exist/ });
    expect(a.instances.get(id)?.Tags).toEqual([{ Key: 'owner', Value: 'test' }]);
  });

  it('holds one role an instance profile, and deletes a profile only once its role is removed', async () => {
    const iam = account().clients.iam;
    const InstanceProfileName = 'p';
    await iam.send(new CreateInstanceProfileCommand({ InstanceProfileName, Path: '/c/' }));
    await expect(iam.send(new CreateInstanceProfileCommand({ InstanceProfileName }))).rejects.toMatchObject({
      name: 'EntityAlreadyExists',
    });
    await iam.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName, RoleName: 'a' }));
    await expect(
      iam.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName, RoleName: 'b' })),
    ).rejects.toMatchObject({ name: 'LimitExceeded', message: /instance profile p already holds role a/ });
    await expect(
      iam.send(new RemoveRoleFromInstanceProfileCommand({ InstanceProfileName, RoleName: 'b' })),
    ).rejects.toMatchObject({ name: 'NoSuchEntity', message: /instance profile p holds no role b/ });
    await expect(iam.send(new DeleteInstanceProfileCommand({ InstanceProfileName }))).rejects.toMatchObject({
      name: 'DeleteConflict',
      message: /instance profile p still holds role a/,
    });
    await iam.send(new RemoveRoleFromInstanceProfileCommand({ InstanceProfileName, RoleName: 'a' }));
    await iam.send(new DeleteInstanceProfileCommand({ InstanceProfileName }));
    await expect(iam.send(new GetInstanceProfileCommand({ InstanceProfileName }))).rejects.toMatchObject({
      name: 'NoSuchEntity',
    });
  });
});
