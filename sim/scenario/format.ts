// The scenario format: a YAML document of timed steps the simulator runs in order (docs/controller.md,
// "Scenarios"). Parsing checks every step and reports each problem with its path
// ("steps[3].scale.replicas: must be a whole number >= 0"), before anything runs.
import { parseDocuments, parseGoDuration } from '../../engine/index.ts';
import { OPTION_SPECS, OptionsError, resolveOptions } from '../../controller/operator/options.ts';
import type { SimReservationSpec } from '../environment.ts';

/** A count condition: exactly N, or a comparison such as ">=1", "<3". */
export interface Count {
  readonly op: '==' | '>=' | '<=' | '>' | '<';
  readonly n: number;
}

/** What waitFor and expect look at; every given field must hold. */
export interface Conditions {
  readonly nodes?: Count;
  readonly readyNodes?: Count;
  readonly nodeClaims?: Count;
  readonly runningPods?: Count;
  readonly pendingPods?: Count;
  /** Label selector for the pod counts (key=value,...); default all pods outside kube-system. */
  readonly selector?: string;
  /** Namespace for the pod counts (default all but kube-system). */
  readonly namespace?: string;
  /** Events with this reason (any object). */
  readonly events?: { readonly reason: string; readonly count: Count; readonly message?: string };
  /** Nodes by capacity type. */
  readonly spotNodes?: Count;
  readonly onDemandNodes?: Count;
  readonly reservedNodes?: Count;
  /** NodeClaims with Drifted=True. */
  readonly driftedNodeClaims?: Count;
  /** Distinct zones of the nodes the counted (running) pods are on. */
  readonly podZones?: Count;
  /** Nodes of one NodePool: { nodePool, count }. */
  readonly nodePoolNodes?: { readonly nodePool: string; readonly count: Count };
  /** Sum of the running instances' prices, $/h. */
  readonly costPerHourAtMost?: number;
}

/** What an `interrupt` step can send (the simulated cloud's interruption kinds). */
const INTERRUPT_EVENTS = [
  'spotInterruption',
  'scheduledChange',
  'rebalanceRecommendation',
  'capacityReservationInterruption',
  'stateChange',
] as const;
type InterruptEvent = (typeof INTERRUPT_EVENTS)[number];

export type Step =
  | { readonly kind: 'apply'; readonly file?: string; readonly yaml?: string }
  | { readonly kind: 'delete'; readonly resource: string; readonly name: string; readonly namespace?: string }
  | { readonly kind: 'scale'; readonly deployment: string; readonly namespace: string; readonly replicas: number }
  | { readonly kind: 'scale'; readonly nodePool: string; readonly replicas: number }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'waitFor'; readonly conditions: Conditions; readonly timeoutMs: number }
  | { readonly kind: 'expect'; readonly conditions: Conditions }
  | { readonly kind: 'ice'; readonly instanceType?: string; readonly zone?: string; readonly capacityType?: string }
  | { readonly kind: 'clearIce' }
  | {
      readonly kind: 'interrupt';
      readonly node?: string;
      readonly nodePool?: string;
      readonly event: InterruptEvent;
      readonly state?: string;
    }
  | {
      readonly kind: 'nodeCondition';
      readonly node?: string;
      readonly nodePool?: string;
      readonly type: string;
      readonly status: 'True' | 'False' | 'Unknown';
      readonly reason?: string;
    }
  | { readonly kind: 'say'; readonly text: string }
  | { readonly kind: 'table' };

/** A capacity reservation in the simulated account (what `startSimulation` takes). */
type ScenarioReservation = SimReservationSpec;

export interface Scenario {
  readonly name: string;
  readonly description?: string;
  readonly region?: string;
  readonly clusterName?: string;
  /** Capacity reservations (ODCRs, capacity blocks) the simulated account has. */
  readonly capacityReservations?: readonly ScenarioReservation[];
  /** Default speed-up of the simulated clock. */
  readonly speed?: number;
  /** When the simulated clock starts (ms since the epoch); default the current time. */
  readonly start?: number;
  /** Controller options by flag name (feature-gates, ...), as the chart's settings would set them. */
  readonly options?: Readonly<Record<string, string>>;
  readonly steps: readonly Step[];
}

export class ScenarioError extends Error {
  override name = 'ScenarioError';
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const STEP_KINDS = [
  'apply',
  'delete',
  'scale',
  'wait',
  'waitFor',
  'expect',
  'ice',
  'clearIce',
  'interrupt',
  'nodeCondition',
  'say',
  'table',
] as const;
const COUNT_FIELDS = [
  'nodes',
  'readyNodes',
  'nodeClaims',
  'runningPods',
  'pendingPods',
  'spotNodes',
  'onDemandNodes',
  'reservedNodes',
  'driftedNodeClaims',
  'podZones',
] as const;
const DELETABLE = [
  'NodePool',
  'NodeClaim',
  'EC2NodeClass',
  'Node',
  'Deployment',
  'Pod',
  'DaemonSet',
  'PodDisruptionBudget',
  'CapacityBuffer',
  'PodTemplate',
];

class Checker {
  readonly problems: string[] = [];
  err(path: string, msg: string): void {
    this.problems.push(`${path}: ${msg}`);
  }
  str(v: unknown, path: string, required = true): string | undefined {
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v === '')
      this.err(path, required ? 'is required (a non-empty string)' : 'must be a non-empty string');
    return typeof v === 'string' && v !== '' ? v : undefined;
  }
  duration(v: unknown, path: string): number | undefined {
    const r = typeof v === 'string' ? parseGoDuration(v) : undefined;
    if (!r || !r.ok || Number(r.ns) < 0) {
      this.err(path, `must be a duration such as 30s, 5m or 1h30m${r && !r.ok ? ` (${r.message})` : ''}`);
      return undefined;
    }
    return Number(r.ns) / 1e6;
  }
  count(v: unknown, path: string): Count | undefined {
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return { op: '==', n: v };
    const m = typeof v === 'string' ? /^\s*(>=|<=|>|<|==)?\s*(\d+)\s*$/.exec(v) : null;
    if (!m) {
      this.err(path, `must be a count: a whole number, or a comparison such as ">=1" (got ${JSON.stringify(v)})`);
      return undefined;
    }
    return { op: (m[1] ?? '==') as Count['op'], n: Number(m[2]) };
  }
  keys(o: Obj, path: string, allowed: readonly string[]): void {
    for (const k of Object.keys(o))
      if (!allowed.includes(k)) this.err(`${path}.${k}`, `unknown field (allowed: ${allowed.join(', ')})`);
  }
}

function conditions(c: Checker, v: unknown, path: string): Conditions {
  if (!isObj(v)) {
    c.err(path, 'must be a mapping of conditions (nodes, runningPods, ...)');
    return {};
  }
  c.keys(v, path, [
    ...COUNT_FIELDS,
    'selector',
    'namespace',
    'events',
    'nodePoolNodes',
    'costPerHourAtMost',
    'timeout',
  ]);
  const out: Record<string, unknown> = {};
  for (const f of COUNT_FIELDS) if (v[f] !== undefined) out[f] = c.count(v[f], `${path}.${f}`);
  if (v['selector'] !== undefined) out['selector'] = c.str(v['selector'], `${path}.selector`);
  if (v['namespace'] !== undefined) out['namespace'] = c.str(v['namespace'], `${path}.namespace`);
  const ev = v['events'];
  if (ev !== undefined) {
    if (!isObj(ev)) c.err(`${path}.events`, 'must be { reason, count, message? }');
    else {
      c.keys(ev, `${path}.events`, ['reason', 'count', 'message']);
      out['events'] = {
        reason: c.str(ev['reason'], `${path}.events.reason`),
        count: c.count(ev['count'] ?? '>=1', `${path}.events.count`),
        ...(ev['message'] !== undefined ? { message: c.str(ev['message'], `${path}.events.message`) } : {}),
      };
    }
  }
  const np = v['nodePoolNodes'];
  if (np !== undefined) {
    if (!isObj(np)) c.err(`${path}.nodePoolNodes`, 'must be { nodePool, count }');
    else
      out['nodePoolNodes'] = {
        nodePool: c.str(np['nodePool'], `${path}.nodePoolNodes.nodePool`),
        count: c.count(np['count'], `${path}.nodePoolNodes.count`),
      };
  }
  if (v['costPerHourAtMost'] !== undefined) {
    if (typeof v['costPerHourAtMost'] !== 'number' || !(v['costPerHourAtMost'] >= 0))
      c.err(`${path}.costPerHourAtMost`, 'must be a number of dollars per hour');
    else out['costPerHourAtMost'] = v['costPerHourAtMost'];
  }
  if (Object.keys(out).filter((k) => k !== 'selector' && k !== 'namespace').length === 0)
    c.err(path, 'names no condition');
  return out as Conditions;
}

function step(c: Checker, raw: unknown, path: string): Step | undefined {
  if (typeof raw === 'string' && (raw === 'table' || raw === 'clearIce')) return { kind: raw };
  if (!isObj(raw)) {
    c.err(path, `must be a mapping with one of: ${STEP_KINDS.join(', ')}`);
    return undefined;
  }
  const kinds = Object.keys(raw).filter((k) => (STEP_KINDS as readonly string[]).includes(k));
  if (kinds.length !== 1) {
    c.err(
      path,
      kinds.length ? `has ${kinds.join(' and ')}; one step does one thing` : `needs one of: ${STEP_KINDS.join(', ')}`,
    );
    return undefined;
  }
  const kind = kinds[0] as (typeof STEP_KINDS)[number];
  const extra = Object.keys(raw).filter((k) => k !== kind && !(kind === 'waitFor' && k === 'timeout'));
  for (const k of extra) c.err(`${path}.${k}`, `unknown field next to ${kind}`);
  const v = raw[kind];
  const p = `${path}.${kind}`;
  switch (kind) {
    case 'apply':
      if (typeof v === 'string') return { kind, file: v };
      if (isObj(v) && (typeof v['file'] === 'string' || typeof v['yaml'] === 'string')) {
        c.keys(v, p, ['file', 'yaml']);
        return {
          kind,
          ...(typeof v['file'] === 'string' ? { file: v['file'] } : {}),
          ...(typeof v['yaml'] === 'string' ? { yaml: v['yaml'] } : {}),
        };
      }
      c.err(p, 'must be a file path, or { file } or { yaml: <inline manifests> }');
      return undefined;
    case 'delete': {
      if (!isObj(v)) return void c.err(p, 'must be { kind, name, namespace? }');
      c.keys(v, p, ['kind', 'name', 'namespace']);
      const resource = c.str(v['kind'], `${p}.kind`);
      if (resource && !DELETABLE.includes(resource)) c.err(`${p}.kind`, `must be one of ${DELETABLE.join(', ')}`);
      const name = c.str(v['name'], `${p}.name`);
      const namespace = c.str(v['namespace'], `${p}.namespace`, false);
      return resource && name ? { kind, resource, name, ...(namespace ? { namespace } : {}) } : undefined;
    }
    case 'scale':
      return scale(c, v, p);
    case 'wait': {
      const ms = c.duration(v, p);
      return ms === undefined ? undefined : { kind, ms };
    }
    case 'waitFor': {
      const timeoutRaw = isObj(v) && v['timeout'] !== undefined ? v['timeout'] : (raw['timeout'] ?? '10m');
      const timeoutMs = c.duration(timeoutRaw, `${p}.timeout`) ?? 0;
      return { kind, conditions: conditions(c, v, p), timeoutMs };
    }
    case 'expect':
      return { kind, conditions: conditions(c, v, p) };
    case 'ice':
      return ice(c, v, p);
    case 'clearIce':
      return { kind };
    case 'interrupt':
      return interrupt(c, v, p);
    case 'nodeCondition':
      return nodeCondition(c, v, p);
    case 'say':
      return typeof v === 'string' ? { kind, text: v } : void c.err(p, 'must be a string');
    case 'table':
      return { kind };
  }
}

/** { deployment, replicas, namespace? }, or { nodePool, replicas } for a static NodePool (kubectl scale nodepool). */
function scale(c: Checker, v: unknown, p: string): Step | undefined {
  if (!isObj(v)) return void c.err(p, 'must be { deployment, replicas, namespace? } or { nodePool, replicas }');
  const replicas = v['replicas'];
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
    c.err(`${p}.replicas`, 'must be a whole number >= 0');
  if (v['nodePool'] !== undefined) {
    c.keys(v, p, ['nodePool', 'replicas']);
    const nodePool = c.str(v['nodePool'], `${p}.nodePool`);
    return nodePool && typeof replicas === 'number' ? { kind: 'scale', nodePool, replicas } : undefined;
  }
  c.keys(v, p, ['deployment', 'replicas', 'namespace']);
  const deployment = c.str(v['deployment'], `${p}.deployment`);
  return deployment && typeof replicas === 'number'
    ? { kind: 'scale', deployment, replicas, namespace: c.str(v['namespace'], `${p}.namespace`, false) ?? 'default' }
    : undefined;
}

function ice(c: Checker, v: unknown, p: string): Step | undefined {
  if (!isObj(v))
    return void c.err(p, 'must be { instanceType?, zone?, capacityType? } (omitted fields match every offering)');
  c.keys(v, p, ['instanceType', 'zone', 'capacityType']);
  const ct = c.str(v['capacityType'], `${p}.capacityType`, false);
  if (ct && ct !== 'spot' && ct !== 'on-demand') c.err(`${p}.capacityType`, 'must be spot or on-demand');
  const it = c.str(v['instanceType'], `${p}.instanceType`, false);
  const zone = c.str(v['zone'], `${p}.zone`, false);
  return {
    kind: 'ice',
    ...(it ? { instanceType: it } : {}),
    ...(zone ? { zone } : {}),
    ...(ct ? { capacityType: ct } : {}),
  };
}

function interrupt(c: Checker, v: unknown, p: string): Step | undefined {
  if (!isObj(v)) return void c.err(p, 'must be { node? | nodePool?, event? }');
  c.keys(v, p, ['node', 'nodePool', 'event', 'state']);
  const event = (v['event'] ?? 'spotInterruption') as string;
  if (!INTERRUPT_EVENTS.includes(event as InterruptEvent))
    c.err(`${p}.event`, `must be ${INTERRUPT_EVENTS.join(', ')}`);
  const state = c.str(v['state'], `${p}.state`, false);
  if (
    state !== undefined &&
    (event !== 'stateChange' || !['stopping', 'stopped', 'shutting-down', 'terminated'].includes(state))
  )
    c.err(`${p}.state`, 'goes with event stateChange and must be stopping, stopped, shutting-down or terminated');
  const node = c.str(v['node'], `${p}.node`, false);
  const nodePool = c.str(v['nodePool'], `${p}.nodePool`, false);
  return {
    kind: 'interrupt',
    event: event as InterruptEvent,
    ...(state ? { state } : {}),
    ...(node ? { node } : {}),
    ...(nodePool ? { nodePool } : {}),
  };
}

function nodeCondition(c: Checker, v: unknown, p: string): Step | undefined {
  if (!isObj(v)) return void c.err(p, 'must be { node? | nodePool?, type, status, reason? }');
  c.keys(v, p, ['node', 'nodePool', 'type', 'status', 'reason']);
  const type = c.str(v['type'], `${p}.type`);
  const status = v['status'];
  if (status !== 'True' && status !== 'False' && status !== 'Unknown')
    c.err(`${p}.status`, 'must be "True", "False" or "Unknown" (quoted, so YAML keeps it a string)');
  const node = c.str(v['node'], `${p}.node`, false);
  const nodePool = c.str(v['nodePool'], `${p}.nodePool`, false);
  const reason = c.str(v['reason'], `${p}.reason`, false);
  if (!type || (status !== 'True' && status !== 'False' && status !== 'Unknown')) return undefined;
  return {
    kind: 'nodeCondition',
    type,
    status,
    ...(node ? { node } : {}),
    ...(nodePool ? { nodePool } : {}),
    ...(reason ? { reason } : {}),
  };
}

/** Controller options by flag name; each value is checked the way the controller checks it. */
function optionMap(c: Checker, v: unknown): Record<string, string> | undefined {
  if (
    !isObj(v) ||
    !Object.values(v).every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')
  ) {
    c.err('options', 'must be a mapping of controller flags to values, e.g. { feature-gates: "NodeRepair=true" }');
    return undefined;
  }
  const out = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)]));
  const known = new Set(OPTION_SPECS.map((o) => o.flag));
  for (const k of Object.keys(out))
    if (!known.has(k)) c.err(`options.${k}`, 'is not a controller option (see karpenter-ts controller --help)');
  try {
    resolveOptions([], {}, out);
  } catch (e) {
    if (!(e instanceof OptionsError)) throw e;
    for (const problem of e.problems) c.err('options', problem);
  }
  return out;
}

export function parseScenario(text: string, source = 'scenario'): Scenario {
  const all = parseDocuments(text);
  const syntax = all.flatMap((d) => d.syntaxErrors.map((e) => `${e.line ? `line ${e.line}: ` : ''}${e.message}`));
  if (syntax.length) throw new ScenarioError(source, syntax);
  const docs = all.filter((d) => d.value !== null && d.value !== undefined);
  const c = new Checker();
  if (docs.length !== 1 || !isObj(docs[0]!.value))
    throw new ScenarioError(source, ['must be one YAML document: a mapping with name and steps']);
  const doc = docs[0]!.value as Obj;
  c.keys(doc, '', [
    'name',
    'description',
    'region',
    'clusterName',
    'speed',
    'start',
    'options',
    'capacityReservations',
    'steps',
  ]);
  const options = doc['options'] === undefined ? undefined : optionMap(c, doc['options']);
  const reservations =
    doc['capacityReservations'] === undefined ? undefined : reservationList(c, doc['capacityReservations']);
  const name = c.str(doc['name'], 'name') ?? '';
  if (doc['speed'] !== undefined && !(typeof doc['speed'] === 'number' && doc['speed'] > 0))
    c.err('speed', 'must be a number > 0');
  const start =
    doc['start'] instanceof Date
      ? doc['start'].getTime()
      : typeof doc['start'] === 'string'
        ? Date.parse(doc['start'])
        : undefined;
  if (doc['start'] !== undefined && !Number.isFinite(start))
    c.err('start', `must be a time such as 2025-01-01T00:00:00Z, got ${JSON.stringify(doc['start'])}`);
  const steps = Array.isArray(doc['steps'])
    ? doc['steps'].map((s, i) => step(c, s, `steps[${i}]`))
    : (c.err('steps', 'is required (a list of steps)'), []);
  if (c.problems.length)
    throw new ScenarioError(
      source,
      c.problems.map((p) => p.replace(/^\./, '')),
    );
  return {
    name,
    steps: steps.filter((s): s is Step => s !== undefined),
    ...(typeof doc['description'] === 'string' ? { description: doc['description'] } : {}),
    ...(typeof doc['region'] === 'string' ? { region: doc['region'] } : {}),
    ...(typeof doc['clusterName'] === 'string' ? { clusterName: doc['clusterName'] } : {}),
    ...(typeof doc['speed'] === 'number' ? { speed: doc['speed'] } : {}),
    ...(start !== undefined && Number.isFinite(start) ? { start } : {}),
    ...(reservations ? { capacityReservations: reservations } : {}),
    ...(options ? { options } : {}),
  };
}

function reservationList(c: Checker, v: unknown): ScenarioReservation[] {
  if (!Array.isArray(v)) {
    c.err(
      'capacityReservations',
      'must be a list of { id, instanceType, zone, count, reservationType?, instanceMatchCriteria?, tags? }',
    );
    return [];
  }
  return v.flatMap((r, i): ScenarioReservation[] => {
    const p = `capacityReservations[${i}]`;
    if (!isObj(r)) return (c.err(p, 'must be a mapping { id, instanceType, zone, count }'), []);
    c.keys(r, p, ['id', 'instanceType', 'zone', 'count', 'reservationType', 'instanceMatchCriteria', 'tags']);
    const id = c.str(r['id'], `${p}.id`);
    if (id && !/^cr-[0-9a-z]+$/.test(id))
      c.err(`${p}.id`, `is not a capacity reservation id (cr-0123abcd...): ${JSON.stringify(id)}`);
    const instanceType = c.str(r['instanceType'], `${p}.instanceType`);
    const zone = c.str(r['zone'], `${p}.zone`);
    const count = r['count'];
    if (!(typeof count === 'number' && Number.isInteger(count) && count >= 0))
      c.err(`${p}.count`, 'must be a whole number >= 0');
    const type = r['reservationType'];
    if (type !== undefined && type !== 'default' && type !== 'capacity-block')
      c.err(`${p}.reservationType`, 'must be default or capacity-block');
    const match = r['instanceMatchCriteria'];
    if (match !== undefined && match !== 'open' && match !== 'targeted')
      c.err(`${p}.instanceMatchCriteria`, 'must be open or targeted');
    const tags = r['tags'];
    if (tags !== undefined && !(isObj(tags) && Object.values(tags).every((t) => typeof t === 'string')))
      c.err(`${p}.tags`, 'must be a mapping of strings');
    if (!id || !instanceType || !zone || typeof count !== 'number') return [];
    return [
      {
        id,
        instanceType,
        zone,
        count,
        ...(type === 'default' || type === 'capacity-block' ? { reservationType: type } : {}),
        ...(match === 'open' || match === 'targeted' ? { instanceMatchCriteria: match } : {}),
        ...(isObj(tags) ? { tags: tags as Record<string, string> } : {}),
      },
    ];
  });
}
