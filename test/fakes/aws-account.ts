// A small stateful AWS account behind the real SDK v3 clients, answered through aws-sdk-client-mock: tagged
// subnets and security groups, EKS-optimized AMIs behind their SSM parameters, instance profiles, launch
// templates, instances that CreateFleet starts and TerminateInstances stops on the simulation's clock, and an
// SQS queue whose ReceiveMessage long-polls (20 s of that clock) like the real one. Capacity reservations
// (addCapacityReservation) answer DescribeCapacityReservations and take launches whose template targets
// them: one instance fewer available per launch, ReservationCapacityExceeded when none is left, and the
// instance back on termination. End-to-end tests run the
// controller's AWS provider against it; every call stays recorded on the mocks for assertions.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

import { randomUUID } from 'node:crypto';
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  CreateTagsCommand,
  DeleteLaunchTemplateCommand,
  DescribeCapacityReservationsCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSpotPriceHistoryCommand,
  DescribeSubnetsCommand,
  EC2Client,
  TerminateInstancesCommand,
  type CapacityReservation,
  type CreateFleetCommandInput,
  type CreateFleetResult,
  type Filter,
  type FleetLaunchTemplateOverridesRequest,
  type Image,
  type Instance,
  type LaunchTemplate,
  type RequestLaunchTemplateData,
  type SecurityGroup,
  type Subnet,
  type Tag,
} from '@aws-sdk/client-ec2';
import {
  AddRoleToInstanceProfileCommand,
  CreateInstanceProfileCommand,
  DeleteInstanceProfileCommand,
  GetInstanceProfileCommand,
  IAMClient,
  ListInstanceProfilesCommand,
  RemoveRoleFromInstanceProfileCommand,
  type InstanceProfile,
} from '@aws-sdk/client-iam';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import {
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import type { AwsClients } from '../../controller/cloudprovider/aws/sdk-clients.ts';
import type { Clock } from '../../controller/operator/clock.ts';
import { fixtureInstanceTypes } from './aws.ts';

export interface FakeAccountOptions {
  readonly region: string;
  readonly clusterName: string;
  readonly clock: Clock;
  /** Zones with subnets; instance types are offered in the first three. */
  readonly zones: readonly string[];
  /** Tags of the subnets (default the guide's: karpenter.sh/discovery=<cluster>, network-type=private). */
  readonly subnetTags?: Readonly<Record<string, string>>;
  readonly kubernetesVersion?: string;
  /** Instance start to "running" (default 2 s). */
  readonly bootMs?: number;
}

const awsError = (name: string, message: string): Error =>
  Object.assign(new Error(message), { name, $fault: 'client', $metadata: {} });
const tagList = (tags: Readonly<Record<string, string>>): Tag[] =>
  Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
const tagMap = (tags: readonly Tag[] | undefined): Record<string, string> =>
  Object.fromEntries((tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));

/** EC2's filter semantics: filters ANDed, values within one ORed. */
function matches(
  filters: readonly Filter[] | undefined,
  fields: Readonly<Record<string, string | undefined>>,
  tags: Readonly<Record<string, string>>,
): boolean {
  return (filters ?? []).every((f) => {
    const values = f.Values ?? [];
    if (f.Name === 'tag-key') return values.some((v) => v in tags);
    if (f.Name?.startsWith('tag:')) return values.some((v) => tags[f.Name!.slice(4)] === v);
    const have = fields[f.Name ?? ''];
    return have !== undefined && values.includes(have);
  });
}

/** What the fake answers to CreateFleet: launched instances or errors, as an instant fleet does. */
type FleetAnswer = Required<Pick<CreateFleetResult, 'Instances' | 'Errors'>>;

/** One launch of a CreateFleet call: the override that won, and what its instances take from the call and
 * from the launch template. */
interface FleetLaunch {
  readonly ov: FleetLaunchTemplateOverridesRequest;
  readonly securityGroupIds: readonly string[];
  readonly tags: readonly Tag[];
  readonly spot: boolean;
  readonly reservation?: CapacityReservation;
}

/** The override of lowest Priority across the call's launch template configs, with its template's name. */
function firstOverride(
  input: CreateFleetCommandInput,
): { ov: FleetLaunchTemplateOverridesRequest; templateName: string } | undefined {
  const candidates = (input.LaunchTemplateConfigs ?? []).flatMap((c) =>
    (c.Overrides ?? []).map((ov) => ({ ov, templateName: c.LaunchTemplateSpecification?.LaunchTemplateName ?? '' })),
  );
  candidates.sort((a, b) => (a.ov.Priority ?? 0) - (b.ov.Priority ?? 0));
  return candidates[0];
}

/** A reservation takes `wanted` launches of an override when it is for its type and zone and has that many free. */
function hasRoom(
  r: CapacityReservation | undefined,
  ov: FleetLaunchTemplateOverridesRequest,
  wanted: number,
): r is CapacityReservation {
  return (
    r !== undefined &&
    r.InstanceType === ov.InstanceType &&
    r.AvailabilityZone === ov.AvailabilityZone &&
    (r.AvailableInstanceCount ?? 0) >= wanted
  );
}

/** An instant fleet that launched nothing, with one error (naming the override, where one is to blame). */
function fleetError(code: string, message: string, ov?: FleetLaunchTemplateOverridesRequest): FleetAnswer {
  return {
    Instances: [],
    Errors: [
      { ErrorCode: code, ErrorMessage: message, ...(ov ? { LaunchTemplateAndOverrides: { Overrides: ov } } : {}) },
    ],
  };
}

const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'test' };

export class FakeAwsAccount {
  readonly clients: AwsClients;
  readonly ec2;
  readonly ssm;
  readonly iam;
  readonly sqs;
  readonly pricing;
  readonly subnets: Subnet[];
  readonly securityGroups: SecurityGroup[];
  readonly images = new Map<string, Image>();
  readonly parameters = new Map<string, string>();
  readonly profiles = new Map<string, InstanceProfile>();
  readonly launchTemplates = new Map<
    string,
    LaunchTemplate & { securityGroupIds: string[]; data?: RequestLaunchTemplateData }
  >();
  readonly capacityReservations = new Map<string, CapacityReservation>();
  readonly instances = new Map<string, Instance>();
  /** Instances that reached "running" (tests register their nodes). */
  onRunning: (i: Instance) => void = () => {};
  onTerminated: (i: Instance) => void = () => {};
  private readonly queue: Message[] = [];
  private readonly inflight = new Map<string, Message>();
  private readonly pollers = new Set<() => void>();
  private seq = 0;
  readonly queueUrl: string;

  constructor(readonly o: FakeAccountOptions) {
    const region = o.region;
    this.clients = {
      ec2: new EC2Client({ region, credentials }),
      ssm: new SSMClient({ region, credentials }),
      iam: new IAMClient({ region, credentials }),
      sqs: new SQSClient({ region, credentials }),
      pricing: new PricingClient({ region: 'ap-south-1', credentials }),
    };
    this.ec2 = mockClient(this.clients.ec2);
    this.ssm = mockClient(this.clients.ssm);
    this.iam = mockClient(this.clients.iam);
    this.sqs = mockClient(this.clients.sqs);
    this.pricing = mockClient(this.clients.pricing);
    this.queueUrl = `https://sqs.${region}.amazonaws.com/123456789012/${o.clusterName}`;
    const discovery = { 'karpenter.sh/discovery': o.clusterName };
    this.subnets = o.zones.map((zone, i) => ({
      SubnetId: `subnet-0${String(i + 1).padStart(16, '0')}`,
      AvailabilityZone: zone,
      AvailabilityZoneId: `apne2-az${i + 1}`,
      AvailableIpAddressCount: 4000 - i * 10,
      CidrBlock: `10.0.${i * 32}.0/19`,
      Tags: tagList(o.subnetTags ?? { ...discovery, 'network-type': 'private' }),
    }));
    this.securityGroups = [
      { GroupId: 'sg-00000000000000001', GroupName: `${o.clusterName}-node`, Tags: tagList(discovery) },
    ];
    this.publishAmis('v1');
    this.answerCatalog();
    this.answerDiscovery();
    this.answerLaunchTemplates();
    this.answerCapacityReservations();
    this.answerInstances();
    this.answerSsm();
    this.answerIam();
    this.answerSqs();
  }

  /** EKS-optimized AL2023 AMIs (standard and nvidia, both architectures) behind their SSM parameters. */
  publishAmis(release: string): void {
    const k8s = this.o.kubernetesVersion ?? '1.32';
    for (const [arch, variant] of [
      ['x86_64', 'standard'],
      ['arm64', 'standard'],
      ['x86_64', 'nvidia'],
    ] as const) {
      const id = `ami-${release}${arch === 'arm64' ? 'arm' : 'x86'}${variant === 'nvidia' ? 'gpu' : 'std'}`;
      this.images.set(id, {
        ImageId: id,
        Architecture: arch,
        Name: `amazon-eks-node-al2023-${arch}-${variant}-${k8s}-${release}`,
        CreationDate: '2026-08-01T00:00:00.000Z',
        State: 'available',
      });
      this.parameters.set(
        `/aws/service/eks/optimized-ami/${k8s}/amazon-linux-2023/${arch}/${variant}/recommended/image_id`,
        id,
      );
    }
  }

  /** A running m5.large that no CreateFleet of this account started (another cluster's, another tool's, or one
   * whose NodeClaim was lost), tagged `tags`, launched at `launchedAt`. An id the account has is refused. */
  addInstance(id: string, tags: Readonly<Record<string, string>>, launchedAt: number): Instance {
    if (this.instances.has(id)) throw new Error(`fake AWS account: addInstance(${id}): the account has that instance`);
    const i: Instance = {
      InstanceId: id,
      InstanceType: 'm5.large',
      ImageId: 'ami-1',
      Placement: { AvailabilityZone: this.o.zones[0], Tenancy: 'default' },
      State: { Name: 'running', Code: 16 },
      LaunchTime: new Date(launchedAt),
      Tags: tagList(tags),
    };
    this.instances.set(id, i);
    return i;
  }

  /** An instance's tags as a map (an unknown id is an error naming it). */
  tagsOf(id: string): Record<string, string> {
    const i = this.instances.get(id);
    if (!i) throw new Error(`fake AWS account: tagsOf(${id}): no such instance`);
    return tagMap(i.Tags);
  }

  /** A targeted ODCR (default) or capacity block in this account, active, with `count` instances free. */
  addCapacityReservation(r: {
    id: string;
    instanceType: string;
    zone: string;
    count: number;
    tags?: Record<string, string>;
    reservationType?: 'default' | 'capacity-block';
    endDate?: Date;
  }): CapacityReservation {
    const cr: CapacityReservation = {
      CapacityReservationId: r.id,
      InstanceType: r.instanceType,
      AvailabilityZone: r.zone,
      OwnerId: '123456789012',
      InstanceMatchCriteria: 'targeted',
      State: 'active',
      TotalInstanceCount: r.count,
      AvailableInstanceCount: r.count,
      ReservationType: r.reservationType ?? 'default',
      Tags: tagList(r.tags ?? {}),
      ...(r.endDate ? { EndDate: r.endDate } : {}),
    };
    this.capacityReservations.set(r.id, cr);
    return cr;
  }

  setSubnetTags(tags: Readonly<Record<string, string>>): void {
    for (const s of this.subnets) s.Tags = tagList(tags);
  }

  /** Puts a message on the interruption queue (waking a long poll); returns its receipt handle. */
  send(body: string): string {
    const handle = `rh-${++this.seq}`;
    this.queue.push({ MessageId: randomUUID(), ReceiptHandle: handle, Body: body });
    for (const wake of [...this.pollers]) wake();
    return handle;
  }

  /** Messages received but not deleted yet. */
  undeleted(): number {
    return this.queue.length + this.inflight.size;
  }

  /** Ends pending long polls (call before stopping the operator). */
  close(): void {
    for (const wake of [...this.pollers]) wake();
  }

  /** The instance types, offered in the first three zones, with spot prices on the clock; the Pricing API lists none. */
  private answerCatalog(): void {
    const zones = this.o.zones.slice(0, 3);
    const types = fixtureInstanceTypes();
    this.ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: types });
    this.ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({
      InstanceTypeOfferings: types.flatMap((t) =>
        zones.map((Location) => ({
          InstanceType: t.InstanceType,
          Location,
          LocationType: 'availability-zone' as const,
        })),
      ),
    });
    this.ec2.on(DescribeSpotPriceHistoryCommand).callsFake(() => ({
      SpotPriceHistory: types.flatMap((t) =>
        zones.map((AvailabilityZone, i) => ({
          InstanceType: t.InstanceType,
          AvailabilityZone,
          ProductDescription: 'Linux/UNIX' as const,
          SpotPrice: ((t.VCpuInfo?.DefaultVCpus ?? 1) * 0.01 * (1 + i / 10)).toFixed(4),
          Timestamp: new Date(this.o.clock.now()),
        })),
      ),
    }));
    this.pricing.on(GetProductsCommand).resolves({ PriceList: [] });
  }

  /** Subnets, security groups and AMIs, found by EC2's filters. */
  private answerDiscovery(): void {
    this.ec2.on(DescribeSubnetsCommand).callsFake((input: { Filters?: Filter[] }) => ({
      Subnets: this.subnets
        .filter((s) => matches(input.Filters, { 'subnet-id': s.SubnetId, 'cidr-block': s.CidrBlock }, tagMap(s.Tags)))
        .map((s) => structuredClone(s)),
    }));
    this.ec2.on(DescribeSecurityGroupsCommand).callsFake((input: { Filters?: Filter[] }) => ({
      SecurityGroups: this.securityGroups
        .filter((g) => matches(input.Filters, { 'group-id': g.GroupId, 'group-name': g.GroupName }, tagMap(g.Tags)))
        .map((g) => structuredClone(g)),
    }));
    this.ec2.on(DescribeImagesCommand).callsFake((input: { Filters?: Filter[] }) => ({
      Images: [...this.images.values()].filter((i) =>
        matches(input.Filters, { 'image-id': i.ImageId, name: i.Name }, tagMap(i.Tags)),
      ),
    }));
  }

  /** Launch templates by name: described (by name or filters), created once, deleted. */
  private answerLaunchTemplates(): void {
    this.ec2
      .on(DescribeLaunchTemplatesCommand)
      .callsFake((input: { LaunchTemplateNames?: string[]; Filters?: Filter[] }) => {
        if (input.LaunchTemplateNames) {
          const found = input.LaunchTemplateNames.map((n) => this.launchTemplates.get(n));
          if (found.some((t) => !t))
            throw awsError(
              'InvalidLaunchTemplateName.NotFoundException',
              'At least one of the launch templates specified in the request does not exist.',
            );
          return { LaunchTemplates: found };
        }
        return {
          LaunchTemplates: [...this.launchTemplates.values()].filter((t) => matches(input.Filters, {}, tagMap(t.Tags))),
        };
      });
    this.ec2
      .on(CreateLaunchTemplateCommand)
      .callsFake(
        (input: {
          LaunchTemplateName: string;
          LaunchTemplateData?: RequestLaunchTemplateData;
          TagSpecifications?: Array<{ Tags?: Tag[] }>;
        }) => {
          if (this.launchTemplates.has(input.LaunchTemplateName))
            throw awsError('InvalidLaunchTemplateName.AlreadyExistsException', 'exists');
          const lt = {
            LaunchTemplateName: input.LaunchTemplateName,
            LaunchTemplateId: `lt-${++this.seq}`,
            Tags: input.TagSpecifications?.[0]?.Tags ?? [],
            securityGroupIds: input.LaunchTemplateData?.SecurityGroupIds ?? [],
            ...(input.LaunchTemplateData ? { data: input.LaunchTemplateData } : {}),
          };
          this.launchTemplates.set(input.LaunchTemplateName, lt);
          return { LaunchTemplate: lt };
        },
      );
    this.ec2.on(DeleteLaunchTemplateCommand).callsFake((input: { LaunchTemplateName: string }) => {
      if (!this.launchTemplates.delete(input.LaunchTemplateName))
        throw awsError('InvalidLaunchTemplateName.NotFoundException', 'not found');
      return {};
    });
  }

  /** The account's capacity reservations, by id or filters (an unknown id is EC2's NotFound). */
  private answerCapacityReservations(): void {
    this.ec2
      .on(DescribeCapacityReservationsCommand)
      .callsFake((input: { CapacityReservationIds?: string[]; Filters?: Filter[] }) => {
        for (const id of input.CapacityReservationIds ?? []) {
          if (!this.capacityReservations.has(id))
            throw awsError(
              'InvalidCapacityReservationId.NotFound',
              `The capacity reservation ID '${id}' does not exist`,
            );
        }
        const out = [...this.capacityReservations.values()].filter(
          (r) =>
            (!input.CapacityReservationIds || input.CapacityReservationIds.includes(r.CapacityReservationId!)) &&
            matches(
              input.Filters,
              {
                state: r.State,
                'owner-id': r.OwnerId,
                'instance-match-criteria': r.InstanceMatchCriteria,
                'instance-type': r.InstanceType,
              },
              tagMap(r.Tags),
            ),
        );
        return { CapacityReservations: out.map((r) => structuredClone(r)) };
      });
  }

  /** Instances: launched by CreateFleet, described, terminated and tagged. */
  private answerInstances(): void {
    this.ec2.on(CreateFleetCommand).callsFake((input) => this.createFleet(input));
    this.ec2.on(DescribeInstancesCommand).callsFake((input: { InstanceIds?: string[]; Filters?: Filter[] }) => {
      for (const id of input.InstanceIds ?? [])
        if (!this.instances.has(id))
          throw awsError('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
      const out = [...this.instances.values()].filter(
        (i) =>
          (!input.InstanceIds || input.InstanceIds.includes(i.InstanceId!)) &&
          matches(input.Filters, { 'instance-state-name': i.State?.Name, 'instance-id': i.InstanceId }, tagMap(i.Tags)),
      );
      return { Reservations: out.length ? [{ Instances: out.map((i) => structuredClone(i)) }] : [] };
    });
    this.ec2.on(TerminateInstancesCommand).callsFake((input: { InstanceIds: string[] }) => ({
      TerminatingInstances: input.InstanceIds.map((id) => this.terminate(id)),
    }));
    this.ec2.on(CreateTagsCommand).callsFake((input: { Resources: string[]; Tags: Tag[] }) => {
      // EC2 tags none of the resources when one is unknown; the fake tags only instances.
      const found = input.Resources.map((id) => {
        const i = this.instances.get(id);
        if (!i)
          throw awsError('InvalidInstanceID.NotFound', `CreateTags Resources: the instance ID '${id}' does not exist`);
        return i;
      });
      for (const i of found) i.Tags = tagList({ ...tagMap(i.Tags), ...tagMap(input.Tags) });
      return {};
    });
  }

  /** What the account answers to CreateFleet (drills that swap the handler hand it back to this): the override
   * of lowest Priority launches TotalTargetCapacity instances, into the capacity reservation its launch template
   * targets, if any, or not at all. */
  createFleet(input: CreateFleetCommandInput): FleetAnswer {
    const pick = firstOverride(input);
    if (!pick) return fleetError('InvalidParameterValue', 'no overrides');
    const template = this.launchTemplates.get(pick.templateName);
    if (!template)
      return fleetError(
        'InvalidLaunchTemplateName.NotFoundException',
        `LaunchTemplateConfigs[].LaunchTemplateSpecification.LaunchTemplateName: launch template "${pick.templateName}" does not exist`,
        pick.ov,
      );
    const wanted = input.TargetCapacitySpecification?.TotalTargetCapacity ?? 1;
    const reservationId =
      template.data?.CapacityReservationSpecification?.CapacityReservationTarget?.CapacityReservationId;
    const reservation = reservationId ? this.capacityReservations.get(reservationId) : undefined;
    if (reservationId && !hasRoom(reservation, pick.ov, wanted))
      return fleetError('ReservationCapacityExceeded', `capacity reservation ${reservationId} has no room`, pick.ov);
    const spot = input.TargetCapacitySpecification?.DefaultTargetCapacityType === 'spot';
    const launch: FleetLaunch = {
      ov: pick.ov,
      securityGroupIds: template.securityGroupIds,
      tags: input.TagSpecifications?.find((t) => t.ResourceType === 'instance')?.Tags ?? [],
      spot,
      ...(reservation ? { reservation } : {}),
    };
    const ids = Array.from({ length: wanted }, () => this.startInstance(launch));
    return {
      Instances: [
        {
          InstanceIds: ids,
          InstanceType: pick.ov.InstanceType,
          Lifecycle: spot ? 'spot' : 'on-demand',
          LaunchTemplateAndOverrides: { Overrides: pick.ov },
        },
      ],
      Errors: [],
    };
  }

  /** Starts one instance of a fleet's launch (taking a place in its reservation): "pending" now, "running"
   * bootMs later on the clock. Returns its id. */
  private startInstance(l: FleetLaunch): string {
    const id = `i-0${(++this.seq).toString(16).padStart(16, '0')}`;
    const reservationId = l.reservation?.CapacityReservationId;
    const inst: Instance = {
      InstanceId: id,
      InstanceType: l.ov.InstanceType,
      ImageId: l.ov.ImageId,
      SubnetId: l.ov.SubnetId,
      Placement: { AvailabilityZone: l.ov.AvailabilityZone, Tenancy: 'default' },
      State: { Name: 'pending', Code: 0 },
      LaunchTime: new Date(this.o.clock.now()),
      SecurityGroups: l.securityGroupIds.map((GroupId) => ({ GroupId })),
      Tags: structuredClone([...l.tags]),
      ...(l.spot ? { InstanceLifecycle: 'spot' as const, SpotInstanceRequestId: `sir-${id}` } : {}),
      ...(reservationId
        ? {
            CapacityReservationId: reservationId,
            CapacityReservationSpecification: { CapacityReservationTarget: { CapacityReservationId: reservationId } },
          }
        : {}),
    };
    if (l.reservation) l.reservation.AvailableInstanceCount = (l.reservation.AvailableInstanceCount ?? 0) - 1;
    this.instances.set(id, inst);
    this.o.clock.setTimer(this.o.bootMs ?? 2_000, () => {
      if (inst.State?.Name !== 'pending') return;
      inst.State = { Name: 'running', Code: 16 };
      this.onRunning(inst);
    });
    return id;
  }

  private terminate(id: string) {
    const i = this.instances.get(id);
    if (!i) throw awsError('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
    const previous = i.State;
    if (i.State?.Name !== 'terminated' && i.State?.Name !== 'shutting-down') {
      i.State = { Name: 'shutting-down', Code: 32 };
      const r = i.CapacityReservationId ? this.capacityReservations.get(i.CapacityReservationId) : undefined;
      if (r) r.AvailableInstanceCount = (r.AvailableInstanceCount ?? 0) + 1;
      this.onTerminated(i);
      this.o.clock.setTimer(5_000, () => (i.State = { Name: 'terminated', Code: 48 }));
    }
    return { InstanceId: id, PreviousState: previous, CurrentState: i.State };
  }

  /** The AMI parameters publishAmis set. */
  private answerSsm(): void {
    this.ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
      const v = this.parameters.get(input.Name);
      if (v === undefined) throw awsError('ParameterNotFound', `parameter ${input.Name} not found`);
      return { Parameter: { Name: input.Name, Value: v, Type: 'String' } };
    });
  }

  /** Instance profiles: got, listed by path, created once, given a role and relieved of it, deleted once empty. */
  private answerIam(): void {
    this.iam.on(GetInstanceProfileCommand).callsFake((input: { InstanceProfileName: string }) => ({
      InstanceProfile: structuredClone(this.instanceProfile(input.InstanceProfileName)),
    }));
    this.iam.on(ListInstanceProfilesCommand).callsFake((input: { PathPrefix?: string }) => ({
      InstanceProfiles: [...this.profiles.values()]
        .filter((p) => p.Path?.startsWith(input.PathPrefix ?? '/'))
        .map((p) => structuredClone(p)),
      IsTruncated: false,
    }));
    this.iam
      .on(CreateInstanceProfileCommand)
      .callsFake((input: { InstanceProfileName: string; Path?: string; Tags?: Tag[] }) => ({
        InstanceProfile: structuredClone(this.createInstanceProfile(input)),
      }));
    this.iam
      .on(AddRoleToInstanceProfileCommand)
      .callsFake((input: { InstanceProfileName: string; RoleName: string }) => {
        this.addRole(input.InstanceProfileName, input.RoleName);
        return {};
      });
    this.iam
      .on(RemoveRoleFromInstanceProfileCommand)
      .callsFake((input: { InstanceProfileName: string; RoleName: string }) => {
        this.removeRole(input.InstanceProfileName, input.RoleName);
        return {};
      });
    this.iam.on(DeleteInstanceProfileCommand).callsFake((input: { InstanceProfileName: string }) => {
      this.deleteInstanceProfile(input.InstanceProfileName);
      return {};
    });
  }

  /** The instance profile called `name`, or IAM's NoSuchEntity. */
  private instanceProfile(name: string): InstanceProfile {
    const p = this.profiles.get(name);
    if (!p) throw awsError('NoSuchEntity', `Instance Profile ${name} cannot be found.`);
    return p;
  }

  private createInstanceProfile(input: { InstanceProfileName: string; Path?: string; Tags?: Tag[] }): InstanceProfile {
    if (this.profiles.has(input.InstanceProfileName))
      throw awsError('EntityAlreadyExists', `instance profile ${input.InstanceProfileName} exists`);
    const p: InstanceProfile = {
      InstanceProfileName: input.InstanceProfileName,
      Path: input.Path ?? '/',
      InstanceProfileId: `AIPA${++this.seq}`,
      Arn: `arn:aws:iam::123456789012:instance-profile${input.Path ?? '/'}${input.InstanceProfileName}`,
      CreateDate: new Date(this.o.clock.now()),
      Roles: [],
      Tags: (input.Tags ?? []).map((t) => ({ Key: t.Key ?? '', Value: t.Value ?? '' })),
    };
    this.profiles.set(input.InstanceProfileName, p);
    return p;
  }

  /** IAM lets an instance profile hold one role: a second is LimitExceeded. */
  private addRole(profileName: string, roleName: string): void {
    const p = this.instanceProfile(profileName);
    const held = p.Roles?.[0]?.RoleName;
    if (held !== undefined)
      throw awsError('LimitExceeded', `instance profile ${profileName} already holds role ${held}; it can hold one`);
    p.Roles = [
      {
        RoleName: roleName,
        RoleId: 'AROA1',
        Arn: `arn:aws:iam::123456789012:role/${roleName}`,
        Path: '/',
        CreateDate: new Date(0),
      },
    ];
  }

  /** A role the profile does not hold is IAM's NoSuchEntity, not a silent success. */
  private removeRole(profileName: string, roleName: string): void {
    const p = this.instanceProfile(profileName);
    if (!p.Roles?.some((r) => r.RoleName === roleName))
      throw awsError('NoSuchEntity', `instance profile ${profileName} holds no role ${roleName}`);
    p.Roles = p.Roles.filter((r) => r.RoleName !== roleName);
  }

  /** A profile that still holds a role is IAM's DeleteConflict: roles are removed first. */
  private deleteInstanceProfile(name: string): void {
    const p = this.instanceProfile(name);
    if (p.Roles?.length)
      throw awsError(
        'DeleteConflict',
        `instance profile ${name} still holds role ${p.Roles[0]!.RoleName}; remove it first`,
      );
    this.profiles.delete(name);
  }

  /** The interruption queue: its URL by the cluster's name, long-polled receives with a visibility timeout, deletes. */
  private answerSqs(): void {
    this.sqs.on(GetQueueUrlCommand).callsFake((input: { QueueName: string }) => {
      if (input.QueueName !== this.o.clusterName)
        throw awsError('QueueDoesNotExist', 'The specified queue does not exist.');
      return { QueueUrl: this.queueUrl };
    });
    this.sqs
      .on(ReceiveMessageCommand)
      .callsFake(async (input: { MaxNumberOfMessages?: number; VisibilityTimeout?: number }) => {
        if (!this.queue.length) await this.longPoll(20_000);
        const batch = this.queue.splice(0, input.MaxNumberOfMessages ?? 1);
        for (const m of batch) {
          this.inflight.set(m.ReceiptHandle!, m);
          // Not deleted within the visibility timeout: visible again.
          this.o.clock.setTimer((input.VisibilityTimeout ?? 30) * 1000, () => {
            if (this.inflight.delete(m.ReceiptHandle!)) this.queue.push(m);
          });
        }
        return { Messages: batch.map((m) => ({ ...m })) };
      });
    this.sqs.on(DeleteMessageCommand).callsFake((input: { ReceiptHandle: string }) => {
      this.inflight.delete(input.ReceiptHandle);
      return {};
    });
  }

  private longPoll(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.pollers.delete(done);
        timer.cancel();
        resolve();
      };
      const timer = this.o.clock.setTimer(ms, done);
      this.pollers.add(done);
    });
  }
}
