// A small in-memory cluster for Karpenter's scheduling acceptance cases (docs/karpenter/test-cases.md §0.2, §11, §12).
// One "provisioning pass" (Karpenter's ExpectProvisioned) = one solve over every provisionable pending pod;
// its plan is checked with verifyPlan, then carried out the way Karpenter's test harness does it: each new
// NodeClaim becomes an uninitialized node (the cheapest option's capacity and labels, the first allowed
// offering, as the fake cloud provider launches it) and the pods passed to the pass are bound to their node.
// Pods of earlier passes that are still pending take part in later solves but are only bound when passed
// again, like Karpenter's provisioner, which schedules every pending pod but binds only the ones the test names.
// Every case runs once per solver: the reference solver and the release wasm solver without its improvement
// phase; on the wasm side the plan must also equal the reference plan for the same input. The cases assert
// Karpenter's exact outcomes (node counts, which node a pod shares), so they are for the exact algorithm: the
// improvement phase may legitimately repack. Failure messages are not compared between solvers (the wasm
// solver explains failures after the fact, in its own words).
//
// Sections left out entirely (reasons; per-case omissions are listed at the top of each file):
// - §11.13 Metrics: karpenter_scheduler_* and pod decision metrics are controller observability, not plans.
// - §11.17 Offering Overrides: the Offering model has no capacity or overhead overrides.
// - §12.14 DefaultConstraints: the --scheduler-config default spread (selector deduced from Services and
//   ReplicaSets) is not implemented anywhere in the engine.
import { describe, expect } from 'vitest';
import type {
  DaemonSet,
  EngineOptions,
  InstanceType,
  LabelSelector,
  NodePool,
  NodeSelectorRequirement,
  Offering,
  Pod,
  StateNode,
  Taint,
  SelectorSources,
} from '../../../engine/domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../../engine/domain/types.ts';
import type { DraState } from '../../../engine/domain/dra.ts';
import { withDefaultSpread } from '../../../engine/scheduling/defaultspread.ts';
import { withExtraWellKnown } from '../../../engine/scheduling/labels.ts';
import { isActive, selectorMatches } from '../../../engine/scheduling/pods.ts';
import { solveReference } from '../../../engine/solver/reference/scheduler.ts';
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan } from '../../../engine/model/types.ts';
import { WasmSolver } from '../../../engine/solver/wasm.ts';
import { verifyPlan } from '../../../engine/verify/verify.ts';
import { nodePool, type NodePoolOptions } from '../../fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS, withOfferings } from '../../fixtures/instancetypes.ts';
import { normalizePlan } from '../../solver/normalize.ts';

export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';
export const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
export const INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const ARCH = 'kubernetes.io/arch';
export const RESERVATION_ID = 'karpenter.k8s.aws/capacity-reservation-id';
export const OS = 'kubernetes.io/os';
const WELL_KNOWN = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
/** The taint a freshly launched node carries until it is ready (Karpenter's test nodes have it too). */
export const NOT_READY: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

interface Solver {
  readonly name: string;
  solve(input: ProvisionInput): ProvisionPlan;
}

const wasm = new WasmSolver({ build: 'release', improve: false });
const SOLVERS: readonly Solver[] = [
  { name: 'reference', solve: solveReference },
  { name: 'wasm', solve: (i) => wasm.solve(i) },
];

/** Declares the enclosed cases once per solver. */
export function eachSolver(fn: (s: Solver) => void): void {
  describe.each(SOLVERS)('$name solver', fn);
}

/** The scheduling suite's NodePool: capacity-type In [spot, on-demand] (docs/karpenter/test-cases.md §0.2). */
export function suitePool(o: NodePoolOptions = {}): NodePool {
  return nodePool({ requirements: [{ key: CAPACITY_TYPE, operator: 'In', values: ['spot', 'on-demand'] }], ...o });
}

/** The topology suite's NodePool: capacity-type Exists (docs/karpenter/test-cases.md §12). */
export function topologyPool(o: NodePoolOptions = {}): NodePool {
  return nodePool({ requirements: [{ key: CAPACITY_TYPE, operator: 'Exists', values: [] }], ...o });
}

export const req = (
  key: string,
  operator: NodeSelectorRequirement['operator'],
  ...values: string[]
): NodeSelectorRequirement => ({ key, operator, values });

interface ClusterOptions {
  nodePools?: NodePool[];
  /** The fake cloud provider's types, the same for every NodePool (default: the suite's six). */
  instanceTypes?: readonly InstanceType[];
  /** Per NodePool name: its own types instead of `instanceTypes`. */
  instanceTypesByPool?: Readonly<Record<string, readonly InstanceType[]>>;
  daemonSets?: DaemonSet[];
  nodes?: StateNode[];
  options?: Partial<EngineOptions>;
  /** DRA objects (ResourceSlices, claims, classes), see dra.test.ts. */
  dra?: DraState;
  /** Services and workload selectors (default topology spread, see default-constraints.test.ts). */
  selectorSources?: SelectorSources;
}

export interface Pass {
  readonly input: ProvisionInput;
  readonly plan: ProvisionPlan;
  /** Nodes created for this pass's NodeClaims, in plan order. */
  readonly created: readonly StateNode[];
}

/** Karpenter's IsProvisionable for pods handed to a pass: marked unschedulable, not terminating, not a daemon. */
function provisionable(p: Pod): boolean {
  return p.unschedulable === true && p.deletionTimestamp === undefined && p.owner?.kind !== 'DaemonSet';
}

function bind(p: Pod, node: string): Pod {
  return { ...p, nodeName: node, phase: p.phase === 'Pending' ? 'Running' : p.phase, unschedulable: false };
}

export class Cluster {
  nodePools: NodePool[];
  instanceTypes: readonly InstanceType[];
  instanceTypesByPool: Record<string, readonly InstanceType[]>;
  daemonSets: DaemonSet[];
  nodes: StateNode[];
  /** Unbound pods the cluster knows, in creation order. */
  pending: Pod[] = [];
  options: EngineOptions;
  dra: DraState | undefined;
  selectorSources: SelectorSources | undefined;
  private seq = 0;

  constructor(
    readonly solver: Solver,
    o: ClusterOptions = {},
  ) {
    this.nodePools = o.nodePools ?? [suitePool()];
    this.instanceTypes = o.instanceTypes ?? defaultFakeInstanceTypes();
    this.instanceTypesByPool = { ...o.instanceTypesByPool };
    this.daemonSets = o.daemonSets ?? [];
    this.nodes = o.nodes ?? [];
    this.options = { ...DEFAULT_ENGINE_OPTIONS, maxInstanceTypes: 60, ...o.options };
    this.dra = o.dra;
    this.selectorSources = o.selectorSources;
  }

  input(): ProvisionInput {
    return {
      nodePools: this.nodePools,
      instanceTypes: new Map(this.nodePools.map((p) => [p.name, this.typesOf(p.name)])),
      nodes: this.nodes,
      // As engine/model/input.ts provisionInput gives them: kube-scheduler's defaults on pods without spread.
      pods: withDefaultSpread(
        this.pending.filter(provisionable),
        this.options.defaultTopologySpreadConstraints,
        this.selectorSources,
      ),
      daemonSets: this.daemonSets,
      options: this.options,
      wellKnownLabels: WELL_KNOWN,
      ...(this.dra ? { dra: this.dra } : {}),
    };
  }

  /** One provisioning pass. Pods with a nodeName are bound to that node first; `bind: false` binds nothing. */
  provision(pods: readonly Pod[] = [], o: { bind?: boolean } = {}): Pass {
    for (const p of pods) {
      if (p.nodeName) this.attach(p.nodeName, p);
      else if (!this.pending.some((q) => q.uid === p.uid)) this.pending.push(p);
    }
    const input = this.input();
    const plan = this.solver.solve(input);
    expect(verifyPlan(input, plan), `${this.solver.name}: verifyPlan`).toEqual([]);
    if (this.solver.name !== 'reference')
      expect(normalizePlan(plan), 'wasm plan equals the reference plan').toEqual(normalizePlan(solveReference(input)));
    const passed = new Set(o.bind === false ? [] : pods.map((p) => p.uid));
    const placeOn = (node: string, uids: readonly string[]) => {
      for (const uid of uids) {
        if (!passed.has(uid)) continue;
        const p = this.pending.find((q) => q.uid === uid)!;
        this.pending = this.pending.filter((q) => q.uid !== uid);
        this.attach(node, p);
      }
    };
    for (const [node, uids] of plan.existing) placeOn(node, uids);
    const created: StateNode[] = [];
    for (const c of plan.newNodeClaims) {
      const n = this.launchClaim(c);
      this.nodes.push(n);
      created.push(n);
      placeOn(n.name, c.pods);
    }
    return { input, plan, created: created.map((n) => this.node(n.name)!) };
  }

  private attach(name: string, p: Pod): void {
    const n = this.node(name);
    if (!n) throw new Error(`no node ${name} for pod ${p.name}`);
    this.update(name, (x) => ({ ...x, pods: [...x.pods, bind(p, name)] }));
  }

  typesOf(pool: string): readonly InstanceType[] {
    return this.instanceTypesByPool[pool] ?? this.instanceTypes;
  }

  /**
   * A launch into a reservation takes one of its instances, in every NodePool's view of it; an exhausted
   * reservation's offerings become unavailable (Karpenter's fake cloud provider and the AWS provider do the same).
   */
  private consumeReservation(id: string): void {
    const take = (its: readonly InstanceType[]) =>
      its.map((it) => {
        if (!it.offerings.some((o) => o.reservationId === id)) return it;
        return withOfferings(
          it,
          it.offerings.map((o) => {
            if (o.reservationId !== id) return o;
            const left = (o.reservationCapacity ?? 0) - 1;
            return { ...o, reservationCapacity: left, available: o.available && left > 0 };
          }),
        );
      });
    this.instanceTypes = take(this.instanceTypes);
    for (const k of Object.keys(this.instanceTypesByPool))
      this.instanceTypesByPool[k] = take(this.instanceTypesByPool[k]!);
  }

  /** The node the fake cloud provider launches for a NodeClaim: its cheapest option, a reserved offering first. */
  private launchClaim(c: NewNodeClaimPlan): StateNode {
    const pool = this.nodePools.find((p) => p.name === c.nodePool)!;
    const it = this.typesOf(pool.name).find((t) => t.name === c.instanceTypes[0]!.name)!;
    const allows = (key: string, v: string | undefined) =>
      c.requirements
        .filter((r) => r.key === key)
        .every((r) => (v === undefined ? r.operator === 'NotIn' || r.operator === 'DoesNotExist' : matches(r, v)));
    const allowed = it.offerings.filter(
      (o) =>
        o.available &&
        allows(ZONE, o.zone) &&
        allows(CAPACITY_TYPE, o.capacityType) &&
        allows(RESERVATION_ID, o.reservationId),
    );
    const offering: Offering = allowed.find((o) => o.capacityType === 'reserved') ?? allowed[0]!;
    if (offering.reservationId !== undefined) this.consumeReservation(offering.reservationId);
    const name = `node-${String(++this.seq).padStart(4, '0')}`;
    const labels: Record<string, string> = {};
    for (const r of it.requirements.values())
      if (!r.complement && r.values.size) labels[r.key] = [...r.values].sort()[0]!;
    for (const r of c.requirements) if (r.operator === 'In' && r.values.length === 1) labels[r.key] = r.values[0]!;
    Object.assign(labels, c.labels, {
      [ZONE]: offering.zone,
      [CAPACITY_TYPE]: offering.capacityType,
      [INSTANCE_TYPE]: it.name,
    });
    if (offering.reservationId !== undefined) labels[RESERVATION_ID] = offering.reservationId;
    Object.assign(labels, { 'karpenter.sh/nodepool': pool.name, [HOSTNAME]: name });
    return {
      name,
      nodeClaimName: name,
      hasNode: true,
      hasNodeClaim: true,
      managed: true,
      nodePoolName: pool.name,
      labels,
      annotations: {},
      taints: [...pool.template.taints, ...pool.template.startupTaints, NOT_READY],
      startupTaints: pool.template.startupTaints,
      capacity: it.capacity,
      allocatable: it.allocatable,
      pods: [],
      registered: true,
      initialized: false,
      ready: false,
      markedForDeletion: false,
      deleting: false,
      creationTimestamp: this.seq,
      conditions: {},
    };
  }

  /** Marks nodes initialized (all, or the named ones): startup and not-ready taints are gone, labels set. */
  launch(...names: string[]): void {
    for (const n of this.nodes) {
      if (names.length && !names.includes(n.name)) continue;
      this.update(n.name, (x) => ({
        ...x,
        initialized: true,
        ready: true,
        labels: { ...x.labels, 'karpenter.sh/initialized': 'true', 'karpenter.sh/registered': 'true' },
        taints: x.taints.filter(
          (t) => t.key !== NOT_READY.key && !x.startupTaints.some((s) => s.key === t.key && s.effect === t.effect),
        ),
      }));
    }
  }

  update(name: string, fn: (n: StateNode) => StateNode): void {
    this.nodes = this.nodes.map((n) => (n.name === name ? fn(n) : n));
  }

  node(name: string): StateNode | undefined {
    return this.nodes.find((n) => n.name === name);
  }

  /** The node a pod is bound to. */
  nodeOf(p: Pod): StateNode | undefined {
    return this.nodes.find((n) => n.pods.some((q) => q.uid === p.uid));
  }

  /** Karpenter's ExpectScheduled: the pod's node, failing when the pod is not bound. */
  scheduledNode(p: Pod): StateNode {
    const n = this.nodeOf(p);
    expect(n, `pod ${p.name} is scheduled`).toBeDefined();
    return n!;
  }

  scheduled(p: Pod): boolean {
    return this.nodeOf(p) !== undefined;
  }

  /** Removes a pod from wherever it is (a deleted pod). */
  deletePod(p: Pod): void {
    this.pending = this.pending.filter((q) => q.uid !== p.uid);
    this.nodes = this.nodes.map((n) => ({ ...n, pods: n.pods.filter((q) => q.uid !== p.uid) }));
  }

  /** Karpenter's ExpectDeleteAllUnscheduledPods. */
  deleteUnscheduled(): void {
    this.pending = [];
  }

  /**
   * Karpenter's ExpectSkew: active pods of the namespace matching the selector (all pods when absent), counted
   * per domain of their node (hostname = node name), as sorted counts.
   */
  skew(key: string, selector?: LabelSelector, namespace = 'default'): number[] {
    const counts = new Map<string, number>();
    for (const n of this.nodes) {
      const d = key === HOSTNAME ? n.name : n.labels[key];
      if (d === undefined) continue;
      for (const p of n.pods) {
        if (!isActive(p) || p.namespace !== namespace || (selector && !selectorMatches(selector, p.labels))) continue;
        counts.set(d, (counts.get(d) ?? 0) + 1);
      }
    }
    return [...counts.values()].sort((a, b) => a - b);
  }

  /** Karpenter's ExpectMaxSkew: max − min of the skew counts. */
  maxSkew(key: string, selector?: LabelSelector): number {
    const s = this.skew(key, selector);
    return s.length ? s[s.length - 1]! - s[0]! : 0;
  }
}

function matches(r: NodeSelectorRequirement, v: string): boolean {
  switch (r.operator) {
    case 'In':
      return r.values.includes(v);
    case 'NotIn':
      return !r.values.includes(v);
    case 'DoesNotExist':
      return false;
    default:
      return true;
  }
}

/** Sorted counts, for comparing with a catalog skew such as (1,1,2). */
export const counts = (...xs: number[]): number[] => [...xs].sort((a, b) => a - b);
