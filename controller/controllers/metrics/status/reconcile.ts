// status.metrics: what Karpenter's operatorpkg status controllers report for NodeClaims, Nodes, NodePools
// and EC2NodeClasses. One operator_<kind>_status_condition_count and _current_status_seconds series per object
// and condition now present, and _termination_current_time_seconds per terminating object: these gauges are
// worked out at each scrape from cluster state (DerivedGauge), so they are never stale and hold nothing between
// scrapes. On each change of an object, a condition whose status changed since the last look counts in
// _transitions_total, observes how long it held in _transition_seconds, and is published as a Normal event
// whose reason is the condition type ("Status condition transitioned, ..."); when a terminating object is gone
// its whole deletion time is observed in _termination_duration_seconds. NodeClaims, NodePools and
// EC2NodeClasses also feed the deprecated kind-less operator_status_condition_* and operator_termination_*
// families, labelled with group and kind, as Karpenter still emits them.
import { conditionsOf, transitionTime, type KubeCondition } from '../../../operator/conditions.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { objectLabelName, STATUS_KINDS, type StatusKind } from '../../../operator/metriclabels.ts';
import type { DerivedSeries, StatusMetrics } from '../../../operator/metrics.ts';
import { done, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';

const KIND_OF: Readonly<Record<string, StatusKind>> = {
  NodeClaim: 'nodeclaim',
  Node: 'node',
  NodePool: 'nodepool',
  EC2NodeClass: 'ec2nodeclass',
};
const KINDS = Object.keys(STATUS_KINDS) as StatusKind[];

/**
 * What the last look at an object saw: its conditions (for transitions), its labels, and since when it terminates.
 * The conditions are the object's own list: cluster state's objects are only read (a status change is a new list,
 * conditions.ts withCondition), so the list the object had then is what it had, and while the object is current it
 * costs nothing more (a copy of each condition took a few hundred bytes per NodeClaim and per Node).
 */
interface Seen {
  readonly conditions: readonly KubeCondition[];
  readonly terminating?: number;
  readonly extra: Record<string, string>;
}

type Labels = Record<string, string>;
/** The labels a family of `kind` adds from an object's own labels (the deprecated families: group and kind). */
type Extra = (obj: KubeObject) => Labels;

const seconds = (now: number, since: number): number => Math.max(0, (now - since) / 1000);

/** The operator's own labels of `kind` as an object carries them ('' when absent). */
function objectLabels(kind: StatusKind, obj: KubeObject): Labels {
  const out: Labels = {};
  for (const l of STATUS_KINDS[kind].labels) out[objectLabelName(l)] = obj.metadata.labels?.[l] ?? '';
  return out;
}

/** The families to write for `kind`: its own, plus the deprecated ones where Karpenter emits them. */
function familiesOf(ctx: ControllerContext, kind: StatusKind): Array<{ f: StatusMetrics; extra: Extra }> {
  const spec = STATUS_KINDS[kind];
  const out: Array<{ f: StatusMetrics; extra: Extra }> = [
    { f: ctx.metrics.status[kind], extra: (obj) => objectLabels(kind, obj) },
  ];
  if (spec.deprecated)
    out.push({ f: ctx.metrics.deprecatedStatus, extra: () => ({ group: spec.group, kind: spec.kind }) });
  return out;
}

function objectsOf(ctx: ControllerContext, kind: StatusKind): KubeObject[] {
  switch (kind) {
    case 'nodeclaim':
      return ctx.cluster.nodeClaims().map((e) => e.obj);
    case 'node':
      return ctx.cluster.allNodes().map((e) => e.obj);
    case 'nodepool':
      return ctx.cluster.nodePools().map((e) => e.obj);
    case 'ec2nodeclass':
      return ctx.cluster.nodeClasses().map((e) => e.obj);
  }
}

const deletedAt = (obj: KubeObject): number | undefined => {
  const t = obj.metadata.deletionTimestamp ? Date.parse(obj.metadata.deletionTimestamp) : NaN;
  return Number.isNaN(t) ? undefined : t;
};

/**
 * The series of one condition-gauge family (count or current status seconds) or of the termination gauge, over the
 * objects of `kinds`, as cluster state has them at the scrape.
 */
function statusSeries(
  ctx: ControllerContext,
  kinds: ReadonlyArray<{ kind: StatusKind; extra: Extra }>,
  gauge: 'count' | 'currentStatusSeconds' | 'terminationCurrentTime',
): () => Iterable<DerivedSeries | undefined> {
  return function* () {
    const now = ctx.clock.now();
    for (const { kind, extra } of kinds) {
      for (const obj of objectsOf(ctx, kind)) {
        const ident = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
        const ex = extra(obj);
        if (gauge === 'terminationCurrentTime') {
          const deleted = deletedAt(obj);
          yield deleted === undefined ? undefined : [{ ...ident, ...ex }, seconds(now, deleted)];
          continue;
        }
        const conditions = conditionsOf(obj);
        if (!conditions.length) yield undefined;
        for (const c of conditions) {
          const labels = { ...ident, type: c.type, status: c.status, reason: c.reason ?? '', ...ex };
          const since = transitionTime(c);
          yield [labels, gauge === 'count' ? 1 : since === undefined ? 0 : seconds(now, since)];
        }
      }
    }
  };
}

/** Points every kind's gauges (and the deprecated ones) at cluster state; `on` false points them at nothing. */
function deriveGauges(ctx: ControllerContext, on: boolean): void {
  const m = ctx.metrics;
  const gauges = ['count', 'currentStatusSeconds', 'terminationCurrentTime'] as const;
  const none = (): Iterable<DerivedSeries | undefined> => [];
  const deprecated: Array<{ kind: StatusKind; extra: Extra }> = [];
  for (const kind of KINDS) {
    for (const { f, extra } of familiesOf(ctx, kind)) {
      if (f === m.deprecatedStatus) {
        deprecated.push({ kind, extra });
        continue;
      }
      for (const g of gauges) f[g].derive(on ? statusSeries(ctx, [{ kind, extra }], g) : none);
    }
  }
  for (const g of gauges) m.deprecatedStatus[g].derive(on ? statusSeries(ctx, deprecated, g) : none);
}

function find(ctx: ControllerContext, kind: StatusKind, name: string): KubeObject | undefined {
  switch (kind) {
    case 'nodeclaim':
      return ctx.cluster.nodeClaim(name)?.obj;
    case 'node':
      return ctx.cluster.node(name)?.obj;
    case 'nodepool':
      return ctx.cluster.nodePool(name)?.obj;
    case 'ec2nodeclass':
      return ctx.cluster.nodeClass(name)?.obj;
  }
}

/** Counts and observes the conditions of `obj` whose status moved since `prior`, and tells each as an event. */
function transitions(ctx: ControllerContext, kind: StatusKind, obj: KubeObject, prior: Seen | undefined): void {
  for (const c of conditionsOf(obj)) {
    const before = prior?.conditions.find((x) => x.type === c.type);
    if (before?.status === c.status) continue;
    for (const { f, extra } of familiesOf(ctx, kind)) {
      const ex = extra(obj);
      f.transitions.inc({ type: c.type, status: c.status, reason: c.reason ?? '', ...ex });
      const from = transitionTime(before),
        to = transitionTime(c);
      if (before && from !== undefined && to !== undefined)
        f.transitionSeconds.observe({ type: before.type, status: before.status, ...ex }, seconds(to, from));
    }
    if (!before || !prior) continue;
    ctx.events.publish({
      involved: {
        kind: STATUS_KINDS[kind].kind,
        name: obj.metadata.name ?? '',
        ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
        ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
        ...(obj.apiVersion ? { apiVersion: obj.apiVersion } : {}),
      },
      type: 'Normal',
      reason: c.type,
      message: `Status condition transitioned, Type: ${c.type}, Status: ${before.status} -> ${c.status}, Reason: ${c.reason ?? ''}${c.message ? `, Message: ${c.message}` : ''}`,
    });
  }
}

/** Distinct label sets shared at once (the table is emptied when full). */
const SHARED_LABEL_SETS = 1_000;

export function newStatusMetrics(ctx: ControllerContext): Controller {
  const seen = new Map<string, Seen>();
  /** One object for equal label sets (the NodeClaims of a NodePool have the same), by their values. */
  const labelSets = new Map<string, Labels>();

  function sharedLabels(labels: Labels): Labels {
    const key = JSON.stringify(labels);
    const had = labelSets.get(key);
    if (had !== undefined) return had;
    if (labelSets.size >= SHARED_LABEL_SETS) labelSets.clear();
    labelSets.set(key, labels);
    return labels;
  }

  function observe(kind: StatusKind, key: string, obj: KubeObject, prior: Seen | undefined): void {
    transitions(ctx, kind, obj, prior);
    const terminating = deletedAt(obj);
    seen.set(key, {
      conditions: conditionsOf(obj),
      extra: sharedLabels(objectLabels(kind, obj)),
      ...(terminating !== undefined ? { terminating } : {}),
    });
  }

  function gone(kind: StatusKind, key: string, prior: Seen | undefined, now: number): void {
    seen.delete(key);
    if (prior?.terminating === undefined) return;
    const spec = STATUS_KINDS[kind];
    ctx.metrics.status[kind].terminationDuration.observe(prior.extra, seconds(now, prior.terminating));
    if (spec.deprecated)
      ctx.metrics.deprecatedStatus.terminationDuration.observe(
        { group: spec.group, kind: spec.kind },
        seconds(now, prior.terminating),
      );
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash) as StatusKind;
    const obj = find(ctx, kind, key.slice(slash + 1));
    if (!obj) gone(kind, key, seen.get(key), ctx.clock.now());
    else observe(kind, key, obj, seen.get(key));
    return done;
  }

  return {
    name: 'status.metrics',
    reads: ['NodeClaim', 'Node', 'NodePool', 'EC2NodeClass'],
    reconcile,
    register(enqueue) {
      deriveGauges(ctx, true);
      for (const c of ctx.cluster.nodeClaims()) enqueue(`nodeclaim/${c.info.name}`);
      for (const n of ctx.cluster.allNodes()) enqueue(`node/${n.info.name}`);
      for (const p of ctx.cluster.nodePools()) enqueue(`nodepool/${p.obj.metadata.name}`);
      for (const c of ctx.cluster.nodeClasses()) enqueue(`ec2nodeclass/${c.obj.metadata.name}`);
      const unsubscribe = ctx.cluster.subscribe((c) => {
        const kind = KIND_OF[c.kind];
        if (kind) enqueue(`${kind}/${c.name}`);
      });
      return () => {
        unsubscribe();
        deriveGauges(ctx, false);
      };
    },
  };
}
