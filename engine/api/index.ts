// engine/api: Kubernetes and Karpenter v1 objects in, domain types out. Pure: text or decoded objects
// come in as arguments; nothing here reads files or clocks. Parsers never throw: they return
// Result<T> = { ok: true, value } | { ok: false, errors: FieldError[] }.
export {
  fail,
  fieldError,
  formatFieldError,
  objectRef,
  ok,
  type FieldError,
  type PathSeg,
  type Result,
} from './errors.ts';
export { parseDocuments, type SourceDocument } from './yaml.ts';
export { parseSchedulerConfig, type SchedulerConfig } from './schedulerconfig.ts';
export { durationMs, formatDuration, nillableDurationMs, parseGoDuration } from './duration.ts';
export {
  AWS_WELL_KNOWN,
  NORMALIZED_LABELS,
  WELL_KNOWN_LABELS,
  labelKeyProblem,
  labelValueProblem,
  restrictedLabelReason,
  type LabelContext,
} from './labels.ts';
export { requirementProblem } from './problems.ts';
export {
  admit,
  isValidatedObject,
  karpenterKindProblem,
  validateObject,
  validateUpdate,
} from './validate.ts';
export { listItems, parseObject, parseText, type ParsedObject } from './objects.ts';
export { parsePod, type PodOptions } from './pod.ts';
export { PartMemo } from './decode.ts';
export { parseDeviceClass, parseResourceClaim, parseResourceClaimTemplate, parseResourceSlice } from './dra.ts';
export { parseNode, type NodeInfo } from './node.ts';
export { parseNodePool, type NodePoolOptions } from './nodepool.ts';
export { parseNodeOverlay, type NodeOverlay } from './nodeoverlay.ts';
export {
  bufferOf,
  bufferReplicas,
  limitReplicas,
  parseCapacityBuffer,
  percentageReplicas,
  sanitizeVirtualPodSpec,
  virtualPods,
  type CapacityBuffer,
} from './capacitybuffer.ts';
export { condition, conditionTrue, parseNodeClaim, type Condition, type NodeClaimInfo } from './nodeclaim.ts';
export {
  parseEC2NodeClass,
  toNodeClass,
  type AMIFamily,
  type AMISelectorTerm,
  type BlockDeviceMapping,
  type CapacityReservationSelectorTerm,
  type EC2NodeClass,
  type EC2NodeClassSpec,
  type EC2NodeClassStatus,
  type KubeletConfiguration,
  type SecurityGroupSelectorTerm,
  type SubnetSelectorTerm,
} from './ec2nodeclass.ts';
export {
  parseDaemonSet,
  parsePodDisruptionBudget,
  parseServiceSelector,
  parseWorkloadSelector,
  type ServiceSelector,
  type WorkloadSelector,
} from './workloads.ts';
export { CRDS, crdFileName, crdYaml, renderCrd } from './schemas/crds.ts';
export type { CrdDefinition, Schema } from './schemas/types.ts';
