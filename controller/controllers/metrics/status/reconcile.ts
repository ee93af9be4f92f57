// status.metrics: what Karpenter's operatorpkg status controllers report for NodeClaims, Nodes, NodePools
// and EC2NodeClasses. Per object, on every change and every 10 s: one operator_<kind>_status_condition_count
// and _current_status_seconds series per condition now present; a condition whose status changed since the
// last look counts in _transitions_total, observes how long it held in _transition_seconds, and is
// published as a Normal event whose reason is the condition type ("Status condition transitioned, ...").
// A terminating object shows in _termination_current_time_seconds, and when it is gone its whole deletion
// time is observed in _termination_duration_seconds. NodeClaims, NodePools and EC2NodeClasses also feed the
// deprecated kind-less operator_status_condition_* and operator_termination_* families, labelled with group
// and kind, as Karpenter still emits them.
import { conditionsOf, transitionTime, type KubeCondition } from '../../../operator/conditions.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { objectLabelName, STATUS_KINDS, type StatusKind } from '../../../operator/metriclabels.ts';
import type { StatusMetrics } from '../../../operator/metrics.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';

const PERIOD_MS = 10_000;
const KIND_OF: Readonly<Record<string, StatusKind>> = {
  NodeClaim: 'nodeclaim',
  Node: 'node',
  NodePool: 'nodepool',
  EC2NodeClass: 'ec2nodeclass',
};

interface Seen {
  readonly conditions: readonly KubeCondition[];
  readonly gauges: ReadonlyArray<Record<string, string>>;
  readonly terminating?: { since: number; labels: Record<string, string> };
  readonly extra: Record<string, string>;
}

export function newStatusMetrics(ctx: ControllerContext): Controller {
  const seen = new Map<string, Seen>();

  function find(kind: StatusKind, name: string): KubeObject | undefined {
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

  /** The families to write for `kind`: its own, plus the deprecated ones where Karpenter emits them. */
  function families(
    kind: StatusKind,
  ): Array<{ f: StatusMetrics; extra: (e: Record<string, string>) => Record<string, string> }> {
    const spec = STATUS_KINDS[kind];
    const out = [{ f: ctx.metrics.status[kind], extra: (e: Record<string, string>) => e }];
    if (spec.deprecated)
      out.push({ f: ctx.metrics.deprecatedStatus, extra: () => ({ group: spec.group, kind: spec.kind }) });
    return out;
  }

  function clearGauges(kind: StatusKind, prior: Seen | undefined): void {
    if (!prior) return;
    for (const { f, extra } of families(kind)) {
      for (const g of prior.gauges) {
        f.count.remove({ ...g, ...extra(prior.extra) });
        f.currentStatusSeconds.remove({ ...g, ...extra(prior.extra) });
      }
      if (prior.terminating) f.terminationCurrentTime.remove({ ...prior.terminating.labels, ...extra(prior.extra) });
    }
  }

  function transitions(
    kind: StatusKind,
    obj: KubeObject,
    prior: Seen | undefined,
    extra: Record<string, string>,
  ): void {
    for (const c of conditionsOf(obj)) {
      const before = prior?.conditions.find((x) => x.type === c.type);
      if (before?.status === c.status) continue;
      for (const { f, extra: ex } of families(kind)) {
        f.transitions.inc({ type: c.type, status: c.status, reason: c.reason ?? '', ...ex(extra) });
        const from = transitionTime(before),
          to = transitionTime(c);
        if (before && from !== undefined && to !== undefined)
          f.transitionSeconds.observe(
            { type: before.type, status: before.status, ...ex(extra) },
            Math.max(0, (to - from) / 1000),
          );
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

  function observe(kind: StatusKind, key: string, obj: KubeObject, prior: Seen | undefined, now: number): void {
    const extra: Record<string, string> = {};
    for (const l of STATUS_KINDS[kind].labels) extra[objectLabelName(l)] = obj.metadata.labels?.[l] ?? '';
    const ident = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
    transitions(kind, obj, prior, extra);
    clearGauges(kind, prior);
    const gauges = conditionsOf(obj).map((c) => ({ ...ident, type: c.type, status: c.status, reason: c.reason ?? '' }));
    const deleted = obj.metadata.deletionTimestamp ? Date.parse(obj.metadata.deletionTimestamp) : NaN;
    const terminating = Number.isNaN(deleted) ? undefined : { since: deleted, labels: ident };
    for (const { f, extra: ex } of families(kind)) {
      for (const [i, g] of gauges.entries()) {
        f.count.set({ ...g, ...ex(extra) }, 1);
        const since = transitionTime(conditionsOf(obj)[i]);
        f.currentStatusSeconds.set({ ...g, ...ex(extra) }, since === undefined ? 0 : Math.max(0, (now - since) / 1000));
      }
      if (terminating)
        f.terminationCurrentTime.set({ ...ident, ...ex(extra) }, Math.max(0, (now - terminating.since) / 1000));
    }
    seen.set(key, {
      conditions: conditionsOf(obj).map((c) => ({ ...c })),
      gauges,
      extra,
      ...(terminating ? { terminating } : {}),
    });
  }

  function gone(kind: StatusKind, key: string, prior: Seen | undefined, now: number): void {
    clearGauges(kind, prior);
    seen.delete(key);
    if (!prior?.terminating) return;
    for (const { f, extra } of families(kind))
      f.terminationDuration.observe(extra(prior.extra), Math.max(0, (now - prior.terminating.since) / 1000));
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash) as StatusKind;
    const obj = find(kind, key.slice(slash + 1));
    const now = ctx.clock.now();
    if (!obj) {
      gone(kind, key, seen.get(key), now);
      return done;
    }
    observe(kind, key, obj, seen.get(key), now);
    return requeueAfter(PERIOD_MS);
  }

  return {
    name: 'status.metrics',
    reads: ['NodeClaim', 'Node', 'NodePool', 'EC2NodeClass'],
    reconcile,
    register(enqueue) {
      for (const c of ctx.cluster.nodeClaims()) enqueue(`nodeclaim/${c.info.name}`);
      for (const n of ctx.cluster.allNodes()) enqueue(`node/${n.info.name}`);
      for (const p of ctx.cluster.nodePools()) enqueue(`nodepool/${p.obj.metadata.name}`);
      for (const c of ctx.cluster.nodeClasses()) enqueue(`ec2nodeclass/${c.obj.metadata.name}`);
      return ctx.cluster.subscribe((c) => {
        const kind = KIND_OF[c.kind];
        if (kind) enqueue(`${kind}/${c.name}`);
      });
    },
  };
}
