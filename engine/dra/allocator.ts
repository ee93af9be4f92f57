// The device allocation simulation (docs/karpenter/scheduling.md §2.7, §2.8, §2.20 with IgnoreDRARequests=false): which
// devices a pod's unallocated claims would get on a node, given what the cluster's ResourceSlices publish, what a
// new node of an instance type would publish (its device templates) and what claims already hold. A small exact
// search (backtracking over requests and devices), not a heuristic: a claim is reported unsatisfiable only when no
// assignment of the reachable free devices satisfies every request. docs/solver.md ("DRA") has the model.
import type {
  AllocatedDevice,
  CounterSet,
  Device,
  DeviceRequest,
  DeviceTemplate,
  DraState,
  ResourceClaim,
  ResourceSlice,
} from '../domain/dra.ts';
import type { InstanceType, NodeSelectorTerm, Pod, Requirements } from '../domain/types.ts';
import { add, compatible, fromLabels, fromSelector } from '../scheduling/requirements.ts';
import { evalSelector } from './cel.ts';
import { deviceTemplatesOf } from './templates.ts';

import { Ledger, type Access, type DeviceRef, type Pick, type PodClaim } from './ledger.ts';

export type { Access, DeviceRef, PodClaim, Pick };

export const IGNORED_DRA_REASON =
  'pod has Dynamic Resource Allocation resource claims, which are not provisioned while IGNORE_DRA_REQUESTS is true (set --ignore-dra-requests=false to simulate device allocation)';

/** The pod uses DRA: spec.resourceClaims or container/init-container resources.claims. */
export function hasDRA(pod: Pod): boolean {
  return (pod.resourceClaims?.length ?? 0) > 0 || (pod.containerClaims?.length ?? 0) > 0;
}

const deviceKey = (driver: string, pool: string, device: string) => `${driver}/${pool}/${device}`;
const qualify = (driver: string, name: string) => (name.includes('/') ? name : `${driver}/${name}`);

function accessOf(s: ResourceSlice): Access {
  if (s.nodeName !== undefined) return { kind: 'node', node: s.nodeName };
  if (s.nodeSelector) return { kind: 'selector', terms: s.nodeSelector };
  return { kind: 'all' };
}

function refsOf(
  driver: string,
  pool: string,
  devices: readonly Device[],
  counters: readonly CounterSet[],
  access: Access,
  keyPrefix = '',
): DeviceRef[] {
  const sets = new Map(counters.map((c) => [c.name, c]));
  return devices.map((device) => ({
    key: keyPrefix + deviceKey(driver, pool, device.name),
    driver,
    pool,
    device,
    counterSets: sets,
    access,
  }));
}

type AllocResult = { ok: true; picks: Pick[]; requirements: Requirements } | { ok: false; reason: string };

const SEARCH_LIMIT = 50_000;

/** One device to find for a request, and the reachable devices that match it. */
type Slot = { claim: string; request: DeviceRequest; options: DeviceRef[] };

/** The state of one allocate() search; `place` changes it and the returned undo restores it. */
interface SearchState {
  requirements: Requirements;
  readonly nodeName: string | undefined;
  readonly hostname: string | undefined;
  /** Capacity and counters taken so far in this search, by device key and counter-set key. */
  readonly taken: Map<string, Record<string, number>>;
  readonly picks: Pick[];
  readonly usedBySlot: Set<string>;
  steps: number;
}

/** a + b, key by key (a may be absent). */
function sum(
  a: Readonly<Record<string, number>> | undefined,
  b: Readonly<Record<string, number>>,
): Record<string, number> {
  const out = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** The DRA world of one solve: classes, published devices, claims and the ledger. */
export class DeviceAllocator {
  readonly ledger: Ledger;
  private readonly classes: ReadonlyMap<string, DraState['deviceClasses'][number]>;
  private readonly claims: ReadonlyMap<string, ResourceClaim>;
  private readonly templates: ReadonlyMap<string, DraState['resourceClaimTemplates'][number]>;
  /** Devices published by ResourceSlices, by key. */
  readonly published: ReadonlyMap<string, DeviceRef>;
  private readonly templateRefs = new WeakMap<InstanceType, Map<string, DeviceRef[]>>();

  constructor(readonly dra: DraState) {
    this.classes = new Map(dra.deviceClasses.map((c) => [c.name, c]));
    this.claims = new Map(dra.resourceClaims.map((c) => [`${c.namespace}/${c.name}`, c]));
    this.templates = new Map(dra.resourceClaimTemplates.map((t) => [`${t.namespace}/${t.name}`, t]));
    const published = new Map<string, DeviceRef>();
    // Only the newest generation of a pool counts (older slices are being replaced by their driver).
    const newest = new Map<string, number>();
    for (const s of dra.resourceSlices)
      newest.set(
        `${s.driver}/${s.pool.name}`,
        Math.max(newest.get(`${s.driver}/${s.pool.name}`) ?? -Infinity, s.pool.generation),
      );
    for (const s of dra.resourceSlices) {
      if (s.pool.generation !== newest.get(`${s.driver}/${s.pool.name}`)) continue;
      const sets = dra.resourceSlices
        .filter((x) => x.driver === s.driver && x.pool.name === s.pool.name && x.pool.generation === s.pool.generation)
        .flatMap((x) => x.sharedCounters);
      for (const r of refsOf(s.driver, s.pool.name, s.devices, sets, accessOf(s))) published.set(r.key, r);
    }
    this.published = published;
    this.ledger = new Ledger();
    for (const c of dra.resourceClaims) {
      for (const a of c.allocation?.devices ?? []) {
        const ref = published.get(deviceKey(a.driver, a.pool, a.device));
        if (!ref) continue; // a device whose slice is gone holds nothing we could allocate anyway
        this.ledger.take(
          ref,
          a.consumedCapacity ??
            this.requestCapacity(
              c.requests.find((r) => r.name === a.request),
              ref,
            ),
        );
      }
    }
  }

  /** The claims a pod needs, or why they cannot be evaluated (missing objects, unsupported features). */
  podClaims(pod: Pod): { ok: true; claims: PodClaim[] } | { ok: false; reason: string } {
    const out: PodClaim[] = [];
    const declared = new Set((pod.resourceClaims ?? []).map((c) => c.name));
    for (const n of pod.containerClaims ?? []) {
      if (!declared.has(n))
        return {
          ok: false,
          reason: `a container uses resource claim ${n}, which spec.resourceClaims does not declare`,
        };
    }
    for (const rc of pod.resourceClaims ?? []) {
      let spec: { requests: readonly DeviceRequest[]; unsupported?: string } | undefined;
      let key: string;
      let allocated: readonly AllocatedDevice[] | undefined;
      let what: string;
      const claimName = rc.resourceClaimName ?? rc.generatedClaimName;
      if (claimName !== undefined) {
        key = `${pod.namespace}/${claimName}`;
        what = `ResourceClaim ${key}`;
        const c = this.claims.get(key);
        if (!c) return { ok: false, reason: `${what} (pod claim ${rc.name}) was not found` };
        spec = c;
        allocated = c.allocation?.devices;
      } else {
        const tk = `${pod.namespace}/${rc.resourceClaimTemplateName}`;
        what = `ResourceClaimTemplate ${tk}`;
        const t = this.templates.get(tk);
        if (!t) return { ok: false, reason: `${what} (pod claim ${rc.name}) was not found` };
        spec = t;
        key = `${pod.namespace}/${pod.name}/${rc.name}`;
      }
      if (spec.unsupported) return { ok: false, reason: `${what}: ${spec.unsupported}` };
      for (const r of spec.requests) {
        if (r.unsupported) return { ok: false, reason: `${what}: ${r.unsupported}` };
        const cls = this.classes.get(r.deviceClassName);
        if (!cls)
          return { ok: false, reason: `${what} request ${r.name}: DeviceClass ${r.deviceClassName} was not found` };
        for (const s of [...cls.selectors, ...r.selectors]) {
          if (s.unsupported)
            return {
              ok: false,
              reason: `${what} request ${r.name}: selector ${JSON.stringify(s.expression)}: ${s.unsupported}`,
            };
        }
      }
      out.push({ key, requests: spec.requests, ...(allocated ? { allocated } : {}) });
    }
    return { ok: true, claims: out };
  }

  /** Template devices of an instance type on one new NodeClaim (keys are private to that NodeClaim). */
  templateDevices(it: InstanceType, hostname: string): DeviceRef[] {
    let byHost = this.templateRefs.get(it);
    if (!byHost) this.templateRefs.set(it, (byHost = new Map()));
    let refs = byHost.get(hostname);
    if (refs === undefined) {
      refs = deviceTemplatesOf(it).flatMap((t: DeviceTemplate) =>
        refsOf(
          t.driver,
          t.pool,
          t.devices,
          t.sharedCounters ?? [],
          { kind: 'template', hostname },
          `${hostname}/${it.name}/`,
        ),
      );
      byHost.set(hostname, refs);
    }
    return refs!;
  }

  /** Published devices reachable from a node with these requirements (labels of an existing node, or a NodeClaim's). */
  reachable(nodeName: string | undefined, reqs: Requirements): DeviceRef[] {
    const out: DeviceRef[] = [];
    for (const r of this.published.values()) if (this.termFor(r.access, nodeName, reqs) !== null) out.push(r);
    return out;
  }

  /** undefined: reachable without narrowing; a term: reachable if the node takes it; null: unreachable. */
  termFor(
    a: Access,
    nodeName: string | undefined,
    reqs: Requirements,
    hostname?: string,
  ): NodeSelectorTerm | undefined | null {
    switch (a.kind) {
      case 'all':
        return undefined;
      case 'node':
        return nodeName !== undefined && a.node === nodeName ? undefined : null;
      case 'template':
        return hostname !== undefined && a.hostname === hostname ? undefined : null;
      case 'selector':
        for (const t of a.terms) {
          if (compatible(reqs, add(new Map(), ...t.matchExpressions.map(fromSelector))) === undefined) return t;
        }
        return null;
    }
  }

  private requestCapacity(r: DeviceRequest | undefined, ref: DeviceRef): Record<string, number> {
    if (!ref.device.allowMultipleAllocations) return {};
    const out: Record<string, number> = {};
    const asked = r ? Object.entries(r.capacity) : [];
    if (!asked.length) return { ...ref.device.capacity }; // no request: the whole device's capacity
    for (const [k, v] of asked) out[qualify(ref.driver, k)] = v;
    return out;
  }

  private matches(r: DeviceRequest, ref: DeviceRef, errors: string[]): boolean {
    const cls = this.classes.get(r.deviceClassName)!;
    for (const s of [...cls.selectors, ...r.selectors]) {
      const e = evalSelector(s, ref.driver, ref.device);
      if (e === true) continue;
      if (e !== false) errors.push(`selector ${JSON.stringify(s.expression)} on ${ref.key}: ${e.error}`);
      return false;
    }
    for (const [k, v] of Object.entries(r.capacity)) {
      const cap = ref.device.capacity[qualify(ref.driver, k)];
      if (cap === undefined || cap < v) return false;
    }
    return true;
  }

  /**
   * Allocates the pod's claims on a node. Already allocated claims must be reachable; unallocated ones get
   * devices from `candidates` (in order). Reachability through a ResourceSlice node selector narrows the
   * requirements. Does not change the ledger: `commit` does.
   */
  allocate(
    claims: readonly PodClaim[],
    candidates: readonly DeviceRef[],
    nodeName: string | undefined,
    reqs: Requirements,
    hostname?: string,
  ): AllocResult {
    const st: SearchState = {
      requirements: reqs,
      nodeName,
      hostname,
      taken: new Map(),
      picks: [],
      usedBySlot: new Set(),
      steps: 0,
    };
    const unreachable = this.checkAllocated(claims, st);
    if (unreachable) return { ok: false, reason: unreachable };
    const errors: string[] = [];
    const slots = this.slotsFor(claims, candidates, errors);
    if (typeof slots === 'string') return { ok: false, reason: slots };
    const r = this.search(slots, 0, st);
    if (r === 'limit') return { ok: false, reason: `device allocation search gave up after ${SEARCH_LIMIT} steps` };
    if (!r)
      return {
        ok: false,
        reason: `the claims cannot be satisfied together by the reachable free devices${errors.length ? ` (${errors[0]})` : ''}`,
      };
    return { ok: true, picks: st.picks, requirements: st.requirements };
  }

  /** The claim's devices if it is allocated already (in the cluster, or earlier in this solve). */
  private allocatedOf(c: PodClaim): readonly AllocatedDevice[] | undefined {
    return (
      c.allocated ??
      this.ledger.allocatedInSolve
        .get(c.key)
        ?.map((p) => ({ request: p.request, driver: p.ref.driver, pool: p.ref.pool, device: p.ref.device.name }))
    );
  }

  /** Narrows the search's requirements by a ResourceSlice node-selector term; false if the node cannot take it. */
  private narrow(st: SearchState, t: NodeSelectorTerm | undefined): boolean {
    if (!t) return true;
    const tr = add(new Map(), ...t.matchExpressions.map(fromSelector));
    if (compatible(st.requirements, tr) !== undefined) return false;
    st.requirements = add(st.requirements, ...tr.values());
    return true;
  }

  /** Already allocated claims must be reachable from the node; the reason why one is not, else undefined. */
  private checkAllocated(claims: readonly PodClaim[], st: SearchState): string | undefined {
    for (const c of claims) {
      for (const a of this.allocatedOf(c) ?? []) {
        const k = deviceKey(a.driver, a.pool, a.device);
        const ref = this.published.get(k) ?? this.inSolveRef(c.key, a);
        if (!ref) return `claim ${c.key} is allocated to device ${k}, which no ResourceSlice publishes`;
        const t = this.termFor(ref.access, st.nodeName, st.requirements, st.hostname);
        if (t === null || !this.narrow(st, t))
          return `claim ${c.key} is allocated to device ${k}, which is not reachable from this node`;
      }
    }
    return undefined;
  }

  /**
   * One slot per device to find (a request for N devices is N slots; allocationMode All is one slot per matching
   * device), each with the candidates that match it; a reason when a request cannot be met by any choice.
   */
  private slotsFor(claims: readonly PodClaim[], candidates: readonly DeviceRef[], errors: string[]): Slot[] | string {
    const slots: Slot[] = [];
    const hint = () => (errors.length ? ` (${errors[0]})` : '');
    for (const c of claims) {
      if (this.allocatedOf(c)) continue;
      for (const r of c.requests) {
        const options = candidates.filter((ref) => this.matches(r, ref, errors));
        if (r.allocationMode === 'All') {
          if (!options.length) return `claim ${c.key} request ${r.name}: no device matches${hint()}`;
          for (const o of options) slots.push({ claim: c.key, request: r, options: [o] });
        } else {
          if (options.length < r.count)
            return `claim ${c.key} request ${r.name}: ${options.length} reachable device(s) match, ${r.count} needed${hint()}`;
          for (let i = 0; i < r.count; i++) slots.push({ claim: c.key, request: r, options });
        }
      }
    }
    return slots;
  }

  /** Backtracking over slots from i: true when every slot has a device, 'limit' when the step budget runs out. */
  private search(slots: readonly Slot[], i: number, st: SearchState): boolean | 'limit' {
    if (i === slots.length) return true;
    const s = slots[i]!;
    for (const ref of s.options) {
      if (++st.steps > SEARCH_LIMIT) return 'limit';
      const undo = this.place(st, s, ref);
      if (!undo) continue;
      const r = this.search(slots, i + 1, st);
      if (r) return r;
      undo();
    }
    return false;
  }

  /**
   * Takes `ref` for slot `s` if it is free enough and reachable: its capacity, its counters (on first use) and
   * the narrowed requirements are recorded; returns how to take it back, or undefined if it cannot be taken.
   */
  private place(st: SearchState, s: Slot, ref: DeviceRef): (() => void) | undefined {
    const slotKey = `${s.claim}|${s.request.name}|${ref.key}`;
    if (st.usedBySlot.has(slotKey)) return undefined; // one device at most once per request
    const consumed = this.requestCapacity(s.request, ref);
    const { taken } = st;
    if (!this.ledger.canTake(ref, consumed, taken)) return undefined;
    const t = this.termFor(ref.access, st.nodeName, st.requirements, st.hostname);
    if (t === null) return undefined;
    const requirements = st.requirements;
    if (!this.narrow(st, t)) {
      st.requirements = requirements;
      return undefined;
    }
    const before = taken.get(ref.key);
    taken.set(ref.key, sum(before, consumed));
    const counterKeys: Array<[string, Record<string, number> | undefined]> = [];
    if (!before && !this.ledger.inUse(ref.key)) {
      for (const cc of ref.device.consumesCounters) {
        const ck = `counters:${ref.driver}/${ref.pool}/${cc.counterSet}`;
        const prev = taken.get(ck);
        counterKeys.push([ck, prev]);
        taken.set(ck, sum(prev, cc.counters));
      }
    }
    st.usedBySlot.add(slotKey);
    st.picks.push({ claim: s.claim, request: s.request.name, ref, consumed });
    return () => {
      st.picks.pop();
      st.usedBySlot.delete(slotKey);
      for (const [ck, prev] of counterKeys.reverse())
        if (prev) taken.set(ck, prev);
        else taken.delete(ck);
      if (before) taken.set(ref.key, before);
      else taken.delete(ref.key);
      st.requirements = requirements;
    };
  }

  private inSolveRef(claim: string, a: AllocatedDevice): DeviceRef | undefined {
    return this.ledger.allocatedInSolve
      .get(claim)
      ?.find((p) => p.request === a.request && p.ref.device.name === a.device && p.ref.pool === a.pool)?.ref;
  }

  /** Records picks in the ledger; claims allocated here are then allocated for every later pod sharing them. */
  commit(picks: readonly Pick[]): void {
    const byClaim = new Map<string, Pick[]>();
    for (const p of picks) {
      this.ledger.take(p.ref, p.consumed);
      let l = byClaim.get(p.claim);
      if (!l) byClaim.set(p.claim, (l = []));
      l.push(p);
    }
    for (const [k, l] of byClaim) if (!this.ledger.allocatedInSolve.has(k)) this.ledger.allocatedInSolve.set(k, l);
  }

  /** Labels of an existing node as requirements, for selector-reachability. */
  static nodeRequirements(labels: Readonly<Record<string, string>>): Requirements {
    return fromLabels(labels);
  }
}

/** What a pod needs from the allocator, decided once per solve. */
export type PodDra = { kind: 'none' } | { kind: 'claims'; claims: PodClaim[] } | { kind: 'error'; reason: string };

type NewNodeAlloc =
  | {
      ok: true;
      kept: InstanceType[];
      requirements: Requirements;
      picks: Pick[];
      driversByType: Map<string, Set<string>>;
    }
  | { ok: false; reason: string };

/**
 * The DRA instance-type filter for a new NodeClaim (docs/karpenter/scheduling.md §2.8 step 5): each remaining instance type
 * is tried with its own template devices first, then the cluster's reachable devices. The NodeClaim is one future
 * node, so its instance types must agree on which published (cluster) devices the pod takes: the types kept are
 * those whose allocation takes the same published devices as the first type that succeeds (in list order).
 * Types without device templates share one evaluation.
 */
export function allocateForNewNode(
  a: DeviceAllocator,
  claims: readonly PodClaim[],
  its: readonly InstanceType[],
  reqs: Requirements,
  hostname: string,
): NewNodeAlloc {
  const cluster = a.reachable(undefined, reqs);
  let plain: AllocResult | undefined;
  let chosen: string | undefined;
  let requirements: Requirements = reqs;
  const kept: InstanceType[] = [];
  const picks: Pick[] = [];
  const driversByType = new Map<string, Set<string>>();
  let firstReason: string | undefined;
  const isTemplate = (p: Pick) => p.ref.access.kind === 'template';
  for (const it of its) {
    const own = a.templateDevices(it, hostname);
    const r = own.length
      ? a.allocate(claims, [...own, ...cluster], undefined, reqs, hostname)
      : (plain ??= a.allocate(claims, cluster, undefined, reqs, hostname));
    if (!r.ok) {
      firstReason ??= r.reason;
      continue;
    }
    const signature = r.picks
      .filter((p) => !isTemplate(p))
      .map((p) => `${p.claim}|${p.request}|${p.ref.key}`)
      .join(',');
    if (chosen === undefined) {
      chosen = signature;
      requirements = r.requirements;
      picks.push(...r.picks.filter((p) => !isTemplate(p)));
    } else if (signature !== chosen) continue;
    kept.push(it);
    const own2 = r.picks.filter(isTemplate);
    picks.push(...own2);
    if (own2.length) driversByType.set(it.name, new Set(own2.map((p) => p.ref.driver)));
  }
  if (!kept.length)
    return {
      ok: false,
      reason: `no instance type can satisfy the pod's resource claims: ${firstReason ?? 'no instance types'}`,
    };
  return { ok: true, kept, requirements, picks, driversByType };
}
