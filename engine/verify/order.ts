// The verifier's NodePool-order check (Karpenter's weights): a new NodeClaim of a NodePool holds at least one pod
// that no NodePool before it (weight descending, then name descending) could take on a new node. Karpenter opens a
// NodeClaim only for a pod every earlier NodePool refused, and only then lets other pods ride on it; a NodeClaim
// holding nothing but pods an earlier NodePool would take is one Karpenter would never open.
//
// "Could take" is judged here from the objects alone: within what the NodePool's limits surely left (remainingFloor),
// and only for a pod whose possible nodes nothing but its node selector, one required node-affinity term, its
// tolerations and its requests decide. Any other pod (topology, preferences, host ports,
// volumes, devices, several terms) counts as the reason its NodeClaim was opened, so the check can only miss a
// violation, never invent one.
import type { InstanceType, NodePool, Pod, StateNode } from '../domain/types.ts';
import type { NewNodeClaimPlan, ProvisionInput } from '../model/types.ts';
import { blocks, daemonOverhead, matchExpr, norm, sumRequests, tolerated, typeLabels, type Labels } from './labels.ts';

/** Karpenter's order of the NodePools that provision. */
function ordered(pools: readonly NodePool[]): NodePool[] {
  return pools
    .filter((p) => p.ready && !p.deleting && p.replicas === undefined)
    .sort((a, b) => b.weight - a.weight || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
}

/** A pod whose possible nodes depend only on labels, tolerations and requests. */
function judgeable(p: Pod): boolean {
  const a = p.affinity;
  const terms = a?.nodeAffinity?.required ?? [];
  return (
    !p.topologySpreadConstraints.length &&
    !a?.podAffinity &&
    !a?.podAntiAffinity &&
    !a?.nodeAffinity?.preferred?.length &&
    terms.length <= 1 &&
    !p.hostPorts.length &&
    !p.volumeRequirements?.length &&
    !p.resourceClaims?.length &&
    !p.containerClaims?.length
  );
}

function largestOf(its: readonly InstanceType[]): Record<string, number> {
  const l: Record<string, number> = {};
  for (const it of its) for (const [k, v] of Object.entries(it.capacity)) l[k] = Math.max(l[k] ?? 0, v);
  return l;
}

/**
 * Per NodePool, a floor on what of its limits was left whenever the plan's scheduler looked at it: its limits less
 * its existing nodes and, for each of the plan's NodeClaims of the pool, the largest type the pool has (Karpenter
 * counts a NodeClaim at its largest option when it opens it, and the options it opened with are not in the plan).
 */
function remainingFloor(
  input: ProvisionInput,
  claims: readonly NewNodeClaimPlan[],
): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  const active = (n: StateNode) => !n.markedForDeletion && !n.deleting;
  for (const pool of input.nodePools) {
    const left: Record<string, number> = { ...pool.limits };
    const take = (cap: Readonly<Record<string, number>>) => {
      for (const k of Object.keys(left)) left[k] = left[k]! - (k === 'nodes' ? 1 : (cap[k] ?? 0));
    };
    for (const n of input.nodes) if (n.nodePoolName === pool.name && active(n)) take(n.capacity);
    const largest = largestOf(input.instanceTypes.get(pool.name) ?? []);
    for (const c of claims) if (c.nodePool === pool.name) take(largest);
    out.set(pool.name, left);
  }
  return out;
}

/** A node's labels, read one key at a time (no object per type and offering). */
type Get = (key: string) => string | undefined;

function holds(e: { key: string; operator: string; values: readonly string[] }, get: Get): boolean {
  const v = get(e.key);
  return matchExpr({ ...e, key: 'k' } as Parameters<typeof matchExpr>[0], v === undefined ? {} : { k: v });
}

/** The pod's node selector and required term hold; undefined when a key no label carries leaves it undecided. */
function selects(p: Pod, get: Get): boolean | undefined {
  const exprs = [
    ...Object.entries(p.nodeSelector).map(([k, v]) => ({ key: norm(k), operator: 'In' as const, values: [v] })),
    ...(p.affinity?.nodeAffinity?.required?.[0]?.matchExpressions ?? []).map((e) => ({ ...e, key: norm(e.key) })),
  ];
  for (const e of exprs) {
    if (get(e.key) === undefined && e.operator !== 'NotIn' && e.operator !== 'DoesNotExist') return undefined;
    if (!holds(e, get)) return false;
  }
  return true;
}

/** The NodePool's own requirements on a label the type or offering carries hold. */
function poolAllows(pool: NodePool, get: Get): boolean {
  return pool.template.requirements.every(
    (r) => get(norm(r.key)) === undefined || holds({ ...r, key: norm(r.key) }, get),
  );
}

/** A type's own single-valued labels (its offerings' zone and capacity type aside), once per type and check. */
type OwnLabels = Map<InstanceType, Labels>;
function labelsOf(it: InstanceType, own: OwnLabels): Labels {
  let l = own.get(it);
  if (!l) own.set(it, (l = typeLabels(it, { zone: '', capacityType: 'on-demand', price: 0, available: true })));
  return l;
}

/** A new node of `pool` could take pod p, with `left` of its limits. */
function couldTake(
  input: ProvisionInput,
  pool: NodePool,
  p: Pod,
  left: Record<string, number>,
  labels: OwnLabels,
): boolean {
  if ((left['nodes'] ?? Infinity) < 1) return false;
  if (pool.template.requirements.some((r) => r.minValues !== undefined)) return false;
  if (pool.template.taints.some((t) => !tolerated(p.tolerations, t) && (blocks(t) || t.effect === 'PreferNoSchedule')))
    return false;
  const base: Labels = { ...pool.template.labels, 'karpenter.sh/nodepool': pool.name };
  for (const r of pool.template.requirements)
    if (r.operator === 'In' && r.values.length === 1) base[norm(r.key)] = r.values[0]!;
  const need = Object.entries(sumRequests([p])).filter(([, v]) => v > 0);
  const daemons = daemonsOf(input);
  for (const it of input.instanceTypes.get(pool.name) ?? []) {
    // Cheap refusals first: the pod alone exceeds the type, or the type exceeds the limits.
    if (need.some(([k, v]) => v > (it.allocatable[k] ?? 0)) || !withinLeft(it, left)) continue;
    const own = labelsOf(it, labels);
    for (const o of it.offerings) {
      if (!o.available || o.capacityType === 'reserved') continue;
      const get: Get = (k) => (k === ZONE ? o.zone : k === CAPACITY_TYPE ? o.capacityType : (own[k] ?? base[k]));
      if (!poolAllows(pool, get) || selects(p, get) !== true) continue;
      if (!daemons.length) return true;
      const overhead = daemonOverhead(daemons, pool, { ...base, ...typeLabels(it, o) });
      if (need.every(([k, v]) => v + (overhead[k] ?? 0) <= (it.allocatable[k] ?? 0))) return true;
    }
  }
  return false;
}

const ZONE = 'topology.kubernetes.io/zone';
const CAPACITY_TYPE = 'karpenter.sh/capacity-type';

/** IgnoreDRARequests (default): daemon pods with resource claims add no overhead. */
export function daemonsOf(input: ProvisionInput): ProvisionInput['daemonSets'] {
  return input.options.ignoreDRARequests === false
    ? input.daemonSets
    : input.daemonSets.filter((d) => !(d.pod.resourceClaims?.length || d.pod.containerClaims?.length));
}

function withinLeft(it: InstanceType, left: Record<string, number>): boolean {
  return Object.entries(left).every(([k, v]) => k === 'nodes' || (it.capacity[k] ?? 0) <= v + 1e-6);
}

/** Why a NodeClaim breaks Karpenter's NodePool order, per NodeClaim index (empty when none does). */
export function orderViolations(input: ProvisionInput, claims: readonly NewNodeClaimPlan[]): string[] {
  const pools = ordered(input.nodePools);
  const rank = new Map(pools.map((p, i) => [p.name, i]));
  const left = remainingFloor(input, claims);
  const pods = new Map(input.pods.map((p) => [p.uid, p]));
  // Pods that differ only in name share the answer (replicas of a Deployment). The check keeps its work to itself:
  // nothing outlives the call, nothing is written onto the input's objects.
  const memo = new Map<string, boolean>();
  const labels: OwnLabels = new Map();
  const takes = (q: NodePool, p: Pod): boolean => {
    const key = JSON.stringify([
      q.name,
      p.nodeSelector,
      p.affinity?.nodeAffinity?.required ?? null,
      p.tolerations,
      p.requests,
    ]);
    let r = memo.get(key);
    if (r === undefined) memo.set(key, (r = couldTake(input, q, p, left.get(q.name)!, labels)));
    return r;
  };
  const out: string[] = [];
  claims.forEach((c, i) => {
    const r = rank.get(c.nodePool);
    if (r === undefined || r === 0) return;
    const earlier = pools.slice(0, r);
    const anchored = c.pods.some((uid) => {
      const p = pods.get(uid);
      return !p || !judgeable(p) || earlier.every((q) => !takes(q, p));
    });
    if (!anchored)
      out.push(
        `nodeclaim #${i} (nodepool ${c.nodePool}) holds only pods that an earlier NodePool (${earlier.map((q) => q.name).join(', ')}) could take`,
      );
  });
  return out;
}
