// EC2NodeClass node-level settings: kubelet (the typed v1.14.1 struct), block devices, instance metadata
// options, network interfaces, connection tracking and CPU options.
import { QUANTITY_PATTERN } from './common.ts';
import type { CelRule, Schema, Violation } from './types.ts';

const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
];
const RESERVED_KEYS = ['cpu', 'memory', 'ephemeral-storage', 'pid'];
const QUANTITY_BODY = QUANTITY_PATTERN.slice(1, -1);

function keysIn(field: string, allowed: readonly string[]): CelRule {
  return {
    rule: `self.all(x, x in [${allowed.map((k) => `'${k}'`).join(',')}])`,
    message: `valid keys for ${field} are ${allowed.join(', ')}`,
    check: (self: Record<string, unknown>) => {
      const bad = Object.keys(self)
        .filter((k) => !allowed.includes(k))
        .map((k) => ({ path: [{ key: k }] }));
      return bad.length === 0 ? true : bad;
    },
  };
}

const notNegative = (field: string): CelRule => ({
  rule: "self.all(x, !self[x].startsWith('-'))",
  message: `${field} values cannot be negative`,
  check: (self: Record<string, string>) => {
    const bad = Object.entries(self)
      .filter(([, v]) => v.startsWith('-'))
      .map(([k]) => ({ path: [{ key: k }] }));
    return bad.length === 0 ? true : bad;
  },
});

const reserved = (field: string): Schema => ({
  type: 'object',
  additionalProperties: {
    type: 'string',
    pattern: QUANTITY_PATTERN,
    patternHint: 'is not a quantity (e.g. 100m, 1Gi)',
  },
  rules: [keysIn(field, RESERVED_KEYS), notNegative(field)],
});

const eviction = (field: string): Schema => ({
  type: 'object',
  additionalProperties: {
    type: 'string',
    pattern: `^((\\d{1,2}(\\.\\d{1,2})?|100(\\.0{1,2})?)%|${QUANTITY_BODY})$`,
    patternHint: 'must be a percentage such as 10% or a quantity such as 500Mi',
  },
  rules: [keysIn(field, EVICTION_SIGNALS)],
});

interface KubeletValue {
  imageGCHighThresholdPercent?: number;
  imageGCLowThresholdPercent?: number;
  evictionSoft?: Record<string, string>;
  evictionSoftGracePeriod?: Record<string, string>;
}

function matching(
  from: 'evictionSoft' | 'evictionSoftGracePeriod',
  to: 'evictionSoft' | 'evictionSoftGracePeriod',
): CelRule {
  return {
    rule: `has(self.${from}) ? (has(self.${to}) && self.${from}.all(e, e in self.${to})) : true`,
    message: `every ${from} signal needs a matching ${to} entry`,
    check: (self: KubeletValue) => {
      const bad: Violation[] = Object.keys(self[from] ?? {})
        .filter((k) => self[to]?.[k] === undefined)
        .map((k) => ({ path: [from, { key: k }], message: `has no matching ${to} entry` }));
      return bad.length === 0 ? true : bad;
    },
  };
}

export const kubelet: Schema = {
  type: 'object',
  description: 'Kubelet settings for the nodes (the subset Karpenter v1.14 types).',
  properties: {
    clusterDNS: { type: 'array', items: { type: 'string' } },
    maxPods: { type: 'integer', format: 'int32', minimum: 0 },
    podsPerCore: { type: 'integer', format: 'int32', minimum: 0 },
    systemReserved: reserved('systemReserved'),
    kubeReserved: reserved('kubeReserved'),
    evictionHard: eviction('evictionHard'),
    evictionSoft: eviction('evictionSoft'),
    evictionSoftGracePeriod: {
      type: 'object',
      additionalProperties: {
        type: 'string',
        pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$',
        patternHint: 'must be a duration such as 1m or 1m30s',
      },
      rules: [keysIn('evictionSoftGracePeriod', EVICTION_SIGNALS)],
    },
    evictionMaxPodGracePeriod: { type: 'integer', format: 'int32' },
    imageGCHighThresholdPercent: { type: 'integer', format: 'int32', minimum: 0, maximum: 100 },
    imageGCLowThresholdPercent: { type: 'integer', format: 'int32', minimum: 0, maximum: 100 },
    cpuCFSQuota: { type: 'boolean' },
  },
  rules: [
    {
      rule: 'has(self.imageGCHighThresholdPercent) && has(self.imageGCLowThresholdPercent) ? self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent : true',
      message: 'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent',
      check: (self: KubeletValue) =>
        self.imageGCHighThresholdPercent === undefined ||
        self.imageGCLowThresholdPercent === undefined ||
        self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent,
    },
    matching('evictionSoft', 'evictionSoftGracePeriod'),
    matching('evictionSoftGracePeriod', 'evictionSoft'),
  ],
};

interface Ebs {
  snapshotID?: string;
  volumeSize?: string;
  volumeInitializationRate?: number;
}

const VOLUME_SIZE_PATTERN =
  '^(([1-9][0-9]{0,3}|[1-4][0-9]{4}|5[0-8][0-9]{3}|59000)Gi|([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-3][0-9]{3}|64000)G|([1-9]|[1-4][0-9]|5[0-8])Ti|([1-9]|[1-5][0-9]|6[0-4])T)$';

const ebs: Schema = {
  type: 'object',
  properties: {
    deleteOnTermination: { type: 'boolean' },
    encrypted: { type: 'boolean' },
    iops: { type: 'integer', format: 'int64' },
    kmsKeyID: { type: 'string' },
    snapshotID: { type: 'string' },
    throughput: { type: 'integer', format: 'int64' },
    volumeInitializationRate: { type: 'integer', format: 'int32', minimum: 100, maximum: 300 },
    volumeSize: {
      type: 'string',
      pattern: VOLUME_SIZE_PATTERN,
      patternHint: 'must be a whole size in Gi (1-59000), G (1-64000), Ti (1-58) or T (1-64), such as 100Gi',
    },
    volumeType: { type: 'string', enum: ['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3'] },
  },
  rules: [
    {
      rule: 'has(self.snapshotID) || has(self.volumeSize)',
      message: 'an EBS volume needs a snapshotID or a volumeSize',
      check: (self: Ebs) => self.snapshotID !== undefined || self.volumeSize !== undefined,
    },
    {
      rule: "!has(self.volumeInitializationRate) || (has(self.snapshotID) && self.snapshotID != '')",
      message: 'volumeInitializationRate needs a snapshotID',
      check: (self: Ebs) => self.volumeInitializationRate === undefined || (self.snapshotID ?? '') !== '',
    },
  ],
};

export const blockDeviceMappings: Schema = {
  type: 'array',
  maxItems: 50,
  items: {
    type: 'object',
    properties: { deviceName: { type: 'string' }, ebs, rootVolume: { type: 'boolean' } },
  },
  rules: [
    {
      rule: 'self.filter(x, has(x.rootVolume) ? x.rootVolume == true : false).size() <= 1',
      message: 'at most one block device mapping may be the root volume',
      check: (self: { rootVolume?: boolean }[]) => self.filter((x) => x.rootVolume === true).length <= 1,
    },
  ],
};

export const metadataOptions: Schema = {
  type: 'object',
  description: 'Instance Metadata Service options of the launch template.',
  default: {
    httpEndpoint: 'enabled',
    httpProtocolIPv6: 'disabled',
    httpPutResponseHopLimit: 1,
    httpTokens: 'required',
  },
  properties: {
    httpEndpoint: { type: 'string', default: 'enabled', enum: ['enabled', 'disabled'] },
    httpProtocolIPv6: { type: 'string', default: 'disabled', enum: ['enabled', 'disabled'] },
    httpPutResponseHopLimit: { type: 'integer', format: 'int64', default: 1, minimum: 1, maximum: 64 },
    httpTokens: { type: 'string', default: 'required', enum: ['required', 'optional'] },
  },
};

interface Nic {
  networkCardIndex?: number;
  deviceIndex?: number;
  interfaceType?: string;
}

export const networkInterfaces: Schema = {
  type: 'array',
  description: "Network interfaces of the instances (ASSUMED constraints: EC2's).",
  maxItems: 64,
  items: {
    type: 'object',
    required: ['networkCardIndex', 'deviceIndex'],
    properties: {
      networkCardIndex: { type: 'integer', format: 'int32', minimum: 0 },
      deviceIndex: { type: 'integer', format: 'int32', minimum: 0 },
      interfaceType: { type: 'string', default: 'interface', enum: ['interface', 'efa-only'] },
    },
  },
  rules: [
    {
      rule: "self.size() == 0 || self.exists(x, x.networkCardIndex == 0 && x.deviceIndex == 0 && x.interfaceType == 'interface')",
      message:
        'the network interfaces must include the primary interface: networkCardIndex 0, deviceIndex 0, interfaceType interface',
      check: (self: Nic[]) =>
        self.length === 0 ||
        self.some((x) => x.networkCardIndex === 0 && x.deviceIndex === 0 && x.interfaceType === 'interface'),
    },
    {
      rule: 'self.all(x, self.filter(y, y.networkCardIndex == x.networkCardIndex && y.deviceIndex == x.deviceIndex).size() == 1)',
      message: 'two network interfaces use the same networkCardIndex and deviceIndex',
      check: (self: Nic[]) => {
        const seen = new Set<string>();
        const bad: Violation[] = [];
        self.forEach((x, i) => {
          const k = `${x.networkCardIndex}/${x.deviceIndex}`;
          if (seen.has(k)) bad.push({ path: [i] });
          seen.add(k);
        });
        return bad.length === 0 ? true : bad;
      },
    },
  ],
};

export const connectionTracking: Schema = {
  type: 'object',
  description: 'Connection tracking timeouts in seconds (ASSUMED shape: EC2 ConnectionTrackingSpecification).',
  properties: {
    tcpEstablishedTimeout: { type: 'integer', format: 'int32', minimum: 60, maximum: 432000 },
    udpStreamTimeout: { type: 'integer', format: 'int32', minimum: 60, maximum: 180 },
    udpTimeout: { type: 'integer', format: 'int32', minimum: 30, maximum: 60 },
  },
};

export const cpuOptions: Schema = {
  type: 'object',
  description: 'CPU options (ASSUMED shape).',
  properties: { nestedVirtualization: { type: 'string', enum: ['enabled', 'disabled'] } },
};
