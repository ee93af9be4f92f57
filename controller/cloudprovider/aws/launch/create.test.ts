// Launch through awsCloudProvider().create with the real SDK clients behind aws-sdk-client-mock.
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  type CreateFleetCommandInput,
  type CreateFleetCommandOutput,
} from '@aws-sdk/client-ec2';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import type { NodePool, NodeSelectorRequirement } from '../../../../engine/index.ts';
import {
  ec2Error,
  FakeClock,
  fixturePrices,
  launchReadyAws,
  type mockedAws,
  nextTurnTimers,
  readyNodeClass,
  settings,
} from '../../../../test/fakes/aws.ts';
import { isCreateError, isInsufficientCapacity, isNodeClassNotReady, type LaunchRequest } from '../../types.ts';
import type { EC2NodeClass } from '../../../../engine/index.ts';
import { OverlayStore, UnevaluatedNodePoolError } from '../../../controllers/nodeoverlay/store.ts';
import { evaluateOverlays, parseNodeOverlay, PRICE_OVERLAY_APPLIED_ANNOTATION } from '../../../../engine/index.ts';
import { awsCloudProvider } from '../provider.ts';

function harness(
  nc: EC2NodeClass = readyNodeClass({ tags: { Team: 'platform' } }),
  over: Partial<ReturnType<typeof settings>> = {},
) {
  const aws = launchReadyAws();
  const clock = new FakeClock();
  const classes = new Map([[nc.name, nc]]);
  const cp = awsCloudProvider({
    settings: { ...settings(), ...over },
    ports: aws.ports,
    nodeClass: (n) => classes.get(n),
    kubernetesVersion: async () => '1.31',
    staticPrices: { onDemand: fixturePrices() },
    clock,
    timers: nextTurnTimers,
  });
  return { aws, cp, clock, classes };
}

const request = (requirements: NodeSelectorRequirement[], over: Partial<LaunchRequest> = {}): LaunchRequest => ({
  nodeClaimName: 'default-abcde',
  nodePoolName: 'default',
  nodeClassName: 'default',
  requirements: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] }, ...requirements],
  requests: { cpu: 500, memory: 2 ** 30, pods: 1 },
  labels: { 'karpenter.sh/nodepool': 'default', environment: 'production' },
  annotations: {},
  taints: [],
  startupTaints: [],
  ...over,
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

const fleetInstance = (
  id: string | string[],
  type: string,
  zone: string,
  subnet: string,
  lifecycle: 'spot' | 'on-demand' = 'on-demand',
) => ({
  InstanceIds: Array.isArray(id) ? id : [id],
  InstanceType: type as 'm5.large',
  Lifecycle: lifecycle,
  LaunchTemplateAndOverrides: {
    Overrides: { InstanceType: type as 'm5.large', SubnetId: subnet, AvailabilityZone: zone },
  },
});
const fleetError = (code: string, type: string, zone: string, subnet: string) => ({
  ErrorCode: code,
  ErrorMessage: `${code} for ${type}`,
  LaunchTemplateAndOverrides: {
    Overrides: { InstanceType: type as 'm5.large', SubnetId: subnet, AvailabilityZone: zone },
  },
});
const sentFleets = (aws: ReturnType<typeof mockedAws>): CreateFleetCommandInput[] =>
  aws.ec2.commandCalls(CreateFleetCommand).map((c) => c.args[0].input);

const pool = (nodeClass = 'default'): NodePool =>
  ({
    name: 'default',
    template: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass } },
  }) as unknown as NodePool;

describe('create', () => {
  it('refuses an AL2023 launch without the service CIDR nodeadm needs, unless the class user data brings one', async () => {
    const { aws, cp } = harness(undefined, { clusterCIDR: undefined });
    const err = await cp.create(request([types('m5.large'), capacity('on-demand')])).catch((e: unknown) => e);
    expect(isCreateError(err) && err.reason).toBe('ClusterCIDRUnknown');
    expect((err as Error).message).toContain('--cluster-cidr (CLUSTER_CIDR');
    expect(aws.ec2).not.toHaveReceivedCommand(CreateFleetCommand);
    const own = harness(
      readyNodeClass({
        userData: 'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    cidr: 172.20.0.0/16\n',
      }),
      { clusterCIDR: undefined },
    );
    own.aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    expect((await own.cp.create(request([types('m5.large'), capacity('on-demand')]))).providerID).toBe(
      'aws:///test-zone-1a/i-0abc',
    );
  });

  it('launches on-demand with CreateFleet instant, lowest-price, overrides per type x subnet zone, and Karpenter tags', async () => {
    const { aws, cp } = harness();
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'test-zone-1b', 'subnet-b')], Errors: [] });
    const inst = await cp.create(request([types('m5.large', 'm5.xlarge'), capacity('on-demand')]));
    const [input] = sentFleets(aws);
    expect(input).toMatchObject({
      Type: 'instant',
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' },
      OnDemandOptions: { AllocationStrategy: 'lowest-price' },
    });
    expect(input!.SpotOptions).toBeUndefined();
    const overrides = input!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
    expect(overrides.map((o) => `${o.InstanceType}@${o.AvailabilityZone}/${o.SubnetId}/${o.ImageId}`).sort()).toEqual([
      'm5.large@test-zone-1a/subnet-a/ami-amd64',
      'm5.large@test-zone-1b/subnet-b/ami-amd64',
      'm5.large@test-zone-1c/subnet-c/ami-amd64',
      'm5.xlarge@test-zone-1a/subnet-a/ami-amd64',
      'm5.xlarge@test-zone-1b/subnet-b/ami-amd64', // the fixture offers m5.xlarge in 1a and 1b only
    ]);
    expect(overrides.find((o) => o.InstanceType === 'm5.large')!.Priority).toBe(fixturePrices()['m5.large']);
    expect(input!.LaunchTemplateConfigs![0]!.LaunchTemplateSpecification).toEqual({
      LaunchTemplateName: expect.stringMatching(/^karpenter\.k8s\.aws\/\d+$/),
      Version: '$Latest',
    });
    expect(input!.TagSpecifications!.map((t) => t.ResourceType)).toEqual(['instance', 'volume', 'fleet']);
    expect(Object.fromEntries(input!.TagSpecifications![0]!.Tags!.map((t) => [t.Key, t.Value]))).toEqual({
      Team: 'platform',
      'kubernetes.io/cluster/my-cluster': 'owned',
      'karpenter.sh/nodepool': 'default',
      'eks:eks-cluster-name': 'my-cluster',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
    });
    expect(inst).toMatchObject({
      providerID: 'aws:///test-zone-1b/i-0abc',
      instanceType: 'm5.large',
      zone: 'test-zone-1b',
      capacityType: 'on-demand',
      imageID: 'ami-amd64',
      state: 'pending',
      nodeClaimName: 'default-abcde',
      allocatable: { cpu: 1930, pods: 29 },
      labels: {
        'node.kubernetes.io/instance-type': 'm5.large',
        'topology.kubernetes.io/zone': 'test-zone-1b',
        'topology.k8s.aws/zone-id': 'tz1-az2',
        'karpenter.sh/capacity-type': 'on-demand',
        'karpenter.sh/nodepool': 'default',
        'karpenter.k8s.aws/instance-family': 'm5',
        'kubernetes.io/arch': 'amd64',
      },
      annotations: {
        'karpenter.k8s.aws/ec2nodeclass-hash': expect.stringMatching(/^\d+$/),
        'karpenter.k8s.aws/ec2nodeclass-hash-version': 'kts-v1',
        'karpenter.k8s.aws/instance-profile-name': 'my-cluster_123',
      },
    });
    expect(inst.capacity['vpc.amazonaws.com/efa']).toBeUndefined();
    // One template per (AMI, max pods): m5.large (29 pods) and m5.xlarge (58 pods) get their own user data.
    expect(aws.ec2).toHaveReceivedCommandTimes(CreateLaunchTemplateCommand, 2);
    expect(
      input!.LaunchTemplateConfigs!.map((c) => [...new Set((c.Overrides ?? []).map((o) => o.InstanceType))]),
    ).toEqual([['m5.large'], ['m5.xlarge']]);
  });

  it('launches spot with price-capacity-optimized and drops spot types dearer than the cheapest on-demand', async () => {
    const { aws, cp } = harness();
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.large', 'test-zone-1a', 'subnet-a', 'spot')], Errors: [] });
    const inst = await cp.create(request([types('m5.large', 'm5.xlarge'), capacity('spot', 'on-demand')]));
    const [input] = sentFleets(aws);
    expect(input).toMatchObject({
      SpotOptions: { AllocationStrategy: 'price-capacity-optimized' },
      TargetCapacitySpecification: { DefaultTargetCapacityType: 'spot' },
    });
    // Before the first spot refresh spot prices equal on-demand ones, so m5.xlarge (spot) costs more than m5.large (on-demand).
    expect([
      ...new Set(input!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []).map((o) => o.InstanceType)),
    ]).toEqual(['m5.large']);
    expect(inst.capacityType).toBe('spot');
    expect(inst.labels['karpenter.sh/capacity-type']).toBe('spot');
  });

  it('leaves out metal and GPU types while a generic type fits, and maps GPU types to the GPU AMI when only they fit', async () => {
    const { aws, cp } = harness();
    aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    await cp.create(request([types('m5.large', 'm5.metal', 'g4dn.8xlarge'), capacity('on-demand')]));
    await cp.create(
      request([types('m5.metal', 'g4dn.8xlarge'), capacity('on-demand')], { requests: { 'nvidia.com/gpu': 1 } }),
    );
    const [first, second] = sentFleets(aws);
    expect([
      ...new Set(first!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []).map((o) => o.InstanceType)),
    ]).toEqual(['m5.large']);
    expect([
      ...new Set(
        second!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []).map((o) => `${o.InstanceType}/${o.ImageId}`),
      ),
    ]).toEqual(['g4dn.8xlarge/ami-nvidia']);
  });

  it('marks ICE offerings from per-override errors, so they are unavailable for 3 minutes', async () => {
    const { aws, cp, clock } = harness();
    aws.ec2.on(CreateFleetCommand).resolves({
      Instances: [fleetInstance('i-1', 'm5.xlarge', 'test-zone-1b', 'subnet-b', 'spot')],
      Errors: [
        fleetError('InsufficientInstanceCapacity', 'm5.large', 'test-zone-1a', 'subnet-a'),
        fleetError('InsufficientInstanceCapacity', 'm5.large', 'test-zone-1b', 'subnet-b'),
      ],
    });
    await cp.create(request([types('m5.large', 'm5.xlarge'), capacity('spot')]));
    const available = async () =>
      (await cp.getInstanceTypes(pool()))
        .find((t) => t.name === 'm5.large')!
        .offerings.filter((o) => o.capacityType === 'spot' && !o.available)
        .map((o) => o.zone);
    expect(await available()).toEqual(['test-zone-1a', 'test-zone-1b']);
    expect(cp.unavailableOfferings.reason('spot', 'm5.large', 'test-zone-1a')).toBe('InsufficientInstanceCapacity');
    clock.step(3 * 60_000);
    expect(await available()).toEqual([]);
  });

  it('throws InsufficientCapacityError when every override failed for capacity', async () => {
    const { aws, cp } = harness();
    aws.ec2.on(CreateFleetCommand).resolves({
      Instances: [],
      Errors: [
        fleetError('InsufficientInstanceCapacity', 'm5.large', 'test-zone-1a', 'subnet-a'),
        fleetError('MaxSpotInstanceCountExceeded', 'm5.large', 'test-zone-1b', 'subnet-b'),
      ],
    });
    const err = await cp.create(request([types('m5.large'), capacity('spot')])).catch((e: unknown) => e);
    expect(isInsufficientCapacity(err)).toBe(true);
    expect((err as { offerings: unknown[] }).offerings).toEqual([
      { instanceType: 'm5.large', zone: 'test-zone-1a', capacityType: 'spot', code: 'InsufficientInstanceCapacity' },
      { instanceType: 'm5.large', zone: 'test-zone-1b', capacityType: 'spot', code: 'MaxSpotInstanceCountExceeded' },
    ]);
  });

  it('throws a CreateError with a mapped reason when an error is not about capacity', async () => {
    const { aws, cp } = harness();
    aws.ec2.on(CreateFleetCommand).resolves({
      Instances: [],
      Errors: [
        fleetError('InsufficientInstanceCapacity', 'm5.large', 'test-zone-1a', 'subnet-a'),
        fleetError('UnauthorizedOperation', 'm5.large', 'test-zone-1b', 'subnet-b'),
      ],
    });
    const err = await cp.create(request([types('m5.large'), capacity('on-demand')])).catch((e: unknown) => e);
    expect(isCreateError(err) && err.reason).toBe('Unauthorized');
    aws.ec2.on(CreateFleetCommand).rejects(ec2Error('VcpuLimitExceeded'));
    const whole = await cp.create(request([types('m5.large'), capacity('on-demand')])).catch((e: unknown) => e);
    expect(isCreateError(whole) && whole.reason).toBe('VCPULimitExceeded');
  });

  it('marks the subnet when it is out of addresses and launches elsewhere next time', async () => {
    const { aws, cp } = harness();
    aws.ec2
      .on(CreateFleetCommand)
      .resolvesOnce({
        Instances: [],
        Errors: [fleetError('InsufficientFreeAddressesInSubnet', 'm5.large', 'test-zone-1a', 'subnet-a')],
      })
      .resolves({ Instances: [fleetInstance('i-2', 'm5.large', 'test-zone-1b', 'subnet-b')], Errors: [] });
    await expect(cp.create(request([types('m5.large'), capacity('on-demand')]))).rejects.toSatisfy(
      isInsufficientCapacity,
    );
    await cp.create(request([types('m5.large'), capacity('on-demand')]));
    const second = sentFleets(aws)[1]!;
    expect(
      second
        .LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? [])
        .map((o) => o.SubnetId)
        .sort(),
    ).toEqual(['subnet-b', 'subnet-c']);
  });

  it('re-creates the launch template and retries once when CreateFleet cannot find it', async () => {
    const { aws, cp } = harness();
    aws.ec2
      .on(CreateFleetCommand)
      .rejectsOnce(ec2Error('InvalidLaunchTemplateName.NotFoundException'))
      .resolves({ Instances: [fleetInstance('i-3', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    const inst = await cp.create(request([types('m5.large'), capacity('on-demand')]));
    expect(inst.providerID).toBe('aws:///test-zone-1a/i-3');
    expect(aws.ec2).toHaveReceivedCommandTimes(CreateFleetCommand, 2);
    expect(aws.ec2).toHaveReceivedCommandTimes(CreateLaunchTemplateCommand, 2);
  });

  it('merges concurrent identical launches into one CreateFleet and hands out a partial fulfilment', async () => {
    const { aws, cp } = harness();
    aws.ec2.on(CreateFleetCommand).callsFake(
      (input: CreateFleetCommandInput): Partial<CreateFleetCommandOutput> => ({
        Instances: [fleetInstance(['i-a', 'i-b'], 'm5.large', 'test-zone-1a', 'subnet-a')],
        Errors: [fleetError('InsufficientInstanceCapacity', 'm5.large', 'test-zone-1b', 'subnet-b')],
        FleetId: String(input.TargetCapacitySpecification?.TotalTargetCapacity),
      }),
    );
    const req = request([types('m5.large'), capacity('on-demand')]);
    const results = await Promise.allSettled([
      cp.create({ ...req, nodeClaimName: 'a' }),
      cp.create({ ...req, nodeClaimName: 'b' }),
      cp.create({ ...req, nodeClaimName: 'c' }),
    ]);
    expect(aws.ec2).toHaveReceivedCommandTimes(CreateFleetCommand, 1);
    expect(sentFleets(aws)[0]!.TargetCapacitySpecification?.TotalTargetCapacity).toBe(3);
    const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(ok.map((i) => [i.nodeClaimName, i.providerID])).toEqual([
      ['a', 'aws:///test-zone-1a/i-a'],
      ['b', 'aws:///test-zone-1a/i-b'],
    ]);
    expect(results[2]!.status === 'rejected' && isInsufficientCapacity(results[2].reason)).toBe(true);
  });

  it('refuses restricted tags from the NodeClaim', async () => {
    const { cp } = harness();
    const err = await cp
      .create(request([types('m5.large')], { tags: { 'kubernetes.io/cluster/other': 'owned' } }))
      .catch((e: unknown) => e);
    expect(isCreateError(err) && err.reason).toBe('InvalidTags');
    expect((err as Error).message).toContain('kubernetes.io/cluster/other');
  });

  it('refuses node classes that are missing, deleting, or not Ready for their generation', async () => {
    const { cp, classes } = harness();
    await expect(cp.create(request([types('m5.large')], { nodeClassName: 'nope' }))).rejects.toSatisfy(
      isNodeClassNotReady,
    );
    const stale = readyNodeClass({}, 1);
    classes.set('default', { ...stale, generation: 2 });
    await expect(cp.create(request([types('m5.large')]))).rejects.toSatisfy(isNodeClassNotReady);
    classes.set('default', { ...stale, deleting: true });
    await expect(cp.create(request([types('m5.large')]))).rejects.toThrow(/being deleted/);
  });

  it('throws InsufficientCapacityError without calling EC2 when no type fits the requests', async () => {
    const { aws, cp } = harness();
    await expect(cp.create(request([types('m5.large')], { requests: { cpu: 64_000 } }))).rejects.toSatisfy(
      isInsufficientCapacity,
    );
    expect(aws.ec2).not.toHaveReceivedCommand(CreateFleetCommand);
  });
});

/** The provider decorated as the operator decorates it with the gate NodeOverlay on, these overlays evaluated. */
async function overlaid(h: ReturnType<typeof harness>, ...overlays: Record<string, unknown>[]) {
  const parsed = overlays.map((spec, i) => {
    const r = parseNodeOverlay({
      apiVersion: 'karpenter.sh/v1alpha1',
      kind: 'NodeOverlay',
      metadata: { name: `overlay-${i}` },
      spec: { requirements: [], ...spec },
    });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.value;
  });
  const store = new OverlayStore();
  const p = { ...pool(), template: { ...pool().template, labels: {} } } as NodePool;
  const { updates } = evaluateOverlays([{ pool: p, instanceTypes: await h.cp.getInstanceTypes(p) }], parsed);
  store.swap(updates, ['default']);
  return store.decorate(h.cp);
}

const PRICED = { [PRICE_OVERLAY_APPLIED_ANNOTATION]: 'true' };

// Karpenter aws pkg/providers/instance/suite_test.go (v1.14.1): the allocation strategies of a NodeClaim
// carrying the price-overlay annotation; and aws pkg/cloudprovider (Create applies the overlay store).
describe('create with NodeOverlays', () => {
  it('should use prioritized allocation strategy for an on-demand nodeclaim using nodeoverlay pricing', async () => {
    const h = harness();
    h.aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.xlarge', 'test-zone-1a', 'subnet-a')], Errors: [] });
    const cp = await overlaid(h, {
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }],
      price: '0.01',
    });
    await cp.create(request([types('m5.large', 'm5.xlarge'), capacity('on-demand')], { annotations: PRICED }));
    const [input] = sentFleets(h.aws);
    expect(input!.OnDemandOptions).toEqual({ AllocationStrategy: 'prioritized' });
    // The priorities are the prices the plan saw: the overlaid one for m5.xlarge, the catalog's for m5.large.
    const overrides = input!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
    expect(new Set(overrides.filter((o) => o.InstanceType === 'm5.xlarge').map((o) => o.Priority))).toEqual(
      new Set([0.01]),
    );
    expect(overrides.find((o) => o.InstanceType === 'm5.large')!.Priority).toBe(fixturePrices()['m5.large']);
  });

  it('should use lowest price allocation strategy by default for on-demand nodeclaims', async () => {
    const h = harness();
    h.aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    await (await overlaid(h)).create(request([types('m5.large'), capacity('on-demand')]));
    expect(sentFleets(h.aws)[0]!.OnDemandOptions).toEqual({ AllocationStrategy: 'lowest-price' });
  });

  it('should use capacity optimized prioritized allocation strategy for a spot nodeclaim using nodeoverlay', async () => {
    const h = harness();
    h.aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.large', 'test-zone-1a', 'subnet-a', 'spot')], Errors: [] });
    const cp = await overlaid(h, { priceAdjustment: '-10%' });
    await cp.create(request([types('m5.large'), capacity('spot')], { annotations: PRICED }));
    const [input] = sentFleets(h.aws);
    expect(input!.SpotOptions).toEqual({ AllocationStrategy: 'capacity-optimized-prioritized' });
    expect(input!.OnDemandOptions).toBeUndefined();
  });

  it('should use price capacity optimized allocation strategy by default for spot nodeclaims', async () => {
    const h = harness();
    h.aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.large', 'test-zone-1a', 'subnet-a', 'spot')], Errors: [] });
    await (await overlaid(h)).create(request([types('m5.large'), capacity('spot')]));
    expect(sentFleets(h.aws)[0]!.SpotOptions).toEqual({ AllocationStrategy: 'price-capacity-optimized' });
  });

  it('fits the NodeClaim against the overlaid capacity: a resource only an overlay adds launches, and the instance reports it', async () => {
    const h = harness();
    h.aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.xlarge', 'test-zone-1a', 'subnet-a')], Errors: [] });
    const widget = request([types('m5.large', 'm5.xlarge'), capacity('on-demand')], {
      requests: { cpu: 500, memory: 2 ** 30, pods: 1, 'example.com/widget': 1 },
    });
    // The provider's own catalog has no widget: nothing fits, EC2 is not called.
    await expect(h.cp.create(widget)).rejects.toSatisfy(isInsufficientCapacity);
    expect(h.aws.ec2).not.toHaveReceivedCommand(CreateFleetCommand);
    const cp = await overlaid(h, {
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }],
      capacity: { 'example.com/widget': '2' },
    });
    const inst = await cp.create(widget);
    const overrides = sentFleets(h.aws)[0]!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
    expect(new Set(overrides.map((o) => o.InstanceType))).toEqual(new Set(['m5.xlarge']));
    expect(inst.capacity['example.com/widget']).toBe(2);
  });

  it("launches a NodeClaim without a NodePool from the provider's own types, and waits for a pool not evaluated yet", async () => {
    const h = harness();
    h.aws.ec2
      .on(CreateFleetCommand)
      .resolves({ Instances: [fleetInstance('i-1', 'm5.large', 'test-zone-1a', 'subnet-a')], Errors: [] });
    const cp = await overlaid(h, { price: '0.01' });
    await cp.create(request([types('m5.large'), capacity('on-demand')], { nodePoolName: '' }));
    const overrides = sentFleets(h.aws)[0]!.LaunchTemplateConfigs!.flatMap((c) => c.Overrides ?? []);
    expect(overrides[0]!.Priority).toBe(fixturePrices()['m5.large']);
    await expect(
      cp.create(request([types('m5.large'), capacity('on-demand')], { nodePoolName: 'other' })),
    ).rejects.toThrow(UnevaluatedNodePoolError);
  });
});
