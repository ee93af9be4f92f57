// The reference provisioning solver: Karpenter's scheduling algorithm (docs/karpenter/scheduling.md §2), written
// to be read, not to be fast. It is the oracle the wasm solver is tested against and the "Karpenter"
// baseline in benchmarks. It shares the scheduling model (engine/model: templates, nodes, topology,
// relaxation) with the wasm encoder; the search below is its own. Deterministic tie rules where upstream
// iterates Go maps are documented in docs/solver.md.
import { NODES } from '../../domain/resources.ts';
import type { Pod, Requirements, Taint } from '../../domain/types.ts';
import { draRoute, withDraErrors } from '../../model/dra.ts';
import { describeLimits, subtractMaxCapacity, withinLimits } from '../../model/limits.ts';
import type { AddResult, SimNodeClaim } from '../../model/places.ts';
import { SchedulingModel } from '../../model/scheduling.ts';
import type { Template } from '../../model/templates.ts';
import type { NewNodeClaimPlan, PodError, ProvisionInput, ProvisionPlan } from '../../model/types.ts';
import { compareQueueOrder, optsOutOfKarpenter, podRequirements, podValidationError } from '../../scheduling/pods.ts';
import { finalizeClaim } from './finalize.ts';

type Attempt =
  | { ok: true }
  | { ok: false; reason: string; perNodePool?: Record<string, string>; reservedOffering?: true };
type Placed = AddResult & { ok: true };

class ReferenceScheduler {
  /** NodeClaims planned so far, in the order they were opened. */
  readonly claims: SimNodeClaim[] = [];
  private claimSeq = 0;
  private readonly consolidation: ProvisionInput['consolidation'];

  constructor(readonly model: SchedulingModel) {
    this.consolidation = model.input.consolidation;
  }

  /** Runs the queue (§2.4) and returns the errors of pods left unplaced. */
  run(pods: readonly Pod[]): Map<string, Attempt & { ok: false }> {
    const queue = [...pods].sort(compareQueueOrder);
    const lastLen = new Map<string, number>();
    const errors = new Map<string, Attempt & { ok: false }>();
    while (queue.length) {
      const head = queue[0]!;
      if (lastLen.get(head.uid) === queue.length) break;
      queue.shift();
      const r = this.trySchedule(head);
      if (r.ok) {
        errors.delete(head.uid);
        continue;
      }
      errors.set(head.uid, r);
      this.model.topology.update(head);
      queue.push(head);
      lastLen.set(head.uid, queue.length);
    }
    return errors;
  }

  /** One visit: schedule, relaxing one preference at a time until it fits or nothing is left (§2.5). */
  private trySchedule(original: Pod): Attempt {
    // A DRA error (claims that cannot be evaluated) defers the pod without relaxation (§2.5).
    const dra = this.model.dra?.claimsOf(original);
    if (dra?.kind === 'error') return { ok: false, reason: dra.reason };
    let pod = original;
    for (;;) {
      const r = this.add(pod);
      if (r.ok) return r;
      // Waiting for reserved capacity is not a reason to relax preferences (§2.5).
      if (r.reservedOffering) return r;
      const relaxed = this.model.relax(pod);
      if (!relaxed) return r;
      pod = relaxed;
      this.model.topology.update(pod);
    }
  }

  /** Karpenter's three places in order: an existing node, a NodeClaim planned earlier, a new NodeClaim. */
  private add(pod: Pod): Attempt {
    const reqs = podRequirements(pod, this.model.input.options.preferencePolicy);
    if (this.addToExisting(pod, reqs) || this.addToInflight(pod, reqs)) return { ok: true };
    return this.addToNewClaim(pod, reqs);
  }

  /** The first existing node that takes the pod (moved pods skip blocked destinations, §2.7). */
  private addToExisting(pod: Pod, reqs: Requirements): boolean {
    const moved = this.consolidation?.movedPods.has(pod.uid) ?? false;
    for (const node of this.model.existing) {
      if (moved && this.consolidation!.blockedDestinations.has(node.node.name)) continue;
      const r = node.canAdd(pod, reqs, this.model.topology, this.model.dra);
      if (!r.ok) continue;
      node.add(pod, r.requirements);
      this.commit(pod, r, node.taints);
      return true;
    }
    return false;
  }

  /** The planned NodeClaim with the fewest pods (then the oldest) that takes the pod. */
  private addToInflight(pod: Pod, reqs: Requirements): boolean {
    const inflight = [...this.claims].sort((a, b) => a.pods.length - b.pods.length || a.seq - b.seq);
    for (const claim of inflight) {
      const r = claim.canAdd(
        pod,
        reqs,
        this.model.topology,
        this.model.wellKnown,
        this.model.strictMinValues,
        this.model.dra,
      );
      if (!r.ok) continue;
      this.addToClaim(claim, pod, r);
      return true;
    }
    return false;
  }

  /** A new NodeClaim from the first NodePool (in weight order) whose template and limits take the pod. */
  private addToNewClaim(pod: Pod, reqs: Requirements): Attempt {
    if (this.model.templates.length === 0)
      return { ok: false, reason: 'nodepool requirements filtered out all available instance types' };
    const perNodePool: Record<string, string> = {};
    for (const tmpl of this.model.templates) {
      const pool = tmpl.pool.name;
      const opened = this.openClaim(tmpl, pod, reqs);
      if (opened.ok) return opened;
      perNodePool[pool] = opened.reason;
      // Reserved capacity contended here: no fallback to lower-weight NodePools (§2.6).
      if (opened.reservedOffering)
        return { ok: false, reason: `nodepool ${pool}: ${opened.reason}`, perNodePool, reservedOffering: true };
    }
    return {
      ok: false,
      reason: Object.entries(perNodePool)
        .map(([p, e]) => `nodepool ${p}: ${e}`)
        .join('; '),
      perNodePool,
    };
  }

  /** Opens a NodeClaim of the template for the pod within the pool's limits, or says why not. */
  private openClaim(tmpl: Template, pod: Pod, reqs: Requirements): Attempt {
    const remaining = this.model.remainingLimits(tmpl.pool.name)!;
    if (remaining[NODES] !== undefined && remaining[NODES] <= 0)
      return { ok: false, reason: 'node limits have been exhausted' };
    const its = tmpl.instanceTypes.filter((it) => withinLimits(it.capacity, remaining));
    if (!its.length)
      return {
        ok: false,
        reason: `all available instance types exceed limits for nodepool ${describeLimits(remaining)}`,
      };
    const claim = this.model.newClaim(tmpl, its, this.claimSeq);
    const r = claim.canAdd(
      pod,
      reqs,
      this.model.topology,
      this.model.wellKnown,
      this.model.strictMinValues,
      this.model.dra,
    );
    if (!r.ok)
      return r.reservedOffering
        ? { ok: false, reason: r.reason, reservedOffering: true }
        : { ok: false, reason: r.reason };
    this.claimSeq++;
    this.take(claim, pod, r);
    this.claims.push(claim);
    // The claim's options are narrowed to the pod's by now: its largest option is what the limits lose.
    subtractMaxCapacity(remaining, claim.instanceTypes);
    this.model.topology.registerHostname(claim.hostname);
    this.model.topology.record(pod, { requirements: r.requirements, taints: tmpl.pool.template.taints });
    return { ok: true };
  }

  private addToClaim(claim: SimNodeClaim, pod: Pod, r: Placed): void {
    this.take(claim, pod, r);
    this.model.topology.record(pod, { requirements: r.requirements, taints: claim.template.pool.template.taints });
  }

  /** The claim takes the pod (requirements and options narrowed, reservations held, devices allocated). */
  private take(claim: SimNodeClaim, pod: Pod, r: Placed): void {
    claim.add(pod, r.requirements, r.instanceTypes!, {
      ...(r.reservations ? { reservations: r.reservations } : {}),
      ...(r.draDrivers ? { draDrivers: r.draDrivers } : {}),
    });
    if (r.picks) this.model.dra!.allocator.commit(r.picks);
  }

  /** Devices allocated and topology counts updated for a pod placed on an existing node. */
  private commit(pod: Pod, r: Placed, taints: readonly Taint[]): void {
    if (r.picks) this.model.dra!.allocator.commit(r.picks);
    this.model.topology.record(pod, { requirements: r.requirements, taints });
  }
}

/** The pods to schedule, and the errors of pods the solve leaves out (invalid ones); opted-out pods are dropped. */
function admitted(pods: readonly Pod[]): { pods: Pod[]; ignored: PodError[] } {
  const ignored: PodError[] = [];
  const out: Pod[] = [];
  for (const p of pods) {
    if (optsOutOfKarpenter(p)) continue;
    const invalid = podValidationError(p);
    if (invalid) ignored.push({ uid: p.uid, reason: invalid });
    else out.push(p);
  }
  return { pods: out, ignored };
}

/** Solves with Karpenter's algorithm. */
export function solveReference(input: ProvisionInput): ProvisionPlan {
  // IgnoreDRARequests (the default): DRA pods get the DRA error, DRA daemon pods add no overhead (model/dra.ts).
  const route = draRoute(input);
  if (route.kind === 'stripped') return withDraErrors(solveReference(route.input), route.errors);
  const { pods, ignored } = admitted(input.pods);
  const s = new ReferenceScheduler(new SchedulingModel(input, { pods }));
  const errors = s.run(pods);
  const unschedulable: PodError[] = [];
  for (const [uid, e] of errors)
    unschedulable.push({
      uid,
      reason: e.reason,
      ...(e.perNodePool ? { perNodePool: e.perNodePool } : {}),
      ...(e.reservedOffering ? { reservedOffering: true as const } : {}),
    });
  const newNodeClaims: NewNodeClaimPlan[] = [];
  for (const c of s.claims) {
    const f = finalizeClaim(c, input.options, s.model.wellKnown, s.model.caches);
    if (f.ok) newNodeClaims.push(f.claim);
    else for (const p of c.pods) unschedulable.push({ uid: p.uid, reason: f.reason });
  }
  const existing = new Map<string, string[]>();
  for (const e of s.model.existing)
    if (e.added.length)
      existing.set(
        e.node.name,
        e.added.map((p) => p.uid),
      );
  return {
    existing,
    newNodeClaims,
    unschedulable,
    ignored,
    costPerHour: newNodeClaims.reduce((acc, c) => acc + c.price, 0),
  };
}
