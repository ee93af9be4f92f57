// NodeClaim (karpenter.sh/v1): the schema of Karpenter v1.14's CRD. Its spec is immutable once created.
import { conditions, duration, nillableDuration, nodeClassRef, requirements, resourceList, taints } from './common.ts';
import { deepEqual } from '../equal.ts';
import type { CrdDefinition, Schema } from './types.ts';

const nodeClaimSpec: Schema = {
  type: 'object',
  description: 'The node Karpenter should launch: its constraints, resources and node class.',
  required: ['requirements', 'nodeClassRef'],
  properties: {
    taints: taints('Taints applied to the node.'),
    startupTaints: taints('Taints applied at boot that a daemon is expected to remove.'),
    requirements: requirements('nodeclaim'),
    resources: {
      type: 'object',
      properties: {
        requests: { ...resourceList, description: 'Resources the node must provide for the pods it was launched for.' },
      },
    },
    nodeClassRef,
    terminationGracePeriod: duration('Maximum time to drain the node before its pods are deleted forcefully.'),
    expireAfter: { ...nillableDuration('Node lifetime, measured from creation, or Never.'), default: '720h' },
  },
  rules: [
    {
      rule: 'self == oldSelf',
      message:
        'spec is immutable: a NodeClaim cannot be changed once created (delete it and let Karpenter create a new one)',
      transition: true,
      check: (self: unknown, oldSelf: unknown) => deepEqual(self, oldSelf),
    },
  ],
};

const nodeClaimStatus: Schema = {
  type: 'object',
  properties: {
    nodeName: { type: 'string' },
    providerID: { type: 'string' },
    imageID: { type: 'string' },
    capacity: resourceList,
    allocatable: resourceList,
    conditions,
    lastPodEventTime: { type: 'string', format: 'date-time' },
  },
};

export const NODECLAIM_CRD: CrdDefinition = {
  group: 'karpenter.sh',
  version: 'v1',
  kind: 'NodeClaim',
  plural: 'nodeclaims',
  singular: 'nodeclaim',
  listKind: 'NodeClaimList',
  categories: ['karpenter'],
  scope: 'Cluster',
  description: 'NodeClaim is a request for one node, and its lifecycle from launch to termination.',
  specRequired: true,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.metadata.labels.node\\.kubernetes\\.io/instance-type' },
    { name: 'Capacity', type: 'string', jsonPath: '.metadata.labels.karpenter\\.sh/capacity-type' },
    { name: 'Zone', type: 'string', jsonPath: '.metadata.labels.topology\\.kubernetes\\.io/zone' },
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'ImageID', type: 'string', jsonPath: '.status.imageID', priority: 1 },
    { name: 'ID', type: 'string', jsonPath: '.status.providerID', priority: 1 },
    { name: 'NodePool', type: 'string', jsonPath: '.metadata.labels.karpenter\\.sh/nodepool', priority: 1 },
    { name: 'NodeClass', type: 'string', jsonPath: '.spec.nodeClassRef.name', priority: 1 },
    { name: 'Drifted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Drifted")].status', priority: 1 },
  ],
  spec: nodeClaimSpec,
  status: nodeClaimStatus,
};
