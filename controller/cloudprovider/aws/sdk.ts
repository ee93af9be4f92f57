// Narrow ports: exactly the AWS calls the provider makes, in the SDK's own shapes. Paginated calls return
// every page (the SDK-backed adapters in sdk-clients.ts use the SDK's paginators), "not found" answers are
// undefined rather than errors where the provider treats absence as data, and everything else throws the
// SDK's error. Fakes implement these interfaces; tests of the adapters use aws-sdk-client-mock.
import type {
  CapacityReservation,
  CreateFleetCommandInput,
  CreateFleetError,
  CreateFleetInstance,
  CreateLaunchTemplateCommandInput,
  Filter,
  Image,
  Instance as Ec2Instance,
  InstanceStateChange,
  InstanceTypeInfo,
  InstanceTypeOffering,
  LaunchTemplate,
  SecurityGroup,
  SpotPrice,
  Subnet,
} from '@aws-sdk/client-ec2';
import type { InstanceProfile } from '@aws-sdk/client-iam';
import type { Message } from '@aws-sdk/client-sqs';

export type { Filter };

export interface Ec2Port {
  /** All pages, 100 per page. */
  describeInstanceTypes(filters: Filter[]): Promise<InstanceTypeInfo[]>;
  /** LocationType availability-zone, all pages, 1000 per page. */
  describeInstanceTypeOfferings(): Promise<InstanceTypeOffering[]>;
  /** All pages, 2000 per page. */
  describeSpotPriceHistory(input: { productDescriptions: string[]; startTime: Date }): Promise<SpotPrice[]>;
  describeSubnets(filters: Filter[]): Promise<Subnet[]>;
  describeSecurityGroups(filters: Filter[]): Promise<SecurityGroup[]>;
  /**
   * All pages. `ids` go in CapacityReservationIds (EC2 has no id filter): an id that does not exist rejects
   * the call with InvalidCapacityReservationId.NotFound (or .Malformed).
   */
  describeCapacityReservations(input: { ids?: string[]; filters?: Filter[] }): Promise<CapacityReservation[]>;
  /** Deprecated images included (the resolver ranks them last rather than losing them). */
  describeImages(input: { filters: Filter[]; owners?: string[] }): Promise<Image[]>;
  /** undefined when no template has that name. */
  describeLaunchTemplate(name: string): Promise<LaunchTemplate | undefined>;
  describeLaunchTemplates(filters: Filter[]): Promise<LaunchTemplate[]>;
  createLaunchTemplate(input: CreateLaunchTemplateCommandInput): Promise<LaunchTemplate>;
  /** Succeeds when the template is already gone. */
  deleteLaunchTemplate(name: string): Promise<void>;
  createFleet(
    input: CreateFleetCommandInput,
  ): Promise<{ instances: CreateFleetInstance[]; errors: CreateFleetError[] }>;
  /** Instances of every reservation, all pages. */
  describeInstances(input: { instanceIds?: string[]; filters?: Filter[] }): Promise<Ec2Instance[]>;
  terminateInstances(instanceIds: string[]): Promise<InstanceStateChange[]>;
  createTags(resourceIds: string[], tags: Record<string, string>): Promise<void>;
}

export interface SsmPort {
  /** The parameter's value, or undefined when it does not exist. */
  getParameter(name: string): Promise<string | undefined>;
}

export interface IamPort {
  /** undefined when it does not exist. */
  getInstanceProfile(name: string): Promise<InstanceProfile | undefined>;
  listInstanceProfiles(pathPrefix: string): Promise<InstanceProfile[]>;
  createInstanceProfile(input: { name: string; path: string; tags: Record<string, string> }): Promise<InstanceProfile>;
  addRoleToInstanceProfile(profileName: string, roleName: string): Promise<void>;
  removeRoleFromInstanceProfile(profileName: string, roleName: string): Promise<void>;
  deleteInstanceProfile(name: string): Promise<void>;
}

export interface SqsPort {
  getQueueUrl(queueName: string): Promise<string>;
  /** One long poll (20 s, up to 10 messages, visibility 20 s); rejects with AbortError when aborted. */
  receiveMessages(queueUrl: string, signal?: AbortSignal): Promise<Message[]>;
  deleteMessage(queueUrl: string, receiptHandle: string): Promise<void>;
}

export interface PricingFilter {
  readonly field: string;
  readonly value: string;
}

export interface PricingPort {
  /** GetProducts for ServiceCode AmazonEC2 with TERM_MATCH filters: every page's PriceList (JSON strings). */
  getProducts(filters: readonly PricingFilter[]): Promise<string[]>;
}

export interface AwsPorts {
  readonly ec2: Ec2Port;
  readonly ssm: SsmPort;
  readonly iam: IamPort;
  readonly sqs: SqsPort;
  readonly pricing: PricingPort;
}
