// An independent plan verifier. It shares no code with the solvers (no requirement algebra, no
// scheduling helpers): it judges a plan by what would actually happen if it were carried out — every
// NodeClaim could launch any of its instance types, so each of them must hold the claim's pods — with its
// own small matchers. Tests run it on every plan; the what-if report can run it too.
import type {
  DaemonSet, InstanceType, NodePool, NodeSelectorRequirement, Offering, Pod, StateNode, Taint, Toleration,
} from '../domain/types.ts';
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan } from '../model/types.ts';

export interface Violation {
  readonly kind: 'accounting' | 'fit' | 'requirements' | 'taints' | 'limits' | 'offering' | 'ports' | 'topology' | 'reservation';
  readonly message: string;
}

type Labels = Record<string, string>;

function matchExpr(e: NodeSelectorRequirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, e.key);
  const v = labels[e.key];
  switch (e.operator) {
    case 'In': return has && e.values.includes(v!);
    case 'NotIn': return !has || !e.values.includes(v!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': return has && /^-?\d+$/.test(v!) && Number(v) > Number(e.values[0]);
    case 'Lt': return has && /^-?\d+$/.test(v!) && Number(v) < Number(e.values[0]);
    case 'Gte': return has && /^-?\d+$/.test(v!) && Number(v) >= Number(e.values[0]);
    case 'Lte': return has && /^-?\d+$/.test(v!) && Number(v) <= Number(e.values[0]);
  }
}

const ALIASES: Record<string, string> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};
const norm = (k: string) => ALIASES[k] ?? k;

/** kube-scheduler's view: nodeSelector and (one of) the required node affinity terms match the labels. */
function podMatchesLabels(pod: Pod, labels: Labels): string | undefined {
  for (const [k, v] of Object.entries(pod.nodeSelector)) if (labels[norm(k)] !== v) return `nodeSelector ${k}=${v}`;
  const terms = pod.affinity?.nodeAffinity?.required ?? [];
  if (terms.length && !terms.some((t) => t.matchExpressions.every((e) => matchExpr({ ...e, key: norm(e.key) }, labels)))) {
    return 'required node affinity';
  }
  for (const alt of pod.volumeRequirements ?? []) if (alt.every((e) => matchExpr({ ...e, key: norm(e.key) }, labels))) return undefined;
  if (pod.volumeRequirements?.length) return 'volume topology';
  return undefined;
}

function tolerated(tols: readonly Toleration[], taint: Taint): boolean {
  return tols.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (!t.key) return t.operator === 'Exists';
    if (t.key !== taint.key) return false;
    if ((t.operator ?? 'Equal') === 'Exists') return true;
    if (t.operator === 'Gt' || t.operator === 'Lt') {
      const a = Number(taint.value);
      const b = Number(t.value);
      return Number.isInteger(a) && Number.isInteger(b) && (t.operator === 'Gt' ? a > b : a < b);
    }
    return (t.value ?? '') === (taint.value ?? '');
  });
}

/** kube-scheduler's TaintToleration filter: only NoSchedule and NoExecute keep a pod off a node. */
function blocks(t: Taint): boolean {
  return t.effect !== 'PreferNoSchedule';
}

function sumRequests(pods: readonly Pod[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of pods) for (const [k, v] of Object.entries(p.requests)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function exceeds(need: Record<string, number>, have: Readonly<Record<string, number>>): string | undefined {
  for (const [k, v] of Object.entries(need)) if (v > 0 && v > (have[k] ?? 0)) return `${k} ${v} > ${have[k] ?? 0}`;
  return undefined;
}

function conflictingPorts(pods: readonly Pod[]): string | undefined {
  const seen: Array<{ ip: string; port: number; protocol: string; owner: string }> = [];
  const any = (ip: string) => ip === '' || ip === '0.0.0.0' || ip === '::';
  for (const p of pods) {
    for (const hp of p.hostPorts) {
      const c = seen.find((s) => s.port === hp.port && s.protocol === hp.protocol && s.owner !== p.uid && (s.ip === hp.ip || any(s.ip) || any(hp.ip)));
      if (c) return `host port ${hp.port}/${hp.protocol} of ${p.namespace}/${p.name}`;
      seen.push({ ...hp, owner: p.uid });
    }
  }
  return undefined;
}

const RESERVATION_ID = 'karpenter.k8s.aws/capacity-reservation-id';

function typeLabels(it: InstanceType, o: Offering): Labels {
  const out: Labels = {};
  for (const r of it.requirements.values()) if (!r.complement && r.values.size === 1) out[r.key] = [...r.values][0]!;
  out['topology.kubernetes.io/zone'] = o.zone;
  out['karpenter.sh/capacity-type'] = o.capacityType;
  if (o.reservationId !== undefined) out[RESERVATION_ID] = o.reservationId;
  out['node.kubernetes.io/instance-type'] = it.name;
  return out;
}

/**
 * Labels the launched node carries because the NodeClaim pins them: a single-valued In requirement (an
 * instance type that offers several operating systems boots the one the claim asks for). The type's own
 * single values are applied after these, so a claim that contradicts its instance type still shows.
 */
function claimLabels(claim: NewNodeClaimPlan): Labels {
  const out: Labels = {};
  for (const r of claim.requirements) if (r.operator === 'In' && r.values.length === 1) out[norm(r.key)] = r.values[0]!;
  return out;
}

/** The offerings of a type a NodeClaim allows (its zone, capacity-type and reservation requirements). */
function allowedOfferings(claim: NewNodeClaimPlan, it: InstanceType): Offering[] {
  const zone = claim.requirements.filter((r) => norm(r.key) === 'topology.kubernetes.io/zone');
  const ct = claim.requirements.filter((r) => r.key === 'karpenter.sh/capacity-type');
  const rid = claim.requirements.filter((r) => r.key === RESERVATION_ID);
  return it.offerings.filter((o) => o.available
    && zone.every((r) => matchExpr(r, { 'topology.kubernetes.io/zone': o.zone }))
    && ct.every((r) => matchExpr(r, { 'karpenter.sh/capacity-type': o.capacityType }))
    && rid.every((r) => matchExpr(r, o.reservationId !== undefined ? { [RESERVATION_ID]: o.reservationId } : {})));
}

/**
 * Reserved capacity: no reservation is held by more NodeClaims than it has instances (the smallest count any
 * NodePool's view of it gives); a NodeClaim holding reservations launches only into them (capacity-type In
 * [reserved], reservation-id In [held]); and in Strict mode every NodeClaim that could launch into a reserved
 * offering holds it, so launches never exceed what was counted.
 */
function checkReservations(input: ProvisionInput, plan: ProvisionPlan, v: (kind: Violation['kind'], message: string) => void): void {
  const capacity = new Map<string, number>();
  for (const its of input.instanceTypes.values()) {
    for (const it of its) {
      for (const o of it.offerings) {
        if (o.capacityType !== 'reserved' || o.reservationId === undefined) continue;
        const n = o.reservationCapacity ?? 0;
        capacity.set(o.reservationId, Math.min(capacity.get(o.reservationId) ?? n, n));
      }
    }
  }
  if (capacity.size === 0) return;
  const holders = new Map<string, number>();
  const strict = input.reservedOfferingMode !== 'Fallback';
  plan.newNodeClaims.forEach((c, i) => {
    const where = `nodeclaim #${i} (nodepool ${c.nodePool})`;
    const rid = c.requirements.filter((r) => r.key === RESERVATION_ID && r.operator === 'In');
    const held = rid.length ? rid[0]!.values : [];
    for (const id of held) holders.set(id, (holders.get(id) ?? 0) + 1);
    if (held.length) {
      const ct = c.requirements.filter((r) => r.key === 'karpenter.sh/capacity-type');
      if (!ct.length || !ct.every((r) => r.operator === 'In' && r.values.length === 1 && r.values[0] === 'reserved')) {
        v('reservation', `${where} holds reservations ${held.join(', ')} but may launch as other than capacity-type reserved`);
      }
      return;
    }
    if (!strict) return;
    const its = new Map((input.instanceTypes.get(c.nodePool) ?? []).map((it) => [it.name, it]));
    for (const opt of c.instanceTypes) {
      const it = its.get(opt.name);
      const o = it && allowedOfferings(c, it).find((x) => x.capacityType === 'reserved');
      if (o) { v('reservation', `${where} may launch into reservation ${o.reservationId} (${opt.name}) without holding it`); break; }
    }
  });
  for (const [id, n] of holders) {
    const cap = capacity.get(id);
    if (cap === undefined) v('reservation', `reservation ${id} is held by ${n} NodeClaim(s) but no offering carries it`);
    else if (n > cap) v('reservation', `reservation ${id} is held by ${n} NodeClaims but has ${cap} instance(s)`);
  }
}

function daemonOverhead(daemonSets: readonly DaemonSet[], pool: NodePool, labels: Labels): Record<string, number> {
  const pods = daemonSets.map((d) => d.pod).filter((p) => pool.template.taints.every((t) => t.effect === 'PreferNoSchedule' || tolerated(p.tolerations, t)) && podMatchesLabels(p, labels) === undefined);
  return sumRequests(pods);
}

export function verifyPlan(input: ProvisionInput, plan: ProvisionPlan): Violation[] {
  const out: Violation[] = [];
  const v = (kind: Violation['kind'], message: string) => out.push({ kind, message });
  const podsByUid = new Map(input.pods.map((p) => [p.uid, p]));
  const seen = new Map<string, string>();
  const mark = (uid: string, where: string) => {
    if (seen.has(uid)) v('accounting', `pod ${uid} appears in ${seen.get(uid)} and ${where}`);
    seen.set(uid, where);
    if (!podsByUid.has(uid)) v('accounting', `${where} holds unknown pod ${uid}`);
  };
  for (const [node, uids] of plan.existing) for (const u of uids) mark(u, `node ${node}`);
  plan.newNodeClaims.forEach((c, i) => c.pods.forEach((u) => mark(u, `nodeclaim #${i}`)));
  for (const e of plan.unschedulable) mark(e.uid, 'unschedulable');
  for (const e of plan.ignored) mark(e.uid, 'ignored');
  for (const p of input.pods) {
    const pools = input.nodePools;
    const optedOut = [...(p.affinity?.nodeAffinity?.required?.[0]?.matchExpressions ?? [])].some((e) => e.key === 'karpenter.sh/nodepool' && e.operator === 'DoesNotExist');
    if (!seen.has(p.uid) && !optedOut && pools.length) v('accounting', `pod ${p.namespace}/${p.name} is missing from the plan`);
  }

  // Existing nodes.
  const nodes = new Map<string, StateNode>(input.nodes.map((n) => [n.name, n]));
  for (const [name, uids] of plan.existing) {
    const node = nodes.get(name);
    if (!node) { v('accounting', `plan places pods on unknown node ${name}`); continue; }
    if (node.markedForDeletion || node.deleting) v('fit', `pods placed on node ${name}, which is being deleted`);
    const added = uids.map((u) => podsByUid.get(u)!).filter(Boolean);
    const bound = node.pods.filter((p) => p.phase !== 'Succeeded' && p.phase !== 'Failed');
    const over = exceeds(sumRequests([...bound, ...added]), node.allocatable);
    if (over) v('fit', `node ${name} over-committed: ${over}`);
    const taints = node.initialized ? node.taints : node.taints.filter((t) => !node.startupTaints.some((s) => s.key === t.key) && !/^(node\.kubernetes\.io\/not-ready|node\.kubernetes\.io\/unreachable|node\.cloudprovider\.kubernetes\.io\/uninitialized|karpenter\.sh\/unregistered|readiness\.k8s\.io\/)/.test(t.key));
    for (const p of added) {
      const bad = podMatchesLabels(p, { ...node.labels });
      if (bad) v('requirements', `pod ${p.name} on node ${name} does not match ${bad}`);
      const t = taints.find((t) => blocks(t) && !tolerated(p.tolerations, t));
      if (t) v('taints', `pod ${p.name} on node ${name} does not tolerate ${t.key}:${t.effect}`);
    }
    const ports = conflictingPorts([...bound, ...added]);
    if (ports) v('ports', `node ${name}: conflicting ${ports}`);
  }

  // New NodeClaims: any of their instance types may be launched, so each must work.
  const usage = new Map<string, Record<string, number>>();
  for (const n of input.nodes) {
    if (!n.nodePoolName) continue;
    const u = usage.get(n.nodePoolName) ?? {};
    for (const [k, val] of Object.entries(n.capacity)) u[k] = (u[k] ?? 0) + val;
    u['nodes'] = (u['nodes'] ?? 0) + 1;
    usage.set(n.nodePoolName, u);
  }
  plan.newNodeClaims.forEach((c, i) => {
    const where = `nodeclaim #${i} (nodepool ${c.nodePool})`;
    const pool = input.nodePools.find((p) => p.name === c.nodePool);
    if (!pool) { v('accounting', `${where}: unknown nodepool`); return; }
    const its = new Map((input.instanceTypes.get(pool.name) ?? []).map((it) => [it.name, it]));
    const pods = c.pods.map((u) => podsByUid.get(u)!).filter(Boolean);
    const ports = conflictingPorts(pods);
    if (ports) v('ports', `${where}: conflicting ${ports}`);
    if (c.instanceTypes.length === 0) v('offering', `${where} has no instance types`);
    c.instanceTypes.forEach((opt, j) => {
      const it = its.get(opt.name);
      if (!it) { v('offering', `${where}: unknown instance type ${opt.name}`); return; }
      const offerings = allowedOfferings(c, it);
      if (!offerings.length) { v('offering', `${where}: ${opt.name} has no available offering its requirements allow`); return; }
      const cheapest = Math.min(...offerings.map((o) => o.price));
      if (Math.abs(cheapest - opt.price) > 1e-6) v('offering', `${where}: ${opt.name} priced ${opt.price}, cheapest allowed offering is ${cheapest}`);
      if (j > 0 && opt.price + 1e-9 < c.instanceTypes[j - 1]!.price) v('offering', `${where}: instance types not in price order at ${opt.name}`);
      for (const o of offerings) {
        const labels = { ...pool.template.labels, ...c.labels, ...claimLabels(c), ...typeLabels(it, o), 'karpenter.sh/nodepool': pool.name };
        const need = sumRequests(pods);
        // IgnoreDRARequests (default): daemon pods with resource claims add no overhead (spec §2.10).
        const daemons = input.options.ignoreDRARequests === false ? input.daemonSets : input.daemonSets.filter((d) => !(d.pod.resourceClaims?.length || d.pod.containerClaims?.length));
        const overhead = daemonOverhead(daemons, pool, labels);
        for (const [k, val] of Object.entries(overhead)) need[k] = (need[k] ?? 0) + val;
        const over = exceeds(need, it.allocatable);
        if (over) { v('fit', `${where}: pods and daemonsets do not fit ${opt.name}: ${over}`); break; }
        for (const p of pods) {
          const bad = podMatchesLabels(p, labels);
          if (bad) v('requirements', `${where}: pod ${p.name} does not match ${bad} on ${opt.name} in ${o.zone}/${o.capacityType}`);
          const t = pool.template.taints.find((t) => blocks(t) && !tolerated(p.tolerations, t));
          if (t) v('taints', `${where}: pod ${p.name} does not tolerate ${t.key}:${t.effect}`);
        }
        if (out.length > 50) return;
      }
    });
    if (Math.abs(c.price - (c.instanceTypes[0]?.price ?? 0)) > 1e-9) v('offering', `${where}: priced ${c.price}, its first option costs ${c.instanceTypes[0]?.price}`);
    // Limits: launching the first (cheapest) option of every NodeClaim must stay within the pool's limits.
    const first = its.get(c.instanceTypes[0]?.name ?? '');
    if (first) {
      const u = usage.get(pool.name) ?? {};
      for (const [k, val] of Object.entries(first.capacity)) u[k] = (u[k] ?? 0) + val;
      u['nodes'] = (u['nodes'] ?? 0) + 1;
      usage.set(pool.name, u);
    }
  });
  checkReservations(input, plan, v);
  for (const pool of input.nodePools) {
    const u = usage.get(pool.name) ?? {};
    for (const [k, lim] of Object.entries(pool.limits)) {
      const planned = plan.newNodeClaims.some((c) => c.nodePool === pool.name);
      if (planned && (u[k] ?? 0) > lim) v('limits', `nodepool ${pool.name}: ${k} ${u[k]} exceeds its limit ${lim}`);
    }
  }
  return out;
}
