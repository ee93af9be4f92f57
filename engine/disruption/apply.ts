// Carrying a command out on a snapshot, as the orchestration queue would once every replacement is
// initialized: the candidates disappear, each replacement becomes an initialized node of its first (cheapest)
// option in its cheapest allowed offering, and moved pods are bound to their destinations. Tests use it to
// "execute the queue"; the repack uses it to plan later steps; what-if reports use it for "after".
import type { InstanceType, NodePool, Offering, Pod, Requirements, Snapshot, StateNode } from '../domain/types.ts';
import {
  CAPACITY_TYPE_LABEL,
  HOSTNAME_LABEL,
  INITIALIZED_LABEL,
  NODEPOOL_LABEL,
  REGISTERED_LABEL,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import { singleValueLabels } from '../scheduling/requirements.ts';
import { nodeClassLabel } from '../model/templates.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { claimRequirements, launchOffering, RESERVATION_ID_LABEL, zoneLoad } from './pricing.ts';
import type { Command } from './types.ts';

/**
 * What launching many NodeClaims of one snapshot works out once: NodePools by name, each catalog's types by
 * name, and per requirement array (the decoder shares one between NodeClaims finished alike) and type the
 * parsed requirements and single-value labels. A repack command launches thousands of NodeClaims of a few
 * dozen shapes.
 */
class Launcher {
  private readonly pools: ReadonlyMap<string, NodePool>;
  private readonly types = new Map<string, ReadonlyMap<string, InstanceType>>();
  private readonly reqs = new Map<NewNodeClaimPlan['requirements'], ClaimShape>();
  private readonly reqsByContent = new Map<string, ClaimShape>();
  private readonly typeLabels = new Map<InstanceType, Labels>();

  /** `indexed`: index the catalogs by name (worth it for many NodeClaims; one is looked up by a scan). */
  constructor(
    private readonly s: Snapshot,
    private readonly indexed = true,
  ) {
    const pools = new Map<string, NodePool>();
    for (const p of s.nodePools) if (!pools.has(p.name)) pools.set(p.name, p);
    this.pools = pools;
  }

  pool(name: string): NodePool | undefined {
    return this.pools.get(name);
  }

  typeNamed(pool: string, name: string): InstanceType | undefined {
    if (!this.indexed) return this.s.instanceTypes.get(pool)?.find((it) => it.name === name);
    let byName = this.types.get(pool);
    if (!byName) {
      const m = new Map<string, InstanceType>();
      // The first of a name wins, as a search from the start would find it.
      for (const it of this.s.instanceTypes.get(pool) ?? []) if (!m.has(it.name)) m.set(it.name, it);
      this.types.set(pool, (byName = m));
    }
    return byName.get(name);
  }

  requirements(claim: NewNodeClaimPlan): ClaimShape {
    let r = this.reqs.get(claim.requirements);
    if (!r) {
      // Commands that crossed a thread (the caller's side of the Engine) share no arrays: their content names them.
      const key = JSON.stringify(claim.requirements);
      r = this.reqsByContent.get(key);
      if (!r) {
        const reqs = claimRequirements(claim);
        this.reqsByContent.set(key, (r = { reqs, labels: singleValueLabels(reqs), launched: new Map() }));
      }
      this.reqs.set(claim.requirements, r);
    }
    return r;
  }

  /**
   * A launched node's labels up to its node class's, in launch's order: the same for every NodeClaim of one shape
   * (requirements, labels), type and offering, so worked out once for them.
   */
  labelsUpToName(shape: ClaimShape, claim: NewNodeClaimPlan, it: InstanceType, o: Offering, pool: NodePool): Labels {
    const key = `${pool.name}\0${it.name}\0${it.offerings.indexOf(o)}\0${JSON.stringify(claim.labels)}`;
    let labels = shape.launched.get(key);
    if (!labels) {
      const [ncKey, ncVal] = nodeClassLabel(pool);
      labels = {
        ...shape.labels,
        ...claim.labels,
        ...this.labelsOf(it),
        [ZONE_LABEL]: o.zone,
        [CAPACITY_TYPE_LABEL]: o.capacityType,
        ...(o.reservationId !== undefined ? { [RESERVATION_ID_LABEL]: o.reservationId } : {}),
        [NODEPOOL_LABEL]: pool.name,
        [ncKey]: ncVal,
      };
      shape.launched.set(key, labels);
    }
    return labels;
  }

  labelsOf(it: InstanceType): Labels {
    let l = this.typeLabels.get(it);
    if (!l) this.typeLabels.set(it, (l = singleValueLabels(it.requirements)));
    return l;
  }
}

type Labels = Readonly<Record<string, string>>;

/** What launching a NodeClaim of these requirements works out: parsed, their single-value labels, labels by launch. */
interface ClaimShape {
  readonly reqs: Requirements;
  readonly labels: Labels;
  readonly launched: Map<string, Labels>;
}

/**
 * The pod bound to `node` and running. Object.assign onto a new object, not a spread: V8 (Node 20) gives a spread
 * copy that gains a field its source lacks (a pending pod has no nodeName) a hidden class of its own, so every
 * launched pod had one and each read of a pod field in the engine went megamorphic (docs/engine.md).
 */
export function boundPod(p: Pod, node: string): Pod {
  return Object.assign({}, p, { nodeName: node, phase: 'Running' as const, unschedulable: false });
}

/**
 * The state node a planned NodeClaim becomes once launched and initialized, or undefined if it cannot launch.
 * Its zone is launchOffering's: among equally cheap zones, the one with the fewest nodes of the pool in
 * `load` (default: counted in the snapshot).
 */
export function launchedNode(
  s: Snapshot,
  claim: NewNodeClaimPlan,
  name: string,
  pods: readonly Pod[] = [],
  load?: ReadonlyMap<string, number>,
): StateNode | undefined {
  return launch(new Launcher(s, false), s, claim, name, pods, load);
}

function launch(
  launcher: Launcher,
  s: Snapshot,
  claim: NewNodeClaimPlan,
  name: string,
  pods: readonly Pod[],
  load: ReadonlyMap<string, number> | undefined,
): StateNode | undefined {
  const pool = launcher.pool(claim.nodePool);
  const shape = launcher.requirements(claim);
  const reqs = shape.reqs;
  const zones = load ?? zoneLoad(s.nodes, claim.nodePool);
  for (const opt of claim.instanceTypes) {
    const it = launcher.typeNamed(claim.nodePool, opt.name);
    const offering = it && launchOffering(reqs, it, zones);
    if (!it || !offering || !pool) continue;
    // A key already set earlier keeps its place in a spread, so these are the labels (and order) spelt out whole.
    const labels = {
      ...launcher.labelsUpToName(shape, claim, it, offering, pool),
      [HOSTNAME_LABEL]: name,
      [REGISTERED_LABEL]: 'true',
      [INITIALIZED_LABEL]: 'true',
    };
    const after = pool.disruption.consolidateAfter;
    return {
      name,
      providerId: `replacement:///${offering.zone}/${name}`,
      nodeClaimName: name,
      hasNode: true,
      hasNodeClaim: true,
      managed: true,
      nodePoolName: pool.name,
      labels,
      annotations: { ...pool.template.annotations },
      taints: claim.taints,
      startupTaints: claim.startupTaints,
      capacity: it.capacity,
      allocatable: it.allocatable,
      pods: pods.map((p) => boundPod(p, name)),
      registered: true,
      initialized: true,
      ready: true,
      markedForDeletion: false,
      deleting: false,
      creationTimestamp: s.now,
      lastPodEventTime: s.now,
      conditions: { consolidatable: after === 0, initializedAt: s.now },
      expireAfter: pool.template.expireAfter,
      ...(pool.template.terminationGracePeriod !== undefined
        ? { terminationGracePeriod: pool.template.terminationGracePeriod }
        : {}),
    };
  }
  return undefined;
}

/**
 * The snapshot after the command: candidates removed, replacements added (named by `nameOf`, default
 * "<first candidate>-r<i>"), moved pods rebound. Throws when a replacement has no launchable option.
 */
export function applyCommand(s: Snapshot, cmd: Command, nameOf?: (i: number) => string): Snapshot {
  const gone = new Set(cmd.candidates.map((c) => c.name));
  const podsByUid = new Map<string, Pod>();
  for (const n of s.nodes) if (gone.has(n.name)) for (const p of n.pods) podsByUid.set(p.uid, p);
  const toExisting = new Map<string, Pod[]>();
  const toReplacement = new Map<number, Pod[]>();
  for (const m of cmd.podsMoved) {
    const p = podsByUid.get(m.uid);
    if (!p) continue;
    if (m.to.startsWith('replacement:')) {
      const i = Number(m.to.slice('replacement:'.length));
      const list = toReplacement.get(i);
      if (list) list.push(p);
      else toReplacement.set(i, [p]);
    } else {
      const list = toExisting.get(m.to);
      if (list) list.push(p);
      else toExisting.set(m.to, [p]);
    }
  }
  const base = cmd.candidates[0]?.name ?? 'node';
  // Zone loads per pool of the cluster as it will be (candidates gone), counting each replacement as it lands.
  const remaining = s.nodes.filter((n) => !gone.has(n.name));
  const loads = new Map<string, Map<string, number>>();
  const launcher = new Launcher(s);
  const added = cmd.replacements.map((claim, i) => {
    const name = nameOf ? nameOf(i) : `${base}-r${i}`;
    let load = loads.get(claim.nodePool);
    if (!load) loads.set(claim.nodePool, (load = zoneLoad(remaining, claim.nodePool)));
    const n = launch(launcher, s, claim, name, toReplacement.get(i) ?? [], load);
    if (!n)
      throw new Error(
        `applying ${cmd.kind} of ${base}: replacement ${i} (nodepool ${claim.nodePool}) has no launchable instance type`,
      );
    const z = n.labels[ZONE_LABEL]!;
    load.set(z, (load.get(z) ?? 0) + 1);
    return n;
  });
  const nodes = s.nodes
    .filter((n) => !gone.has(n.name))
    .map((n) => {
      const extra = toExisting.get(n.name);
      if (!extra) return n;
      const moved = extra.map((p) => boundPod(p, n.name));
      // A pod event restarts consolidateAfter (the controller would clear Consolidatable, §5.2).
      const after =
        n.nodePoolName === undefined ? undefined : launcher.pool(n.nodePoolName)?.disruption.consolidateAfter;
      const consolidatable = after === 0 ? n.conditions.consolidatable : false;
      const changes = {
        pods: [...n.pods, ...moved],
        lastPodEventTime: s.now,
        conditions: { ...n.conditions, consolidatable },
      };
      return Object.assign({}, n, changes);
    });
  return { ...s, nodes: [...nodes, ...added] };
}

/**
 * The snapshot after the commands, carried out one after the other; `names[k]`, when given, names command k's
 * replacements in order (else applyCommand's default). A caller and a warm model that carry out the same commands
 * on snapshots with the same data make snapshots with the same data (engine/cluster/ops.ts, carryOut).
 */
export function applyCommands(
  s: Snapshot,
  commands: readonly Command[],
  names?: ReadonlyArray<readonly string[] | undefined>,
): Snapshot {
  let out = s;
  commands.forEach((c, k) => {
    const given = names?.[k];
    if (given && given.length !== c.replacements.length)
      throw new Error(
        `carrying out command ${k} (${c.kind} of ${c.candidates[0]?.name ?? 'no node'}): ${given.length} names for ${c.replacements.length} replacements`,
      );
    out = given ? applyCommand(out, c, (i) => given[i]!) : applyCommand(out, c);
  });
  return out;
}
