// The controller with the AWS provider, end to end: the real operator and the provider as
// `karpenter-ts controller` builds them, the simulated API server and kubelets, the AWS SDK v3 clients
// answered by a fake account, on a manual clock. The guide's EC2NodeClass and NodePool apply unchanged.
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  TerminateInstancesCommand,
  type CreateFleetCommandInput,
} from '@aws-sdk/client-ec2';
import { DeleteInstanceProfileCommand } from '@aws-sdk/client-iam';
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseNodeClaim } from '../../engine/index.ts';
import { withMetrics } from '../../controller/cloudprovider/metrics.ts';
import { driftQueryOf } from '../../controller/cloudprovider/types.ts';
import { calledInCode, chartRules, requested } from '../deploy/rbac.ts';
import { awsSimulation, CLUSTER_CA, CLUSTER_ENDPOINT, type AwsSimulation } from '../support/aws-simulation.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import { condition, deployment, guide } from '../support/environment.ts';

let sim: AwsSimulation | undefined;

// RBAC truth: every request the controller sent to the API server in these runs is granted by the chart's
// ClusterRole (nothing here is namespaced to the release namespace), and is one the code reader of
// test/deploy/rbac.ts found (so its static table cannot miss what a real run does).
const roles = chartRules();
const inCode = new Set(calledInCode().calls.map((c) => c.triple));
const seen = new Set<string>();
afterEach(async () => {
  if (sim) {
    const requests = requested(sim.controllerRequests());
    expect(requests.filter((r) => !roles.clusterRole.has(r.triple)).map((r) => `${r.triple} ${r.path}`)).toEqual([]);
    expect([...new Set(requests.map((r) => r.triple))].filter((t) => !inCode.has(t))).toEqual([]);
    for (const r of requests) seen.add(r.triple);
  }
  await sim?.close();
  sim = undefined;
});
afterAll(() => {
  // The runs above exercised the writes that matter, so the check above was not vacuous.
  const exercised = [
    'karpenter.sh|nodeclaims|create',
    'karpenter.sh|nodeclaims/status|patch',
    'karpenter.sh|nodeclaims|delete',
    'karpenter.k8s.aws|ec2nodeclasses/status|patch',
    'karpenter.k8s.aws|ec2nodeclasses|patch',
    '|nodes|patch',
    '|nodes|delete',
    '|pods/eviction|create',
    '|events|create',
    '|pods|watch',
  ];
  if (seen.size) expect(exercised.filter((t) => !seen.has(t))).toEqual([]);
});

const claims = (s: AwsSimulation) => s.cluster.store.list('nodeclaims.karpenter.sh');
const podsRunning = (s: AwsSimulation, app: string) =>
  s.cluster.store
    .list('pods', { namespace: 'default' })
    .filter(
      (p) =>
        p.metadata.labels?.['app'] === app &&
        (p.status as { phase?: string }).phase === 'Running' &&
        !p.metadata.deletionTimestamp,
    ).length;
const fleetInputs = (s: AwsSimulation): CreateFleetCommandInput[] =>
  s.account.ec2.commandCalls(CreateFleetCommand).map((c) => c.args[0].input);
/** The class selects one AMI by id (an id term needs amiFamily; AL2023 is what the alias resolved to). */
const withAmi = (yaml: string, id: string) =>
  yaml.replace(
    '  amiSelectorTerms:\n    - alias: al2023@latest',
    `  amiFamily: AL2023\n  amiSelectorTerms:\n    - id: ${id}`,
  );
const eventsOf = (s: AwsSimulation, reason: string) =>
  s.cluster.store.list('events').filter((e) => e['reason'] === reason);

/** The node class resolved everything from the fake account and is Ready; returns its instance profile's name. */
function expectResolvedNodeClass(s: AwsSimulation, name: string): string {
  const nc = s.get('EC2NodeClass', name)!;
  const status = nc.status as {
    subnets: Array<{ id: string; zone: string; zoneID: string }>;
    securityGroups: Array<{ id: string }>;
    amis: Array<{ id: string }>;
    instanceProfile: string;
  };
  expect(condition(nc, 'Ready')).toMatchObject({ status: 'True' });
  for (const t of ['SubnetsReady', 'SecurityGroupsReady', 'AMIsReady', 'InstanceProfileReady', 'ValidationSucceeded'])
    expect(condition(nc, t)?.status, t).toBe('True');
  expect(status.subnets.map((sn) => sn.zone).sort()).toEqual([
    'ap-northeast-2a',
    'ap-northeast-2b',
    'ap-northeast-2c',
    'ap-northeast-2d',
  ]);
  expect(status.securityGroups).toEqual([{ id: 'sg-00000000000000001', name: 'my-cluster-node' }]);
  expect(status.amis.map((a) => a.id).sort()).toEqual(['ami-v1armstd', 'ami-v1x86gpu', 'ami-v1x86std']);
  expect(status.instanceProfile).toMatch(/^my-cluster_\d+$/);
  expect(s.account.profiles.get(status.instanceProfile)?.Roles?.map((r) => r.RoleName)).toEqual([
    'KarpenterNodeRole-my-cluster',
  ]);
  expect(nc.metadata.finalizers).toEqual(['karpenter.k8s.aws/termination']);
  expect(nc.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash-version']).toBe('kts-v1');
  return status.instanceProfile;
}

/** One instant on-demand CreateFleet for guide-07's NodePool: its types, zones, AMI and tags. */
function expectOneGuide07Fleet(s: AwsSimulation): void {
  const fleets = fleetInputs(s);
  expect(fleets).toHaveLength(1);
  const fleet = fleets[0]!;
  expect(fleet).toMatchObject({
    Type: 'instant',
    TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' },
    OnDemandOptions: { AllocationStrategy: 'lowest-price' },
  });
  const overrides = fleet.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
  // guide-07: c/m/r, generation > 5, amd64, zones a-c: of the account's types m7i-flex.large and m6idn.32xlarge.
  expect(new Set(overrides.map((o) => o.InstanceType))).toEqual(new Set(['m7i-flex.large', 'm6idn.32xlarge']));
  expect(new Set(overrides.map((o) => o.AvailabilityZone))).toEqual(
    new Set(['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c']),
  );
  expect(overrides.every((o) => o.ImageId === 'ami-v1x86std' && (o.Priority ?? 0) > 0)).toBe(true);
  const tags = Object.fromEntries(
    fleet.TagSpecifications!.find((t) => t.ResourceType === 'instance')!.Tags!.map((t) => [t.Key, t.Value]),
  );
  expect(tags).toEqual({
    Environment: 'production',
    ManagedBy: 'karpenter',
    'kubernetes.io/cluster/my-cluster': 'owned',
    'karpenter.sh/nodepool': 'production',
    'eks:eks-cluster-name': 'my-cluster',
    'karpenter.k8s.aws/ec2nodeclass': 'production',
  });
}

/** The launch template's user data carries what the options gave: endpoint, CA, service CIDR (nodeadm). */
function expectUserData(s: AwsSimulation, profile: string): void {
  const templates = s.account.ec2.commandCalls(CreateLaunchTemplateCommand).map((c) => c.args[0].input);
  expect(templates.length).toBeGreaterThan(0);
  const userData = Buffer.from(templates[0]!.LaunchTemplateData!.UserData!, 'base64').toString();
  expect(userData).toContain(`apiServerEndpoint: ${CLUSTER_ENDPOINT}`);
  expect(userData).toContain(`certificateAuthority: ${CLUSTER_CA}`);
  expect(userData).toContain('cidr: 10.100.0.0/16');
  expect(templates[0]!.LaunchTemplateData!.IamInstanceProfile).toEqual({ Name: profile });
}

/** The one NodeClaim names the one instance, with its type's labels, and is Initialized. */
function expectLaunchedClaim(s: AwsSimulation, profile: string): { claim: KObject; instanceId: string } {
  const [claim] = claims(s);
  const providerID = (claim!.status as { providerID: string }).providerID;
  const [instance] = [...s.account.instances.values()];
  expect(providerID).toBe(`aws:///${instance!.Placement!.AvailabilityZone}/${instance!.InstanceId}`);
  expect(instance!.InstanceType).toBe('m7i-flex.large');
  expect(claim!.metadata.labels).toMatchObject({
    'node.kubernetes.io/instance-type': 'm7i-flex.large',
    'karpenter.sh/capacity-type': 'on-demand',
    'karpenter.sh/nodepool': 'production',
  });
  expect(claim!.metadata.annotations?.['karpenter.k8s.aws/instance-profile-name']).toBe(profile);
  expect(condition(claim!, 'Initialized')?.status).toBe('True');
  return { claim: claim!, instanceId: instance!.InstanceId! };
}

/** guide-07 with its node class selecting capacity reservation `id` and its NodePool allowing reserved capacity. */
const guide07Reserving = (id: string): string =>
  guide('guide-07.yaml')
    .replace(
      '  tags:\n    Environment: production',
      `  capacityReservationSelectorTerms:\n    - id: ${id}\n  tags:\n    Environment: production`,
    )
    .replace("values: ['on-demand']", "values: ['reserved', 'on-demand']");

/** What each fleet's (first) launch template says of capacity reservations. */
function reservationTargets(s: AwsSimulation, fleets: readonly CreateFleetCommandInput[]) {
  const lts = new Map(
    s.account.ec2
      .commandCalls(CreateLaunchTemplateCommand)
      .map((c) => [c.args[0].input.LaunchTemplateName, c.args[0].input.LaunchTemplateData!]),
  );
  return fleets.map(
    (f) =>
      lts.get(f.LaunchTemplateConfigs![0]!.LaunchTemplateSpecification!.LaunchTemplateName)
        ?.CapacityReservationSpecification,
  );
}

describe('the AWS provider in the controller', () => {
  it("resolves the guide's EC2NodeClass, then launches one instance through CreateFleet for a pending pod", async () => {
    sim = await awsSimulation();
    await sim.apply(guide('guide-07.yaml'));
    const profile = expectResolvedNodeClass(sim, 'production');
    expect(condition(sim.get('NodePool', 'production')!, 'Ready')?.status).toBe('True');

    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => podsRunning(sim!, 'web') === 1, 180_000, 'web running');
    expectOneGuide07Fleet(sim);
    expectUserData(sim, profile);
    const { claim, instanceId } = expectLaunchedClaim(sim, profile);

    // nodeclaim.tagging: once registered, the instance carries its node's name and its NodeClaim.
    const nodeName = (claim.status as { nodeName: string }).nodeName;
    const tagsOf = () => sim!.account.tagsOf(instanceId);
    await sim.clock.advanceUntil(() => tagsOf()['Name'] === nodeName, 10_000, 'instance tagged');
    expect(tagsOf()).toMatchObject({
      Name: nodeName,
      'karpenter.sh/nodeclaim': claim.metadata.name,
      'eks:eks-cluster-name': 'my-cluster',
    });
    expect(claims(sim)[0]!.metadata.annotations).toMatchObject({
      'karpenter.k8s.aws/tagged': 'true',
      'compatibility.karpenter.k8s.aws/cluster-name-tagged': 'true',
    });
  });

  it('reports a selector that matches no subnet on the EC2NodeClass and its NodePool, and recovers once the subnets are tagged', async () => {
    // The guide's §13 first cause: the subnets lack the network-type=private tag the class selects.
    sim = await awsSimulation({ account: { subnetTags: { 'karpenter.sh/discovery': 'my-cluster' } } });
    await sim.apply(guide('guide-07.yaml'));
    const nc = sim.get('EC2NodeClass', 'production')!;
    expect(condition(nc, 'SubnetsReady')).toMatchObject({ status: 'False', reason: 'SubnetsNotFound' });
    expect(condition(nc, 'SubnetsReady')?.message).toContain('karpenter.sh/discovery=<cluster name>');
    expect(condition(nc, 'Ready')).toMatchObject({ status: 'False', reason: 'UnhealthyDependents' });
    expect(condition(nc, 'Ready')?.message).toMatch(
      /^SubnetsReady=False \(subnetSelectorTerms \[.*network-type.*\] matched no subnets/,
    );
    expect((nc.status as { subnets: unknown[] }).subnets).toEqual([]);
    const pool = sim.get('NodePool', 'production')!;
    expect(condition(pool, 'NodeClassReady')).toMatchObject({ status: 'False', reason: 'UnhealthyDependents' });
    expect(condition(pool, 'Ready')).toMatchObject({ status: 'False', message: 'NodeClassReady is False' });
    expect(eventsOf(sim, 'SubnetsNotFound').map((e) => (e['involvedObject'] as { name: string }).name)).toEqual([
      'production',
    ]);

    await sim.apply(deployment('web', 1));
    await sim.clock.advance(30_000);
    expect(fleetInputs(sim)).toEqual([]);
    expect(
      eventsOf(sim, 'FailedScheduling').some((e) =>
        String(e['message']).includes('production (NodeClassReady is False'),
      ),
    ).toBe(true);

    sim.account.setSubnetTags({ 'karpenter.sh/discovery': 'my-cluster', 'network-type': 'private' });
    await sim.clock.advanceUntil(
      () => podsRunning(sim!, 'web') === 1,
      300_000,
      'web running once the subnets are tagged',
    );
    expect(condition(sim.get('EC2NodeClass', 'production')!, 'Ready')?.status).toBe('True');
    expect(fleetInputs(sim)).toHaveLength(1);
  });

  it('acts on a spot interruption from the queue, deletes it, and counts and deletes a message it cannot parse', async () => {
    sim = await awsSimulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => podsRunning(sim!, 'web') === 1, 180_000, 'web running');
    const [first] = claims(sim);
    expect(first!.metadata.labels?.['karpenter.sh/capacity-type']).toBe('spot');
    const [instance] = [...sim.account.instances.values()];
    const type = instance!.InstanceType!;
    const zone = instance!.Placement!.AvailabilityZone!;

    const event = JSON.parse(
      readFileSync(
        new URL(
          '../../controller/cloudprovider/aws/testdata/interruption-events/spot-interruption-warning.json',
          import.meta.url,
        ),
        'utf8',
      ),
    ) as Record<string, unknown>;
    const body = JSON.stringify({
      ...event,
      time: new Date(sim.clock.now()).toISOString(),
      region: 'ap-northeast-2',
      detail: { 'instance-id': instance!.InstanceId, 'instance-action': 'terminate' },
    });
    const spotHandle = sim.account.send(body);
    const badHandle = sim.account.send('{"this is": "not an EventBridge event"}');
    await sim.settle();

    const deleted = sim.account.sqs.commandCalls(DeleteMessageCommand).map((c) => c.args[0].input.ReceiptHandle);
    expect(deleted.sort()).toEqual([spotHandle, badHandle].sort());
    expect(sim.account.undeleted()).toBe(0);
    const m = sim.operator.metrics;
    expect(await m.value('karpenter_interruption_received_messages_total', { message_type: 'spot_interrupted' })).toBe(
      1,
    );
    expect(await m.value('karpenter_interruption_received_messages_total', { message_type: 'unparseable' })).toBe(1);
    expect(await m.value('karpenter_interruption_deleted_messages_total')).toBe(2);
    expect(await m.value('karpenter_interruption_message_queue_duration_seconds')).toBe(1);
    expect(
      await m.value('karpenter_nodeclaims_disrupted_total', { reason: 'spot_interrupted', capacity_type: 'spot' }),
    ).toBe(1);
    expect(
      eventsOf(sim, 'SpotInterrupted')
        .map((e) => (e['involvedObject'] as { kind: string }).kind)
        .sort(),
    ).toEqual(['Node', 'NodeClaim', 'Pod']);
    // Karpenter's ICE cache: the interrupted offering is kept from the replacement for 3 minutes.
    expect(sim.provider.aws.unavailableOfferings.isUnavailable('spot', type, zone)).toBe(true);

    await sim.clock.advanceUntil(
      () =>
        podsRunning(sim!, 'web') === 1 &&
        claims(sim!).length === 1 &&
        claims(sim!)[0]!.metadata.name !== first!.metadata.name,
      300_000,
      'web moved to a replacement',
    );
    expect(sim.account.ec2.commandCalls(TerminateInstancesCommand).flatMap((c) => c.args[0].input.InstanceIds)).toEqual(
      [instance!.InstanceId],
    );
    const replacement = fleetInputs(sim)[1]!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
    expect(replacement.some((o) => o.InstanceType === type && o.AvailabilityZone === zone)).toBe(false);
    expect(replacement.length).toBeGreaterThan(0);
  });

  it('reaches the AWS drift checks through the cloud-provider seam', async () => {
    sim = await awsSimulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => podsRunning(sim!, 'web') === 1, 180_000, 'web running');
    // As the disruption loop sees the provider: through the metrics decorator main.ts puts on it.
    const seam = withMetrics(sim.operator.cloudProvider, sim.operator.metrics, 'disruption');
    const drift = async () => {
      const r = parseNodeClaim(claims(sim!)[0]);
      if (!r.ok) throw new Error('nodeclaim does not parse');
      return seam.isDrifted(driftQueryOf(r.value)!);
    };
    expect(await drift()).toBeUndefined();

    // Dynamic: the class now selects another AMI (selector terms are not hashed).
    sim.account.publishAmis('v2');
    await sim.apply(withAmi(guide('guide-07.yaml'), 'ami-v2x86std'));
    expect(
      (sim.get('EC2NodeClass', 'production')!.status as { amis: Array<{ id: string }> }).amis.map((a) => a.id),
    ).toEqual(['ami-v2x86std']);
    expect(await drift()).toBe('AMIDrift');

    // Static: a hashed field changes; the class's hash annotation moves, the NodeClaim keeps the one it launched with.
    const launchedHash = claims(sim)[0]!.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash'];
    await sim.apply(
      withAmi(guide('guide-07.yaml'), 'ami-v2x86std').replace('ManagedBy: karpenter', 'ManagedBy: karpenter-ts'),
    );
    expect(
      sim.get('EC2NodeClass', 'production')!.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash'],
    ).not.toBe(launchedHash);
    expect(await drift()).toBe('NodeClassDrift');
    expect(
      await sim.operator.metrics.value('karpenter_cloudprovider_duration_seconds', {
        controller: 'disruption',
        method: 'IsDrifted',
        provider: 'aws',
      }),
    ).toBe(3);

    // A NodeClaim launched under another hash version (Karpenter's v5) gets the current hash instead of drifting.
    const name = claims(sim)[0]!.metadata.name!;
    sim.cluster.api.patch('nodeclaims.karpenter.sh', undefined, name, 'merge', {
      metadata: {
        annotations: {
          'karpenter.k8s.aws/ec2nodeclass-hash': '123',
          'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v5',
        },
      },
    });
    await sim.apply(
      withAmi(guide('guide-07.yaml'), 'ami-v2x86std').replace('ManagedBy: karpenter', 'ManagedBy: platform'),
    );
    const rewritten = sim.get('NodeClaim', name)!.metadata.annotations!;
    expect(rewritten['karpenter.k8s.aws/ec2nodeclass-hash-version']).toBe('kts-v1');
    expect(rewritten['karpenter.k8s.aws/ec2nodeclass-hash']).toBe(
      sim.get('EC2NodeClass', 'production')!.metadata.annotations?.['karpenter.k8s.aws/ec2nodeclass-hash'],
    );
    expect(await drift()).toBe('AMIDrift');
  });

  it('launches into a capacity reservation while it has room, then on-demand, and gets the instance back on termination', async () => {
    sim = await awsSimulation();
    const RID = 'cr-0a1b2c3d4e5f60718';
    sim.account.addCapacityReservation({
      id: RID,
      instanceType: 'm7i-flex.large',
      zone: 'ap-northeast-2a',
      count: 1,
      tags: { team: 'web' },
    });
    await sim.apply(guide07Reserving(RID));
    const nc = sim.get('EC2NodeClass', 'production')!;
    expect(condition(nc, 'CapacityReservationsReady')).toMatchObject({ status: 'True' });
    expect(condition(nc, 'Ready')?.status).toBe('True');
    expect((nc.status as { capacityReservations: unknown[] }).capacityReservations).toEqual([
      {
        id: RID,
        availabilityZone: 'ap-northeast-2a',
        instanceType: 'm7i-flex.large',
        ownerID: '123456789012',
        instanceMatchCriteria: 'targeted',
        reservationType: 'default',
        interruptible: false,
        state: 'active',
      },
    ]);

    // Two pods that need a node each: the first takes the reservation's one instance; the second waits a
    // round (Strict: it may not relax while the reservation is held) and then goes on-demand.
    await sim.apply(deployment('web', 2, { onePerNode: true }));
    await sim.clock.advanceUntil(() => podsRunning(sim!, 'web') === 2, 300_000, 'web running on two nodes');
    const byType = Object.fromEntries(claims(sim).map((c) => [c.metadata.labels?.['karpenter.sh/capacity-type'], c]));
    expect(Object.keys(byType).sort()).toEqual(['on-demand', 'reserved']);
    const reserved = byType['reserved']!;
    expect(reserved.metadata.labels).toMatchObject({
      'karpenter.k8s.aws/capacity-reservation-id': RID,
      'karpenter.k8s.aws/capacity-reservation-type': 'default',
      'topology.kubernetes.io/zone': 'ap-northeast-2a',
      'node.kubernetes.io/instance-type': 'm7i-flex.large',
    });
    expect(byType['on-demand']!.metadata.labels?.['karpenter.k8s.aws/capacity-reservation-id']).toBeUndefined();
    const node = sim.cluster.store
      .list('nodes')
      .find((n) => n.metadata.name === (reserved.status as { nodeName?: string }).nodeName);
    expect(node?.metadata.labels?.['karpenter.k8s.aws/capacity-reservation-id']).toBe(RID);
    const fleets = fleetInputs(sim);
    expect(fleets.map((f) => f.TargetCapacitySpecification?.DefaultTargetCapacityType)).toEqual([
      'on-demand',
      'on-demand',
    ]);
    expect(reservationTargets(sim, fleets)).toEqual([
      { CapacityReservationTarget: { CapacityReservationId: RID } },
      { CapacityReservationPreference: 'none' },
    ]);
    expect(sim.account.capacityReservations.get(RID)!.AvailableInstanceCount).toBe(0);
    expect(sim.provider.aws.reservationCapacity.available(RID)).toBe(0);
    const inReservation = [...sim.account.instances.values()].filter((i) => i.CapacityReservationId === RID);
    expect(inReservation).toHaveLength(1);

    // Deleting the reserved NodeClaim terminates its instance: the reservation has its instance back.
    sim.cluster.api.delete('nodeclaims.karpenter.sh', undefined, reserved.metadata.name!);
    await sim.clock.advanceUntil(
      () => sim!.account.capacityReservations.get(RID)!.AvailableInstanceCount === 1,
      300_000,
      'the reserved instance terminated',
    );
    expect(sim.provider.aws.reservationCapacity.available(RID)).toBe(1);
  });

  it('keeps a deleted EC2NodeClass until its NodeClaims are gone, then deletes its launch templates and instance profile', async () => {
    sim = await awsSimulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => podsRunning(sim!, 'web') === 1, 180_000, 'web running');
    const profile = (sim.get('EC2NodeClass', 'production')!.status as { instanceProfile: string }).instanceProfile;
    const templates = sim.account.launchTemplates.size;
    expect(templates).toBeGreaterThan(0); // one per AMI and max-pods group

    sim.cluster.api.delete('ec2nodeclasses.karpenter.k8s.aws', undefined, 'production');
    await sim.settle();
    expect(sim.get('EC2NodeClass', 'production')?.metadata.deletionTimestamp).toBeDefined();
    expect(eventsOf(sim, 'WaitingOnNodeClaimTermination').map((e) => e['message'])).toEqual([
      `Waiting on NodeClaim termination for ${claims(sim)[0]!.metadata.name}`,
    ]);
    expect(condition(sim.get('NodePool', 'production')!, 'NodeClassReady')?.reason).toBe('NodeClassTerminating');

    sim.cluster.api.delete('nodeclaims.karpenter.sh', undefined, claims(sim)[0]!.metadata.name!);
    await sim.clock.advanceUntil(
      () => sim!.get('EC2NodeClass', 'production') === undefined,
      300_000,
      'the node class gone',
    );
    expect(claims(sim)).toEqual([]);
    expect(sim.account.ec2.commandCalls(DeleteLaunchTemplateCommand)).toHaveLength(templates);
    expect(sim.account.launchTemplates.size).toBe(0);
    expect(
      sim.account.iam.commandCalls(DeleteInstanceProfileCommand).map((c) => c.args[0].input.InstanceProfileName),
    ).toEqual([profile]);
    expect(sim.account.profiles.size).toBe(0);
  });
});
