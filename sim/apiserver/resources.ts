// The resource table: every kind the simulated API server serves, one line each. Discovery, routing,
// OpenAPI, printing and storage all read this table, so adding a kind is adding a line (plus, when it
// wants them, printer columns in columns.ts and defaults in defaults.ts).
import { COLUMNS, type Column } from './columns.ts';
import { DEFAULTS } from './defaults.ts';
import type { KObject } from './types.ts';

type Subresource = 'status' | 'scale' | 'eviction' | 'binding';

export interface ResourceInfo {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly subresources: readonly Subresource[];
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** A custom resource: no strategic merge patch, status dropped on create (as the real server does). */
  readonly crd: boolean;
  /** `pods`, `deployments.apps`, `nodeclaims.karpenter.sh`: the store key and the name in messages. */
  readonly key: string;
  /** `v1`, `apps/v1`. */
  readonly apiVersion: string;
  readonly columns: readonly Column[];
  /** Server-side defaulting, as the real API server's defaulters do on create. */
  readonly defaults?: (obj: KObject) => void;
}

interface Line {
  ns?: boolean;
  sub?: Subresource[];
  short?: string[];
  cat?: string[];
  crd?: boolean;
  singular?: string;
}

/** Builds one table row; `singular` defaults to the lower-cased kind. */
function resource(group: string, version: string, plural: string, kind: string, o: Line = {}): ResourceInfo {
  const key = group ? `${plural}.${group}` : plural;
  return {
    group,
    version,
    plural,
    kind,
    singular: o.singular ?? kind.toLowerCase(),
    namespaced: o.ns ?? false,
    subresources: o.sub ?? [],
    shortNames: o.short ?? [],
    categories: o.cat ?? [],
    crd: o.crd ?? false,
    key,
    apiVersion: group ? `${group}/${version}` : version,
    columns: COLUMNS[key] ?? [],
    ...(DEFAULTS[key] ? { defaults: DEFAULTS[key] } : {}),
  };
}

export const BUILTIN_RESOURCES: readonly ResourceInfo[] = [
  resource('', 'v1', 'pods', 'Pod', { ns: true, sub: ['status', 'eviction', 'binding'], short: ['po'], cat: ['all'] }),
  resource('', 'v1', 'nodes', 'Node', { sub: ['status'], short: ['no'] }),
  resource('', 'v1', 'namespaces', 'Namespace', { sub: ['status'], short: ['ns'] }),
  resource('', 'v1', 'events', 'Event', { ns: true, short: ['ev'] }),
  resource('', 'v1', 'services', 'Service', { ns: true, sub: ['status'], short: ['svc'], cat: ['all'] }),
  resource('', 'v1', 'replicationcontrollers', 'ReplicationController', {
    ns: true,
    sub: ['status', 'scale'],
    short: ['rc'],
    cat: ['all'],
  }),
  resource('', 'v1', 'configmaps', 'ConfigMap', { ns: true, short: ['cm'] }),
  resource('', 'v1', 'podtemplates', 'PodTemplate', { ns: true }),
  resource('', 'v1', 'persistentvolumes', 'PersistentVolume', { sub: ['status'], short: ['pv'] }),
  resource('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', { ns: true, sub: ['status'], short: ['pvc'] }),
  resource('apps', 'v1', 'deployments', 'Deployment', {
    ns: true,
    sub: ['status', 'scale'],
    short: ['deploy'],
    cat: ['all'],
  }),
  resource('apps', 'v1', 'replicasets', 'ReplicaSet', {
    ns: true,
    sub: ['status', 'scale'],
    short: ['rs'],
    cat: ['all'],
  }),
  resource('apps', 'v1', 'daemonsets', 'DaemonSet', { ns: true, sub: ['status'], short: ['ds'], cat: ['all'] }),
  resource('apps', 'v1', 'statefulsets', 'StatefulSet', {
    ns: true,
    sub: ['status', 'scale'],
    short: ['sts'],
    cat: ['all'],
  }),
  resource('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', {
    ns: true,
    sub: ['status'],
    short: ['pdb'],
  }),
  resource('coordination.k8s.io', 'v1', 'leases', 'Lease', { ns: true }),
  resource('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', { short: ['sc'] }),
  resource('storage.k8s.io', 'v1', 'csinodes', 'CSINode'),
  resource('storage.k8s.io', 'v1', 'volumeattachments', 'VolumeAttachment', { sub: ['status'] }),
  resource('events.k8s.io', 'v1', 'events', 'Event', { ns: true, short: ['ev'] }),
  resource('resource.k8s.io', 'v1', 'resourceslices', 'ResourceSlice'),
  resource('resource.k8s.io', 'v1', 'resourceclaims', 'ResourceClaim', { ns: true, sub: ['status'] }),
  resource('resource.k8s.io', 'v1', 'resourceclaimtemplates', 'ResourceClaimTemplate', { ns: true }),
  resource('resource.k8s.io', 'v1', 'deviceclasses', 'DeviceClass'),
  resource('karpenter.sh', 'v1', 'nodepools', 'NodePool', { sub: ['status', 'scale'], crd: true, cat: ['karpenter'] }),
  resource('karpenter.sh', 'v1', 'nodeclaims', 'NodeClaim', { sub: ['status'], crd: true, cat: ['karpenter'] }),
  resource('karpenter.sh', 'v1alpha1', 'nodeoverlays', 'NodeOverlay', {
    sub: ['status'],
    crd: true,
    short: ['overlays'],
    cat: ['karpenter'],
  }),
  resource('autoscaling.x-k8s.io', 'v1beta1', 'capacitybuffers', 'CapacityBuffer', {
    ns: true,
    sub: ['status'],
    crd: true,
    short: ['cb'],
    cat: ['autoscaling'],
  }),
  resource('karpenter.k8s.aws', 'v1', 'ec2nodeclasses', 'EC2NodeClass', {
    sub: ['status'],
    crd: true,
    short: ['ec2nc', 'ec2ncs'],
    cat: ['karpenter'],
  }),
];

/** Lookup over a resource table. */
export class ResourceTable {
  private readonly byKey = new Map<string, ResourceInfo>();
  private readonly byPath = new Map<string, ResourceInfo>();

  constructor(readonly all: readonly ResourceInfo[]) {
    for (const r of all) {
      if (this.byKey.has(r.key)) throw new Error(`resource table: ${r.key} is listed twice`);
      this.byKey.set(r.key, r);
      this.byPath.set(`${r.group}/${r.version}/${r.plural}`, r);
    }
  }

  /** By URL parts: ('', 'v1', 'pods'). */
  fromPath(group: string, version: string, plural: string): ResourceInfo | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  /**
   * By a name a caller would write: the key (`pods`, `deployments.apps`), a unique plural
   * (`nodeclaims`), or a unique kind (`NodeClaim`). Throws on an unknown or ambiguous name.
   */
  resolve(name: string | ResourceInfo): ResourceInfo {
    if (typeof name !== 'string') return name;
    const exact = this.byKey.get(name);
    if (exact) return exact;
    const lower = name.toLowerCase();
    const hits = this.all.filter((r) => r.plural === lower || r.kind.toLowerCase() === lower);
    // The core group wins over events.k8s.io for the shared names "events"/"Event".
    const core = hits.filter((r) => r.group === '');
    const pick = hits.length === 1 ? hits[0] : core.length === 1 ? core[0] : undefined;
    if (pick) return pick;
    if (hits.length > 1) throw new Error(`resource "${name}" is ambiguous: ${hits.map((r) => r.key).join(', ')}`);
    throw new Error(`unknown resource "${name}" (known: ${this.all.map((r) => r.key).join(', ')})`);
  }

  /** The group/version pairs, in table order. */
  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Set<string>();
    const out: Array<{ group: string; version: string }> = [];
    for (const r of this.all) {
      const k = `${r.group}/${r.version}`;
      if (!seen.has(k)) {
        seen.add(k);
        out.push({ group: r.group, version: r.version });
      }
    }
    return out;
  }
}
