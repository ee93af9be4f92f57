// Printer columns for `kubectl get` (Table responses). NAME always comes first and is added by table.ts;
// a kind without columns here prints NAME and AGE. The Karpenter kinds copy the additionalPrinterColumns
// of Karpenter's CRDs (karpenter.sh_nodeclaims.yaml, karpenter.sh_nodepools.yaml,
// karpenter.k8s.aws_ec2nodeclasses.yaml), so `kubectl get nodeclaims` looks like it does on a real cluster.
import type { KObject } from './types.ts';

export interface Column {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** 0 = always shown, 1 = only with -o wide. */
  readonly priority?: number;
  readonly cell: (obj: KObject, now: number) => string | number | boolean | null;
}

// Printing walks arbitrary JSON; a loose record type keeps the cell functions short.
type Any = Record<string, any>;

const at = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (v as Any | undefined)?.[k], o);
const str = (v: unknown): string => (v === undefined || v === null || v === '' ? '' : String(v));
const label = (o: KObject, k: string): string => str(o.metadata.labels?.[k]);
const condition = (o: KObject, type: string): string =>
  str(((at(o, 'status', 'conditions') as Any[] | undefined) ?? []).find((c) => c?.type === type)?.status);

/** Kubernetes' HumanDuration (apimachinery/pkg/util/duration), from creationTimestamp to now. */
export function humanAge(obj: KObject, now: number): string {
  const t = Date.parse(str(obj.metadata.creationTimestamp));
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(Math.max(0, now - t));
}

function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60 * 2) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 60 * 3) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  return `${Math.floor(h / 24 / 365)}y`;
}

const AGE: Column = { name: 'Age', type: 'date', cell: humanAge };
/** HumanDuration from a timestamp to now, or <unknown>. */
const since = (t: unknown, now: number): string => {
  const ms = Date.parse(str(t));
  return Number.isNaN(ms) ? '<unknown>' : humanDuration(Math.max(0, now - ms));
};
const c = (name: string, cell: Column['cell'], priority = 0, type: Column['type'] = 'string'): Column => ({
  name,
  type,
  priority,
  cell,
});

function podStatus(o: KObject): string {
  if (o.metadata.deletionTimestamp) return 'Terminating';
  const waiting = ((at(o, 'status', 'containerStatuses') as Any[] | undefined) ?? []).find(
    (s) => s?.state?.waiting?.reason,
  );
  return (
    str(waiting?.state?.waiting?.reason) || str(at(o, 'status', 'reason')) || str(at(o, 'status', 'phase')) || 'Pending'
  );
}

function podReady(o: KObject): string {
  const containers = (at(o, 'spec', 'containers') as Any[] | undefined) ?? [];
  const ready = ((at(o, 'status', 'containerStatuses') as Any[] | undefined) ?? []).filter((s) => s?.ready).length;
  return `${ready}/${containers.length}`;
}

function nodeStatus(o: KObject): string {
  const ready = condition(o, 'Ready');
  const s = ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown';
  return at(o, 'spec', 'unschedulable') ? `${s},SchedulingDisabled` : s;
}

function nodeRoles(o: KObject): string {
  const roles = Object.keys(o.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice(24));
  return roles.length ? roles.sort().join(',') : '<none>';
}

const address = (o: KObject, type: string): string =>
  str(((at(o, 'status', 'addresses') as Any[] | undefined) ?? []).find((a) => a?.type === type)?.address) || '<none>';
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const orNone = (v: unknown): string => str(v) || '<none>';

export const COLUMNS: Record<string, readonly Column[]> = {
  pods: [
    c('Ready', podReady),
    c('Status', podStatus),
    c(
      'Restarts',
      (o) =>
        ((at(o, 'status', 'containerStatuses') as Any[] | undefined) ?? []).reduce(
          (n, s) => n + num(s?.restartCount),
          0,
        ),
      0,
      'integer',
    ),
    AGE,
    c('IP', (o) => orNone(at(o, 'status', 'podIP')), 1),
    c('Node', (o) => orNone(at(o, 'spec', 'nodeName')), 1),
    c('Nominated Node', (o) => orNone(at(o, 'status', 'nominatedNodeName')), 1),
  ],
  nodes: [
    c('Status', nodeStatus),
    c('Roles', nodeRoles),
    AGE,
    c('Version', (o) => str(at(o, 'status', 'nodeInfo', 'kubeletVersion'))),
    c('Internal-IP', (o) => address(o, 'InternalIP'), 1),
    c('External-IP', (o) => address(o, 'ExternalIP'), 1),
    c('OS-Image', (o) => str(at(o, 'status', 'nodeInfo', 'osImage')), 1),
  ],
  namespaces: [c('Status', (o) => str(at(o, 'status', 'phase'))), AGE],
  'deployments.apps': [
    c('Ready', (o) => `${num(at(o, 'status', 'readyReplicas'))}/${num(at(o, 'spec', 'replicas'))}`),
    c('Up-to-date', (o) => num(at(o, 'status', 'updatedReplicas')), 0, 'integer'),
    c('Available', (o) => num(at(o, 'status', 'availableReplicas')), 0, 'integer'),
    AGE,
  ],
  'replicasets.apps': [
    c('Desired', (o) => num(at(o, 'spec', 'replicas')), 0, 'integer'),
    c('Current', (o) => num(at(o, 'status', 'replicas')), 0, 'integer'),
    c('Ready', (o) => num(at(o, 'status', 'readyReplicas')), 0, 'integer'),
    AGE,
  ],
  'daemonsets.apps': [
    c('Desired', (o) => num(at(o, 'status', 'desiredNumberScheduled')), 0, 'integer'),
    c('Current', (o) => num(at(o, 'status', 'currentNumberScheduled')), 0, 'integer'),
    c('Ready', (o) => num(at(o, 'status', 'numberReady')), 0, 'integer'),
    c('Available', (o) => num(at(o, 'status', 'numberAvailable')), 0, 'integer'),
    AGE,
  ],
  'poddisruptionbudgets.policy': [
    c('Min Available', (o) => str(at(o, 'spec', 'minAvailable')) || 'N/A'),
    c('Max Unavailable', (o) => str(at(o, 'spec', 'maxUnavailable')) || 'N/A'),
    c('Allowed Disruptions', (o) => num(at(o, 'status', 'disruptionsAllowed')), 0, 'integer'),
    AGE,
  ],
  'leases.coordination.k8s.io': [c('Holder', (o) => str(at(o, 'spec', 'holderIdentity'))), AGE],
  // As the real server prints core/v1 Events (kubectl get events): last seen, type, reason, object, message.
  events: [
    c('Last Seen', (o, now) => since(o['lastTimestamp'] ?? o['eventTime'] ?? o.metadata.creationTimestamp, now)),
    c('Type', (o) => str(o['type'])),
    c('Reason', (o) => str(o['reason'])),
    c('Object', (o) => `${str(at(o, 'involvedObject', 'kind')).toLowerCase()}/${str(at(o, 'involvedObject', 'name'))}`),
    c('Subobject', (o) => str(at(o, 'involvedObject', 'fieldPath')), 1),
    c('Source', (o) => [str(at(o, 'source', 'component')), str(at(o, 'source', 'host'))].filter(Boolean).join(', '), 1),
    c('Message', (o) => str(o['message'])),
    c('First Seen', (o, now) => since(o['firstTimestamp'] ?? o['eventTime'] ?? o.metadata.creationTimestamp, now), 1),
    c('Count', (o) => num(o['count']) || 1, 1, 'integer'),
    c('Name', (o) => str(o.metadata.name), 1),
  ],
  'nodeclaims.karpenter.sh': [
    c('Type', (o) => label(o, 'node.kubernetes.io/instance-type')),
    c('Capacity', (o) => label(o, 'karpenter.sh/capacity-type')),
    c('Zone', (o) => label(o, 'topology.kubernetes.io/zone')),
    c('Node', (o) => str(at(o, 'status', 'nodeName'))),
    c('Ready', (o) => condition(o, 'Ready')),
    AGE,
    c('ImageID', (o) => str(at(o, 'status', 'imageID')), 1),
    c('ID', (o) => str(at(o, 'status', 'providerID')), 1),
    c('NodePool', (o) => label(o, 'karpenter.sh/nodepool'), 1),
    c('NodeClass', (o) => str(at(o, 'spec', 'nodeClassRef', 'name')), 1),
    c('Drifted', (o) => condition(o, 'Drifted'), 1),
  ],
  'nodepools.karpenter.sh': [
    c('NodeClass', (o) => str(at(o, 'spec', 'template', 'spec', 'nodeClassRef', 'name'))),
    c('Nodes', (o) => str(at(o, 'status', 'resources', 'nodes'))),
    c('Ready', (o) => condition(o, 'Ready')),
    AGE,
    c('Weight', (o) => str(at(o, 'spec', 'weight')), 1),
    c('CPU', (o) => str(at(o, 'status', 'resources', 'cpu')), 1),
    c('Memory', (o) => str(at(o, 'status', 'resources', 'memory')), 1),
  ],
  'ec2nodeclasses.karpenter.k8s.aws': [
    c('Ready', (o) => condition(o, 'Ready')),
    AGE,
    c('Role', (o) => str(at(o, 'spec', 'role')), 1),
  ],
};
