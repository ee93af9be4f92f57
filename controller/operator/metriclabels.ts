// Label names and values Karpenter's metrics use, in one place (facts from kubernetes-sigs/karpenter
// pkg/controllers/metrics/node and pkg/apis/v1/labels.go, and karpenter-provider-aws pkg/apis/v1/labels.go,
// v1.14.1). Node gauges carry one label per well-known node label: the part of the key after '/', in
// snake case, so `karpenter.k8s.aws/instance-cpu` is `instance_cpu`.

/** The well-known node labels Karpenter (core plus the AWS provider) reports on every node series. */
const WELL_KNOWN_NODE_LABELS: readonly string[] = [
  'karpenter.sh/nodepool',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'karpenter.sh/capacity-type',
  'node.kubernetes.io/windows-build',
  'karpenter.k8s.aws/capacity-reservation-id',
  'karpenter.k8s.aws/capacity-reservation-type',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
  'karpenter.k8s.aws/instance-hypervisor',
  'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  'karpenter.k8s.aws/nitro-sandbox',
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-capability-flex',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-size',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-cpu-manufacturer',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-memory',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-gpu-name',
  'karpenter.k8s.aws/instance-gpu-manufacturer',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-name',
  'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count',
  'topology.k8s.aws/zone-id',
  'karpenter.k8s.aws/instance-tenancy',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
];

/** `karpenter.k8s.aws/instance-cpu` -> `instance_cpu`. */
const promLabelOf = (key: string): string => (key.split('/')[1] ?? key).toLowerCase().replaceAll('-', '_');

/** Each well-known label with its label name (worked out once: every scrape writes them for every node). */
const WELL_KNOWN_PROM_LABELS: ReadonlyArray<readonly [string, string]> = WELL_KNOWN_NODE_LABELS.map((k) => [
  k,
  promLabelOf(k),
]);

/** The label names of a per-node series: the well-known labels, then node_name, phase, managed. */
export const NODE_LABEL_NAMES: readonly string[] = [
  ...WELL_KNOWN_NODE_LABELS.map(promLabelOf),
  'node_name',
  'phase',
  'managed',
];
export const NODE_RESOURCE_LABEL_NAMES: readonly string[] = [...NODE_LABEL_NAMES, 'resource_type'];

/** A resource name as a label value: lower case, '-' -> '_' (`ephemeral-storage` -> `ephemeral_storage`). */
export const resourceTypeLabel = (resource: string): string => resource.toLowerCase().replaceAll('-', '_');

/** The label set of one node's series. */
export function nodeLabelValues(
  name: string,
  labels: Readonly<Record<string, string>>,
  phase: string,
  managed: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, prom] of WELL_KNOWN_PROM_LABELS) out[prom] = labels[k] ?? '';
  out['node_name'] = name;
  out['phase'] = phase;
  out['managed'] = String(managed);
  return out;
}

/** Kinds whose status conditions and termination Karpenter reports as operator_<kind>_* (operatorpkg's status controller). */
export const STATUS_KINDS = {
  nodeclaim: {
    group: 'karpenter.sh',
    kind: 'NodeClaim',
    labels: ['karpenter.k8s.aws/ec2nodeclass', 'karpenter.sh/nodepool'],
    deprecated: true,
  },
  node: {
    group: '',
    kind: 'Node',
    labels: ['karpenter.k8s.aws/ec2nodeclass', 'karpenter.sh/nodepool', 'karpenter.sh/initialized'],
    deprecated: false,
  },
  nodepool: { group: 'karpenter.sh', kind: 'NodePool', labels: [], deprecated: true },
  ec2nodeclass: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', labels: [], deprecated: true },
} as const;
export type StatusKind = keyof typeof STATUS_KINDS;

/** An object label key as operatorpkg writes it into a label name: '/', '.', '-' -> '_'. */
export const objectLabelName = (key: string): string => key.replace(/[/.-]/g, '_');

/** Prometheus' default histogram buckets (operatorpkg uses them unless told otherwise). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Karpenter's metrics.DurationBuckets(). */
export const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2,
  2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60, 120, 150, 300, 450, 600,
];
/** controller-runtime's reconcile_time_seconds buckets. */
export const RECONCILE_BUCKETS = DURATION_BUCKETS.slice(0, DURATION_BUCKETS.indexOf(60) + 1);
/** start, start*factor, ... (count values), as prometheus.ExponentialBuckets. */
export const exponentialBuckets = (start: number, factor: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => start * factor ** i);
/** Karpenter's summary objectives: the 0, 0.5, 0.9, 0.99 and 1 quantiles. */
export const SUMMARY_PERCENTILES = [0, 0.5, 0.9, 0.99, 1];
