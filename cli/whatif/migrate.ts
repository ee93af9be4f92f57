// How one what-if job treats NodePools and unmanaged nodes before the engine runs: --map-nodepool renames,
// the warning when --nodepools lacks the nodes' NodePools, drift against NodePools given in place of the
// snapshot's, and migrations (--from cluster-autoscaler, or detected when no node is managed by Karpenter):
// the NodePools proposed (or given), the groups mapped to them, the nodes adopted as drifted NodeClaims.
import {
  adoptForMigration,
  buildSnapshot,
  mapGroups,
  migrationReport,
  missingNodePools,
  nodeGroups,
  parseObject,
  proposeNodePools,
  renameNodePools,
  unmanagedCluster,
  withDrift,
  type ClusterObjects,
  type EC2NodeClass,
  type GroupMapping,
  type MigrationInfo,
  type NodeGroup,
  type BuildOptions,
  type NodePool,
  type Proposal,
  type WhatIfJob,
  type WhatIfMode,
  type WhatIfReport,
} from '../../engine/index.ts';
import { InputError } from './errors.ts';
import { daemonSetNote } from './workloads.ts';

interface Pools {
  readonly nodePools: readonly NodePool[];
  readonly nodeClasses: readonly EC2NodeClass[];
}

/** What the job asked for (JobSpec's fields that matter here). */
interface PrepareOptions {
  readonly from?: 'cluster-autoscaler';
  readonly mapNodePools?: Readonly<Record<string, string>>;
  readonly clusterName?: string;
  readonly mode?: WhatIfMode;
  /** Where --nodepools came from, for messages. */
  readonly nodePoolsFile?: string;
}

interface Prepared {
  /**
   * The job for the engine's workers: the objects to build there (nothing to decide before the build), or
   * the snapshot built here when a migration, a mapping or given NodePools reshape it first.
   */
  readonly job: Omit<WhatIfJob, 'sources' | 'exact'>;
  /** Set for a migration: the report is finished with finish(). */
  readonly migration?: MigrationInfo;
}

/** The proposal's manifests parsed as any input would be (a proposal the engine rejects is a bug, said so). */
function parsedProposal(p: Proposal): Pools {
  const nodePools: NodePool[] = [];
  const nodeClasses: EC2NodeClass[] = [];
  for (const m of [p.nodeClass, ...p.nodePools.map((x) => x.manifest)]) {
    const r = parseObject(m, { assumeReady: true });
    if (!r.ok)
      throw new Error(
        `the proposed ${String(m['kind'])} does not parse: ${r.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      );
    if (r.value.kind === 'NodePool') nodePools.push(r.value.value);
    else if (r.value.kind === 'EC2NodeClass') nodeClasses.push(r.value.value);
  }
  return { nodePools, nodeClasses };
}

interface Setup {
  readonly info: MigrationInfo;
  readonly groups: readonly NodeGroup[];
  readonly pools?: Pools;
}

function infoOf(trigger: MigrationInfo['trigger'], groups: GroupMapping[], proposal?: Proposal): MigrationInfo {
  return {
    from: 'cluster-autoscaler',
    trigger,
    nodePools: proposal ? 'proposed' : 'given',
    groups,
    ...(proposal
      ? {
          proposal: {
            nodePools: proposal.nodePools.map((p) => ({ name: p.name, groups: p.groups, why: p.why })),
            notes: proposal.notes,
            manifests: [proposal.nodeClass, ...proposal.nodePools.map((p) => p.manifest)],
          },
        }
      : {}),
  };
}

/** The migration this job plans, if any; notes say why not when one could have been. */
function migrationSetup(
  o: PrepareOptions,
  objects: ClusterObjects,
  given: Pools | undefined,
  notes: string[],
): Setup | undefined {
  const trigger = o.from ? 'option' : unmanagedCluster(objects) ? 'detected' : undefined;
  if (!trigger) return undefined;
  if (trigger === 'detected' && o.mode === 'provision') {
    notes.push(
      'no node of the input is managed by Karpenter: run without --mode provision (or with --from cluster-autoscaler) to plan a migration',
    );
    return undefined;
  }
  const groups = nodeGroups(objects);
  if (groups.length === 0) {
    notes.push('--from cluster-autoscaler: every node is managed by Karpenter already; nothing to migrate');
    return undefined;
  }
  const pools =
    given ??
    (objects.nodePools.length ? { nodePools: objects.nodePools, nodeClasses: objects.nodeClasses } : undefined);
  if (pools) return { info: infoOf(trigger, mapGroups(groups, pools.nodePools)), groups };
  const proposal = proposeNodePools(groups, o.clusterName ? { clusterName: o.clusterName } : {});
  const mapping = mapGroups(groups, [], proposal.groupPool, proposal.left);
  return { info: infoOf(trigger, mapping, proposal), groups, pools: parsedProposal(proposal) };
}

/** --map-nodepool: every target must be a NodePool of the run. */
function checkMapping(map: Readonly<Record<string, string>>, pools: readonly NodePool[], where: string): void {
  for (const [from, to] of Object.entries(map)) {
    if (!pools.some((p) => p.name === to))
      throw new InputError(
        `--map-nodepool ${from}=${to}: NodePool ${to} is not in ${where} (it has: ${pools.map((p) => p.name).join(', ') || 'none'})`,
      );
  }
}

/** Nodes whose NodePool the run does not have: a warning naming both sides and the option that maps them. */
function mismatchWarnings(objects: ClusterObjects, pools: readonly NodePool[], where: string): string[] {
  return missingNodePools(objects, pools).map(({ name, nodes }) => {
    const suggestion = pools.length
      ? `; --map-nodepool ${name}=${pools[0]!.name} plans them as nodes of ${pools[0]!.name}`
      : '';
    return `${nodes} node${nodes === 1 ? '' : 's'} of NodePool ${name} match no NodePool in ${where} (it has: ${pools.map((p) => p.name).join(', ') || 'none'}): they stay as they are ("nodepool not found")${suggestion}`;
  });
}

/**
 * The job's snapshot, or what the engine needs to build it: renamed pools, a migration when one applies,
 * drift against given NodePools. `notes` are prepended to the report's warnings (what the load assumed).
 */
export function prepare(
  o: PrepareOptions,
  raw: ClusterObjects,
  build: BuildOptions,
  given: Pools | undefined,
  loadNotes: readonly string[],
): Prepared {
  const objects = o.mapNodePools ? renameNodePools(raw, o.mapNodePools) : raw;
  const where = o.nodePoolsFile ?? 'the snapshot';
  if (o.mapNodePools) checkMapping(o.mapNodePools, given?.nodePools ?? objects.nodePools, where);
  const notes = [...loadNotes, ...daemonSetNote(objects.daemonSets)];
  const setup = migrationSetup(o, objects, given, notes);
  // Nothing to reshape: the engine's worker builds the snapshot and picks the mode (docs/whatif.md "Modes").
  if (!setup && !given && !o.mapNodePools)
    return { job: { objects, build, ...(notes.length ? { notes } : {}), ...(o.mode ? { mode: o.mode } : {}) } };
  const pools = setup?.pools ?? given;
  if (given || o.mapNodePools) notes.push(...mismatchWarnings(objects, pools?.nodePools ?? objects.nodePools, where));
  let built = buildSnapshot(objects, {
    ...build,
    ...(pools ? { nodePools: pools.nodePools, nodeClasses: pools.nodeClasses } : {}),
  });
  if (setup) built = adoptForMigration(built, setup.info.groups, setup.groups);
  if (given || o.mapNodePools) {
    const d = withDrift(built);
    built = d.built;
    if (d.drifted.length)
      notes.push(
        `${d.drifted.length} node${d.drifted.length === 1 ? '' : 's'} drifted from the NodePools in use (${d.drifted
          .slice(0, 3)
          .map((x) => `${x.node}: ${x.reason}`)
          .join(', ')}${d.drifted.length > 3 ? ', ...' : ''}): Karpenter replaces them`,
      );
  }
  built = notes.length ? { ...built, warnings: [...notes, ...built.warnings] } : built;
  // A migration is carried out by the disruption engine (drift), so it always runs in consolidate mode.
  const mode = setup ? 'consolidate' : o.mode;
  return { job: { built, ...(mode ? { mode } : {}) }, ...(setup ? { migration: setup.info } : {}) };
}

/** The report, finished for a migration. */
export function finish(r: WhatIfReport, p: Prepared): WhatIfReport {
  return p.migration ? migrationReport(r, p.migration) : r;
}
