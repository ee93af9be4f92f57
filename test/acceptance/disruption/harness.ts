// The disruption acceptance harness (docs/karpenter/test-cases.md §0.1) at the engine level: the suite's assorted
// instance types, the fake provider's well-known labels, the reference solver (Karpenter's exact algorithm),
// a "reconcile" that is one disrupt() call and an "execute" that applies the decision to the snapshot as the
// orchestration queue would once replacements are initialized.
import type { EngineOptions, InstanceType, NodePool, Snapshot, StateNode } from '../../../engine/domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../../engine/domain/types.ts';
import { applyCommand } from '../../../engine/disruption/apply.ts';
import { disrupt } from '../../../engine/disruption/disrupt.ts';
import type { Decision, DisruptOptions, DisruptResult } from '../../../engine/disruption/types.ts';
import { withExtraWellKnown } from '../../../engine/scheduling/labels.ts';
import { solveReference } from '../../../engine/solver/reference/scheduler.ts';
import type { ProvisionSolver } from '../../../engine/model/types.ts';
import { nodePool, snapshot, stateNode, type NodePoolOptions, type StateNodeOptions } from '../../fixtures/builders.ts';
import {
  FAKE_WELL_KNOWN_LABELS,
  firstOffering,
  instanceTypesAssorted,
  mostExpensiveInstance,
} from '../../fixtures/instancetypes.ts';

export const reference: ProvisionSolver = { name: 'reference', solve: solveReference };
export const wellKnown = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);

let assorted: InstanceType[] | undefined;
/** The disruption suite's instance types (built once per file). */
export function types(): InstanceType[] {
  return (assorted ??= instanceTypesAssorted());
}

/** The consolidation suite turns SpotToSpotConsolidation on. */
export const OPTIONS: EngineOptions = {
  ...DEFAULT_ENGINE_OPTIONS,
  featureGates: { ...DEFAULT_ENGINE_OPTIONS.featureGates, spotToSpotConsolidation: true },
};

/** A NodePool with the suites' usual disruption settings: consolidateAfter 0s, budget 100%. */
export function pool(o: NodePoolOptions = {}): NodePool {
  return nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }], ...o });
}

/** An initialized node of the type, labelled with the type's single offering (zone, capacity type). */
export function node(it: InstanceType, o: StateNodeOptions = {}): StateNode {
  const off = firstOffering(it);
  return stateNode({ instanceType: it, zone: off.zone, capacityType: off.capacityType, ...o });
}

export function env(
  o: Omit<Partial<Snapshot>, 'instanceTypes'> & {
    instanceTypes?: readonly InstanceType[] | Snapshot['instanceTypes'];
  } = {},
): Snapshot {
  return snapshot({
    options: OPTIONS,
    instanceTypes: o.instanceTypes ?? types(),
    ...o,
    nodePools: o.nodePools ?? [pool()],
  });
}

export async function reconcile(s: Snapshot, o: DisruptOptions = {}): Promise<DisruptResult> {
  return disrupt(s, { solver: reference, wellKnownLabels: wellKnown, repack: 'off', ...o });
}

/** Runs the decision's command(s) as the queue would after replacements initialize. */
export function execute(s: Snapshot, d: Decision): Snapshot {
  if (d.kind === 'noop') return s;
  let out = applyCommand(s, d);
  for (const c of d.concurrent ?? []) out = applyCommand(out, c);
  return out;
}

export function managedNodes(s: Snapshot): StateNode[] {
  return s.nodes.filter((n) => n.hasNodeClaim);
}

export const GiB = 2 ** 30;

/** A node of the suite's most expensive on-demand type with Karpenter's usual 32 CPU / 100 pods allocatable. */
export function bigNode(o: StateNodeOptions & { it?: InstanceType } = {}): StateNode {
  const { it, ...rest } = o;
  return node(it ?? mostExpensiveInstance(types()), {
    allocatable: { cpu: '32', memory: '128Gi', pods: '100' },
    ...rest,
  });
}

/**
 * Starts the decision's commands without finishing them, as the queue does before replacements initialize:
 * candidates are marked for deletion, existing destinations are nominated (for the 20 s nomination window)
 * and the replacements exist as nodes (initialized unless `initialized` is false).
 */
export function start(s: Snapshot, d: Decision, o: { initialized?: boolean } = {}): Snapshot {
  if (d.kind === 'noop') return s;
  let out = s;
  for (const c of [d, ...(d.concurrent ?? [])]) {
    const marked = new Set(c.candidates.map((x) => x.name));
    const destinations = new Set(c.podsMoved.map((m) => m.to));
    const after = applyCommand(out, c);
    const added = after.nodes
      .filter((n) => !out.nodes.some((m) => m.name === n.name))
      .map((n) => ({
        ...n,
        pods: [],
        ...(o.initialized === false
          ? {
              initialized: false,
              labels: Object.fromEntries(Object.entries(n.labels).filter(([k]) => k !== 'karpenter.sh/initialized')),
            }
          : {}),
      }));
    out = {
      ...out,
      nodes: [
        ...out.nodes.map((n) =>
          marked.has(n.name)
            ? { ...n, markedForDeletion: true }
            : destinations.has(n.name)
              ? { ...n, nominatedUntil: s.now + 20_000 }
              : n,
        ),
        ...added,
      ],
    };
  }
  return out;
}
