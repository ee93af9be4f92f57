// An independent plan verifier. It shares no code with the solvers (no requirement algebra, no
// scheduling helpers): it judges a plan by what would actually happen if it were carried out — every
// NodeClaim could launch any of its instance types, so each of them must hold the claim's pods — with its
// own small matchers. Tests run it on every plan: provisioning plans, what-if plans, and the replacements
// consolidation commands launch (verifyReplacements).
import type { InstanceType, NodePool, Pod, StateNode } from '../domain/types.ts';
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan } from '../model/types.ts';
import {
  allowedOfferings,
  blocks,
  claimLabels,
  daemonOverhead,
  podMatchesLabels,
  RESERVATION_ID,
  sumRequests,
  tolerated,
  typeLabels,
} from './labels.ts';
import { launchMismatch } from './launch.ts';
import { daemonsOf, orderViolations } from './order.ts';

interface Violation {
  readonly kind:
    | 'accounting'
    | 'fit'
    | 'requirements'
    | 'taints'
    | 'limits'
    | 'offering'
    | 'ports'
    | 'topology'
    | 'reservation'
    | 'order'
    | 'launch';
  readonly message: string;
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
      const c = seen.find(
        (s) =>
          s.port === hp.port &&
          s.protocol === hp.protocol &&
          s.owner !== p.uid &&
          (s.ip === hp.ip || any(s.ip) || any(hp.ip)),
      );
      if (c) return `host port ${hp.port}/${hp.protocol} of ${p.namespace}/${p.name}`;
      seen.push({ ...hp, owner: p.uid });
    }
  }
  return undefined;
}

/**
 * Reserved capacity: no reservation is held by more NodeClaims than it has instances (the smallest count any
 * NodePool's view of it gives); a NodeClaim holding reservations launches only into them (capacity-type In
 * [reserved], reservation-id In [held]); and in Strict mode every NodeClaim that could launch into a reserved
 * offering holds it, so launches never exceed what was counted.
 */
function checkReservations(
  input: ProvisionInput,
  plan: ProvisionPlan,
  v: (kind: Violation['kind'], message: string) => void,
): void {
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
        v(
          'reservation',
          `${where} holds reservations ${held.join(', ')} but may launch as other than capacity-type reserved`,
        );
      }
      return;
    }
    if (!strict) return;
    const its = new Map((input.instanceTypes.get(c.nodePool) ?? []).map((it) => [it.name, it]));
    for (const opt of c.instanceTypes) {
      const it = its.get(opt.name);
      const o = it && allowedOfferings(c, it).find((x) => x.capacityType === 'reserved');
      if (o) {
        v('reservation', `${where} may launch into reservation ${o.reservationId} (${opt.name}) without holding it`);
        break;
      }
    }
  });
  for (const [id, n] of holders) {
    const cap = capacity.get(id);
    if (cap === undefined)
      v('reservation', `reservation ${id} is held by ${n} NodeClaim(s) but no offering carries it`);
    else if (n > cap) v('reservation', `reservation ${id} is held by ${n} NodeClaims but has ${cap} instance(s)`);
  }
}

type Report = (kind: Violation['kind'], message: string) => void;

/** Every pod of the input appears exactly once: on a node, on a NodeClaim, unschedulable or ignored. */
function checkAccounting(
  input: ProvisionInput,
  plan: ProvisionPlan,
  podsByUid: ReadonlyMap<string, Pod>,
  v: Report,
): void {
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
    const optedOut = [...(p.affinity?.nodeAffinity?.required?.[0]?.matchExpressions ?? [])].some(
      (e) => e.key === 'karpenter.sh/nodepool' && e.operator === 'DoesNotExist',
    );
    if (!seen.has(p.uid) && !optedOut && input.nodePools.length)
      v('accounting', `pod ${p.namespace}/${p.name} is missing from the plan`);
  }
}

/** Pods placed on existing nodes fit, match the node's labels, tolerate its taints and take free host ports. */
function checkExisting(
  input: ProvisionInput,
  plan: ProvisionPlan,
  podsByUid: ReadonlyMap<string, Pod>,
  v: Report,
): void {
  const nodes = new Map<string, StateNode>(input.nodes.map((n) => [n.name, n]));
  for (const [name, uids] of plan.existing) {
    const node = nodes.get(name);
    if (!node) {
      v('accounting', `plan places pods on unknown node ${name}`);
      continue;
    }
    if (node.markedForDeletion || node.deleting) v('fit', `pods placed on node ${name}, which is being deleted`);
    const added = uids.map((u) => podsByUid.get(u)!).filter(Boolean);
    const bound = node.pods.filter((p) => p.phase !== 'Succeeded' && p.phase !== 'Failed');
    const over = exceeds(sumRequests([...bound, ...added]), node.allocatable);
    if (over) v('fit', `node ${name} over-committed: ${over}`);
    const taints = node.initialized
      ? node.taints
      : node.taints.filter(
          (t) =>
            !node.startupTaints.some((s) => s.key === t.key) &&
            !/^(node\.kubernetes\.io\/not-ready|node\.kubernetes\.io\/unreachable|node\.cloudprovider\.kubernetes\.io\/uninitialized|karpenter\.sh\/unregistered|readiness\.k8s\.io\/)/.test(
              t.key,
            ),
        );
    for (const p of added) {
      const bad = podMatchesLabels(p, { ...node.labels });
      if (bad) v('requirements', `pod ${p.name} on node ${name} does not match ${bad}`);
      const t = taints.find((t) => blocks(t) && !tolerated(p.tolerations, t));
      if (t) v('taints', `pod ${p.name} on node ${name} does not tolerate ${t.key}:${t.effect}`);
    }
    const ports = conflictingPorts([...bound, ...added]);
    if (ports) v('ports', `node ${name}: conflicting ${ports}`);
  }
}

/** A NodeClaim's option j: it exists, is priced as offered and in order, and every allowed offering of it holds the pods. */
function checkOption(
  input: ProvisionInput,
  pool: NodePool,
  c: NewNodeClaimPlan,
  j: number,
  it: InstanceType | undefined,
  pods: readonly Pod[],
  where: string,
  v: Report,
): void {
  const opt = c.instanceTypes[j]!;
  if (!it) {
    v('offering', `${where}: unknown instance type ${opt.name}`);
    return;
  }
  const offerings = allowedOfferings(c, it);
  if (!offerings.length) {
    v('offering', `${where}: ${opt.name} has no available offering its requirements allow`);
    return;
  }
  // Priced at its cheapest allowed offering, of any capacity type or of the one its launch uses (launch.ts).
  const cheapest = Math.min(...offerings.map((o) => o.price));
  const ofType = (ct: string) => Math.min(...offerings.filter((o) => o.capacityType === ct).map((o) => o.price));
  if ([cheapest, ofType('spot'), ofType('on-demand')].every((x) => Math.abs(x - opt.price) > 1e-6))
    v('offering', `${where}: ${opt.name} priced ${opt.price}, cheapest allowed offering is ${cheapest}`);
  if (j > 0 && opt.price + 1e-9 < c.instanceTypes[j - 1]!.price)
    v('offering', `${where}: instance types not in price order at ${opt.name}`);
  for (const o of offerings) {
    const labels = {
      ...pool.template.labels,
      ...c.labels,
      ...claimLabels(c),
      ...typeLabels(it, o),
      'karpenter.sh/nodepool': pool.name,
    };
    const need = sumRequests(pods);
    const overhead = daemonOverhead(daemonsOf(input), pool, labels);
    for (const [k, val] of Object.entries(overhead)) need[k] = (need[k] ?? 0) + val;
    const over = exceeds(need, it.allocatable);
    if (over) {
      v('fit', `${where}: pods and daemonsets do not fit ${opt.name}: ${over}`);
      return;
    }
    for (const p of pods) {
      const bad = podMatchesLabels(p, labels);
      if (bad)
        v(
          'requirements',
          `${where}: pod ${p.name} does not match ${bad} on ${opt.name} in ${o.zone}/${o.capacityType}`,
        );
      const t = pool.template.taints.find((t) => blocks(t) && !tolerated(p.tolerations, t));
      if (t) v('taints', `${where}: pod ${p.name} does not tolerate ${t.key}:${t.effect}`);
    }
  }
}

/** New NodeClaims: any of their instance types may be launched, so each must work; the named one is the launch's. */
function checkNewNodeClaims(
  input: ProvisionInput,
  plan: ProvisionPlan,
  podsByUid: ReadonlyMap<string, Pod>,
  v: Report,
  tooMany: () => boolean,
): void {
  plan.newNodeClaims.forEach((c, i) => {
    const where = `nodeclaim #${i} (nodepool ${c.nodePool})`;
    const pool = input.nodePools.find((p) => p.name === c.nodePool);
    if (!pool) {
      v('accounting', `${where}: unknown nodepool`);
      return;
    }
    const its = new Map((input.instanceTypes.get(pool.name) ?? []).map((it) => [it.name, it]));
    const pods = c.pods.map((u) => podsByUid.get(u)!).filter(Boolean);
    const ports = conflictingPorts(pods);
    if (ports) v('ports', `${where}: conflicting ${ports}`);
    if (c.instanceTypes.length === 0) v('offering', `${where} has no instance types`);
    for (let j = 0; j < c.instanceTypes.length && !tooMany(); j++)
      checkOption(input, pool, c, j, its.get(c.instanceTypes[j]!.name), pods, where, v);
    if (Math.abs(c.price - (c.instanceTypes[0]?.price ?? 0)) > 1e-9)
      v('offering', `${where}: priced ${c.price}, its first option costs ${c.instanceTypes[0]?.price}`);
    const launch = c.instanceTypes.length ? launchMismatch(c, its) : undefined;
    if (launch) v('launch', `${where} ${launch}`);
  });
}

/**
 * NodePool limits, counted as Karpenter counts them: the capacity of the pool's active nodes, and for each new
 * NodeClaim a node and the largest capacity among its options.
 */
function checkLimits(input: ProvisionInput, plan: ProvisionPlan, v: Report): void {
  const usage = new Map<string, Record<string, number>>();
  const add = (pool: string, cap: Readonly<Record<string, number>>) => {
    const u = usage.get(pool) ?? {};
    for (const [k, val] of Object.entries(cap)) u[k] = (u[k] ?? 0) + val;
    u['nodes'] = (u['nodes'] ?? 0) + 1;
    usage.set(pool, u);
  };
  for (const n of input.nodes)
    if (n.nodePoolName && !n.markedForDeletion && !n.deleting) add(n.nodePoolName, n.capacity);
  for (const c of plan.newNodeClaims) {
    const its = new Map((input.instanceTypes.get(c.nodePool) ?? []).map((it) => [it.name, it]));
    const largest: Record<string, number> = {};
    for (const o of c.instanceTypes)
      for (const [k, val] of Object.entries(its.get(o.name)?.capacity ?? {}))
        largest[k] = Math.max(largest[k] ?? 0, val);
    add(c.nodePool, largest);
  }
  for (const pool of input.nodePools) {
    const u = usage.get(pool.name) ?? {};
    const planned = plan.newNodeClaims.some((c) => c.nodePool === pool.name);
    for (const [k, lim] of Object.entries(pool.limits)) {
      if (planned && (u[k] ?? 0) > lim + 1e-6)
        v('limits', `nodepool ${pool.name}: ${k} ${u[k]} exceeds its limit ${lim}`);
    }
  }
}

export function verifyPlan(input: ProvisionInput, plan: ProvisionPlan): Violation[] {
  const out: Violation[] = [];
  const v: Report = (kind, message) => out.push({ kind, message });
  const podsByUid = new Map(input.pods.map((p) => [p.uid, p]));
  checkAccounting(input, plan, podsByUid, v);
  checkExisting(input, plan, podsByUid, v);
  checkNewNodeClaims(input, plan, podsByUid, v, () => out.length > 50);
  for (const m of orderViolations(input, plan.newNodeClaims)) v('order', m);
  checkReservations(input, plan, v);
  checkLimits(input, plan, v);
  return out;
}

/**
 * A consolidation command's replacements, judged as the plan the command carries out: the simulation it was
 * decided from (candidates marked for deletion), with the command's replacements as its new NodeClaims. The
 * replacements are the simulation's NodeClaims with their options narrowed by the price rules, so each must
 * still hold its pods on every option, keep the NodePools' limits and order, name the type and price its launch
 * would get, and hold every pod the simulation gave the NodeClaim it replaces.
 */
export function verifyReplacements(
  input: ProvisionInput,
  simulation: ProvisionPlan,
  replacements: readonly NewNodeClaimPlan[],
): Violation[] {
  return verifyPlan(input, { ...simulation, newNodeClaims: replacements });
}
