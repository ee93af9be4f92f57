// What the AWS provider needs from the operator's resolved options (controller/operator/options.ts parses
// flags and env named like Karpenter's: CLUSTER_NAME, CLUSTER_ENDPOINT, INTERRUPTION_QUEUE, ...), plus the
// tag and annotation keys Karpenter's AWS provider uses (docs/karpenter/aws-provider.md §4.1, §4.8, §5). Label keys are
// the engine's (engine/scheduling/labels.ts, engine/catalog/labels.ts).
import type { Clock as ControllerClock } from '../../operator/clock.ts';

export interface AwsSettings {
  /** CLUSTER_NAME (required). */
  readonly clusterName: string;
  /** The SDK's region. */
  readonly region: string;
  /** CLUSTER_ENDPOINT, written into user data. */
  readonly clusterEndpoint: string;
  /** CLUSTER_CA_BUNDLE (base64 PEM), written into user data when set. */
  readonly clusterCABundle?: string;
  /** The cluster's service CIDR (nodeadm's spec.cluster.cidr), when known. */
  readonly clusterCIDR?: string;
  /** VM_MEMORY_OVERHEAD_PERCENT, default 0.075. */
  readonly vmMemoryOverheadPercent: number;
  /** RESERVED_ENIS, default 0. */
  readonly reservedENIs: number;
  /** ISOLATED_VPC: skips the Pricing API. */
  readonly isolatedVPC: boolean;
  /** INTERRUPTION_QUEUE: the SQS queue name; empty disables interruption handling. */
  readonly interruptionQueue?: string;
  /** AMI_REFRESH_INTERVAL / SUBNET_REFRESH_INTERVAL, the shorter (ms): a Ready EC2NodeClass is resolved again this often. */
  readonly refreshMs?: number;
}

/** The AWS provider only reads the time: the controller's Clock (controller/operator/clock.ts), narrowed to now(). */
export type Clock = Pick<ControllerClock, 'now'>;

export const systemClock: Clock = { now: () => Date.now() };

export function validateSettings(s: AwsSettings): AwsSettings {
  const problems: string[] = [];
  if (!s.clusterName) problems.push('clusterName (CLUSTER_NAME) is required');
  if (!s.region) problems.push('region is required (AWS_REGION or the SDK config)');
  if (!(s.vmMemoryOverheadPercent >= 0 && s.vmMemoryOverheadPercent < 1)) {
    problems.push(
      `vmMemoryOverheadPercent (VM_MEMORY_OVERHEAD_PERCENT) must be in [0, 1), got ${s.vmMemoryOverheadPercent}`,
    );
  }
  if (!(Number.isInteger(s.reservedENIs) && s.reservedENIs >= 0)) {
    problems.push(`reservedENIs (RESERVED_ENIS) must be a non-negative integer, got ${s.reservedENIs}`);
  }
  if (problems.length) throw new Error(`aws settings: ${problems.join('; ')}`);
  return s;
}

// ---------------------------------------------------------------------------------------------------
// Tags and annotations

export const NODEPOOL_TAG = 'karpenter.sh/nodepool';
export const NODECLAIM_TAG = 'karpenter.sh/nodeclaim';
export const NODECLASS_TAG = 'karpenter.k8s.aws/ec2nodeclass';
export const EKS_CLUSTER_NAME_TAG = 'eks:eks-cluster-name';
export const clusterTag = (cluster: string): string => `kubernetes.io/cluster/${cluster}`;

export const NODECLASS_HASH_ANNOTATION = 'karpenter.k8s.aws/ec2nodeclass-hash';
export const NODECLASS_HASH_VERSION_ANNOTATION = 'karpenter.k8s.aws/ec2nodeclass-hash-version';
export const INSTANCE_PROFILE_ANNOTATION = 'karpenter.k8s.aws/instance-profile-name';

/** spec.tags keys Karpenter sets itself (§4.1): a node class may not use them. */
export function restrictedTagReason(key: string): string | undefined {
  if (key.startsWith('kubernetes.io/cluster')) return 'kubernetes.io/cluster/* is set by Karpenter';
  if (key === NODEPOOL_TAG || key === EKS_CLUSTER_NAME_TAG || key === NODECLASS_TAG || key === NODECLAIM_TAG)
    return `${key} is set by Karpenter`;
  return undefined;
}
