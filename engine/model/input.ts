// A snapshot and the pods to place, as a solver's input (and back, for engine calls that take snapshots).
import type { Pod, Snapshot } from '../domain/types.ts';
import { draForSimulation } from '../dra/consolidation.ts';
import { withDefaultSpread } from '../scheduling/defaultspread.ts';
import { WELL_KNOWN_LABELS } from '../scheduling/labels.ts';
import type { ModelCaches } from './caches.ts';
import { buildTemplate, provisioningPools } from './templates.ts';
import type { ProvisionInput } from './types.ts';

export interface ProvisionOptions {
  /** Karpenter's exact algorithm, without the improvement phase. */
  readonly exact?: boolean;
  /** Extra well-known label keys (tests with fake providers). */
  readonly wellKnownLabels?: ReadonlySet<string>;
  /** Nodes to leave out, and the consolidation destination rule (disruption simulations). */
  readonly consolidation?: ProvisionInput['consolidation'];
  /** Reserved capacity: Strict for provisioning (default), Fallback for disruption simulations. */
  readonly reservedOfferingMode?: ProvisionInput['reservedOfferingMode'];
  /** Where the solve may remember per-object work (a cluster model's or a disruption call's caches). */
  readonly caches?: ModelCaches;
}

/**
 * The DRA objects a solve sees (IgnoreDRARequests=false): nodes going away (deleting, or marked by a disruption
 * command or simulation) publish nothing, and claims held only by pods moving off them are freed, so those
 * pods' claims are allocated again where they land (engine/dra/consolidation.ts).
 */
function draFor(s: Snapshot, pending: readonly Pod[]): Snapshot['dra'] {
  if (!s.dra || s.options.ignoreDRARequests !== false) return s.dra;
  const removed = new Set(s.nodes.filter((n) => n.markedForDeletion || n.deleting).map((n) => n.name));
  if (!removed.size) return s.dra;
  const moving = new Set(pending.filter((p) => p.nodeName !== undefined && removed.has(p.nodeName)).map((p) => p.uid));
  return draForSimulation(s.dra, removed, moving);
}

export function provisionInput(s: Snapshot, pending: readonly Pod[], opts: ProvisionOptions = {}): ProvisionInput {
  const dra = draFor(s, pending);
  return {
    nodePools: s.nodePools,
    instanceTypes: s.instanceTypes,
    nodes: s.nodes,
    // kube-scheduler's default spread, given once here so every solve (provisioning, disruption, what-if) sees it.
    pods: withDefaultSpread(pending, s.options.defaultTopologySpreadConstraints, s.selectorSources),
    daemonSets: s.daemonSets,
    options: s.options,
    ...(dra ? { dra } : {}),
    ...(opts.wellKnownLabels ? { wellKnownLabels: opts.wellKnownLabels } : {}),
    ...(opts.consolidation ? { consolidation: opts.consolidation } : {}),
    ...(opts.exact ? { exact: true } : {}),
    ...(opts.reservedOfferingMode ? { reservedOfferingMode: opts.reservedOfferingMode } : {}),
    ...(opts.caches ? { caches: opts.caches } : {}),
  };
}

/** A snapshot holding exactly what a ProvisionInput carries (for engine calls that take snapshots). */
export function snapshotOf(input: ProvisionInput, now = 0): Snapshot {
  return {
    now,
    nodePools: input.nodePools,
    nodeClasses: [],
    instanceTypes: input.instanceTypes,
    nodes: input.nodes,
    pendingPods: input.pods,
    daemonSets: input.daemonSets,
    options: input.options,
    pdbs: [],
    ...(input.dra ? { dra: input.dra } : {}),
  };
}

/** A NodePool that provisions but whose requirements leave none of its instance types (Karpenter: NoCompatibleInstanceTypes). */
interface IncompatibleNodePool {
  readonly nodePool: string;
  /** The types were there, but minValues (Strict) could not be met with them. */
  readonly minValues: boolean;
}

/** The provisioning NodePools no pod can get a new node from, because of their own requirements. */
export function incompatibleNodePools(
  s: Snapshot,
  wellKnownLabels: ReadonlySet<string> = WELL_KNOWN_LABELS,
): IncompatibleNodePool[] {
  const strict = s.options.minValuesPolicy === 'Strict';
  const out: IncompatibleNodePool[] = [];
  for (const pool of provisioningPools(s.nodePools)) {
    const its = s.instanceTypes.get(pool.name) ?? [];
    if (buildTemplate(pool, its, s.daemonSets, wellKnownLabels, strict).instanceTypes.length > 0) continue;
    out.push({
      nodePool: pool.name,
      minValues: strict && buildTemplate(pool, its, s.daemonSets, wellKnownLabels, false).instanceTypes.length > 0,
    });
  }
  return out;
}
