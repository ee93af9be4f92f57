// CapacityBuffer (autoscaling.x-k8s.io/v1beta1, feature gate CapacityBuffer): the schema of the CRD Karpenter
// serves (core pkg/apis/crds/autoscaling.x-k8s.io_capacitybuffers.yaml and pkg/apis/autoscaling/v1beta1/
// capacitybuffer.go, main at 2266468): a pod shape (podTemplateRef, or scalableRef to a Deployment,
// StatefulSet or ReplicaSet of the same namespace) and how many of it to keep room for (replicas, a
// percentage of the scalable's replicas, resource limits). Karpenter's two CEL rules and their messages are
// kept as they are (users match on them); the descriptions are ours.
import { conditions, quantity } from './common.ts';
import type { CrdDefinition, Schema } from './types.ts';

const ACTIVE_CAPACITY_STRATEGY = 'buffer.x-k8s.io/active-capacity';

const localRef = (description: string): Schema => ({
  type: 'object',
  description,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, description: 'The name of the object, in the same namespace.' } },
});

const spec: Schema = {
  type: 'object',
  hint: 'a CapacityBuffer needs spec.podTemplateRef or spec.scalableRef',
  properties: {
    provisioningStrategy: {
      type: 'string',
      default: ACTIVE_CAPACITY_STRATEGY,
      description: `How the buffer is kept; ${ACTIVE_CAPACITY_STRATEGY} (the default) keeps the room at all times.`,
    },
    podTemplateRef: localRef('A PodTemplate giving the shape of one buffer chunk (one pod).'),
    scalableRef: {
      type: 'object',
      description: 'A Deployment, StatefulSet or ReplicaSet whose pod template is the shape of one buffer chunk.',
      required: ['kind', 'name'],
      properties: {
        apiGroup: { type: 'string', description: 'The API group of the object (apps when empty).' },
        kind: { type: 'string', minLength: 1, description: 'Deployment, StatefulSet or ReplicaSet.' },
        name: { type: 'string', minLength: 1, description: 'The name of the object, in the same namespace.' },
      },
    },
    replicas: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      description: 'How many chunks to keep room for (the larger of this and percentage when both are set).',
    },
    percentage: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      description: "Chunks as a percentage of the scalableRef's replicas, rounded up (at least one).",
    },
    limits: {
      type: 'object',
      description: 'Resource totals the chunks may not exceed; alone, as many chunks as fit in them.',
      additionalProperties: quantity,
    },
  },
  rules: [
    {
      rule: '!has(self.podTemplateRef) || has(self.replicas) || has(self.limits)',
      message: 'If podTemplateRef is set, replicas or limits must also be set',
      check: (self: { podTemplateRef?: unknown; replicas?: unknown; limits?: unknown }) =>
        self.podTemplateRef === undefined || self.replicas !== undefined || self.limits !== undefined,
    },
    {
      rule: '!(has(self.podTemplateRef) && has(self.scalableRef))',
      message: 'You must define either PodTemplateRef or ScalableRef, but not both',
      check: (self: { podTemplateRef?: unknown; scalableRef?: unknown }) =>
        !(self.podTemplateRef !== undefined && self.scalableRef !== undefined),
    },
  ],
};

const status: Schema = {
  type: 'object',
  properties: {
    conditions,
    podTemplateRef: localRef('The PodTemplate the buffer was resolved from (podTemplateRef buffers).'),
    podTemplateGeneration: { type: 'integer', format: 'int64', description: 'The generation of that PodTemplate.' },
    replicas: { type: 'integer', format: 'int32', description: 'The number of chunks the buffer keeps room for.' },
    provisioningStrategy: { type: 'string', description: 'The strategy in effect.' },
  },
};

export const CAPACITYBUFFER_CRD: CrdDefinition = {
  group: 'autoscaling.x-k8s.io',
  version: 'v1beta1',
  kind: 'CapacityBuffer',
  plural: 'capacitybuffers',
  singular: 'capacitybuffer',
  listKind: 'CapacityBufferList',
  shortNames: ['cb'],
  categories: ['autoscaling'],
  scope: 'Namespaced',
  description:
    'CapacityBuffer keeps spare room in the cluster for a number of pods of a given shape, so that they schedule without waiting for a node.',
  specRequired: true,
  printerColumns: [
    { name: 'Strategy', type: 'string', jsonPath: '.spec.provisioningStrategy' },
    { name: 'PodTemplate', type: 'string', jsonPath: '.status.podTemplateRef.name' },
    { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas' },
    { name: 'ConditionsType', type: 'string', jsonPath: '.status.conditions[*].type' },
    { name: 'ConditionsStatus', type: 'string', jsonPath: '.status.conditions[*].status' },
    { name: 'ConditionsReason', type: 'string', jsonPath: '.status.conditions[*].reason' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  spec,
  status,
};
