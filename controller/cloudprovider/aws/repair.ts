// The AWS provider's repair policies (aws/karpenter-provider-aws v1.14.1, pkg/cloudprovider/cloudprovider.go
// RepairPolicies): the kubelet's Ready condition False or Unknown for 30 minutes, and the conditions the
// EKS node monitoring agent reports: accelerated hardware after 10 minutes, storage, networking, kernel and
// container runtime after 30.
import type { RepairPolicy } from '../types.ts';

const MIN = 60_000;

export const AWS_REPAIR_POLICIES: readonly RepairPolicy[] = Object.freeze([
  { conditionType: 'Ready', conditionStatus: 'False', tolerationMs: 30 * MIN },
  { conditionType: 'Ready', conditionStatus: 'Unknown', tolerationMs: 30 * MIN },
  { conditionType: 'AcceleratedHardwareReady', conditionStatus: 'False', tolerationMs: 10 * MIN },
  { conditionType: 'StorageReady', conditionStatus: 'False', tolerationMs: 30 * MIN },
  { conditionType: 'NetworkingReady', conditionStatus: 'False', tolerationMs: 30 * MIN },
  { conditionType: 'KernelReady', conditionStatus: 'False', tolerationMs: 30 * MIN },
  { conditionType: 'ContainerRuntimeReady', conditionStatus: 'False', tolerationMs: 30 * MIN },
]);
