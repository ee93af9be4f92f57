// The controller with the AWS provider, end to end: the real operator and the provider as
// `karpenter-ts controller` builds them, the simulated API server and kubelets, the AWS SDK v3 clients
// answered by a fake account, on a manual clock. The guide's EC2NodeClass and NodePool apply unchanged.
import { CreateFleetCommand, DeleteLaunchTemplateCommand, TerminateInstancesCommand, type CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import { DeleteInstanceProfileCommand } from '@aws-sdk/client-iam';
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { parseNodeClaim } from '../../engine/index.ts';
import { driftQueryOf } from '../../controller/cloudprovider/types.ts';
import { awsSimulation, type AwsSimulation } from '../support/aws-simulation.ts';
import { condition, deployment, guide } from '../support/simulation.ts';

let sim: AwsSimulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const claims = (s: AwsSimulation) => s.cluster.store.list('nodeclaims.karpenter.sh');
const podsRunning = (s: AwsSimulation, app: string) =>
  s.cluster.store.list('pods', { namespace: 'default' }).filter((p) => p.metadata.labels?.['app'] === app && (p.status as { phase?: string }).phase === 'Running' && !p.metadata.deletionTimestamp).length;
const fleetInputs = (s: AwsSimulation): CreateFleetCommandInput[] => s.account.ec2.commandCalls(CreateFleetCommand).map((c) => c.args[0].input);
const eventsOf = (s: AwsSimulation, reason: string) => s.cluster.store.list('events').filter((e) => e['reason'] === reason);

describe('the AWS provider in the controller', () => {
  it("resolves the guide's EC2NodeClass, then launches one instance through CreateFleet for a pending pod", async () => {
    sim = await awsSimulation();
    await sim.apply(guide('guide-07.yaml'));
    const nc = sim.get('EC2NodeClass', 'production')!;
    const status = nc.status as { subnets: Array<{ id: string; zone: string; zoneID: string }>; securityGroups: Array<{ id: string }>; amis: Array<{ id: string }>; instanceProfile: string };
    expect(condition(nc, 'Ready')).toMatchObject({ status: 'True' });
    for (const t of ['SubnetsReady', 'SecurityGroupsReady', 'AMIsReady', 'InstanceProfileReady', 'ValidationSucceeded']) expect(condition(nc, t)?.status, t).toBe('True');
    expect(status.subnets.map((s) => s.zone).sort()).toEqual(['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c', 'ap-northeast-2d']);
    expect(status.securityGroups).toEqual([{ id: 'sg-00000000000000001', name: 'my-cluster-node' }]);
    expect(status.amis.map((a) => a.id).sort()).toEqual(['ami-v1armstd', 'ami-v1x86gpu', 'ami-v1x86std']);
    expect(status.instanceProfile).toMatch(/^my-cluster_\d+$/);
    expect(sim.account.profiles.get(status.instanceProfile)?.Roles?.map((r) => r.RoleName)).toEqual(['KarpenterNodeRole-my-cluster']);
    expect(nc.metadata.finalizers).toEqual(['karpenter.k8s.aws/termination']);
    expect(nc.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash-version']).toBe('kts-v1');
    expect(condition(sim.get('NodePool', 'production')!, 'Ready')?.status).toBe('True');

    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => podsRunning(sim!, 'web') === 1, 180_000, 'web running');
    const fleets = fleetInputs(sim);
    expect(fleets).toHaveLength(1);
    const fleet = fleets[0]!;
    expect(fleet).toMatchObject({ Type: 'instant', TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' }, OnDemandOptions: { AllocationStrategy: 'lowest-price' } });
    const overrides = fleet.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
    // guide-07: c/m/r, generation > 5, amd64, zones a-c: of the account's types m7i-flex.large and m6idn.32xlarge.
    expect(new Set(overrides.map((o) => o.InstanceType))).toEqual(new Set(['m7i-flex.large', 'm6idn.32xlarge']));
    expect(new Set(overrides.map((o) => o.AvailabilityZone))).toEqual(new Set(['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c']));
    expect(overrides.every((o) => o.ImageId === 'ami-v1x86std' && (o.Priority ?? 0) > 0)).toBe(true);
    const tags = Object.fromEntries(fleet.TagSpecifications!.find((t) => t.ResourceType === 'instance')!.Tags!.map((t) => [t.Key, t.Value]));
    expect(tags).toEqual({
      Environment: 'production', ManagedBy: 'karpenter', 'kubernetes.io/cluster/my-cluster': 'owned', 'karpenter.sh/nodepool': 'production',
      'eks:eks-cluster-name': 'my-cluster', 'karpenter.k8s.aws/ec2nodeclass': 'production',
    });

    const [claim] = claims(sim);
    const providerID = (claim!.status as { providerID: string }).providerID;
    const [instance] = [...sim.account.instances.values()];
    expect(providerID).toBe(`aws:///${instance!.Placement!.AvailabilityZone}/${instance!.InstanceId}`);
    expect(instance!.InstanceType).toBe('m7i-flex.large');
    expect(claim!.metadata.labels).toMatchObject({ 'node.kubernetes.io/instance-type': 'm7i-flex.large', 'karpenter.sh/capacity-type': 'on-demand', 'karpenter.sh/nodepool': 'production' });
    expect(claim!.metadata.annotations?.['karpenter.k8s.aws/instance-profile-name']).toBe(status.instanceProfile);
    expect(condition(claim!, 'Initialized')?.status).toBe('True');
  });
});
