// What-if: the engine's answer to "what would you do with this cluster, and what would it cost?", as data.
// engine/whatif builds the report (pure: snapshots in, data out); cli/whatif loads files and renders it.
// The JSON rendering is this model as is; docs/whatif.md documents every field.
import type { EC2NodeClass } from '../api/ec2nodeclass.ts';
import type { NodeInfo } from '../api/node.ts';
import type { NodeClaimInfo } from '../api/nodeclaim.ts';
import type { NodeOverlay } from '../api/nodeoverlay.ts';
import type { DaemonSet, NodePool, Pod, PodDisruptionBudget } from '../domain/types.ts';

/** provision: place the pending pods only; consolidate: then consolidate the cluster that results. */
export type WhatIfMode = 'provision' | 'consolidate';

export interface WhatIfOptions {
  readonly mode: WhatIfMode;
  /** The mode was chosen by default rather than given (reported as input.modeSource). */
  readonly modeDefaulted?: boolean;
  /** Karpenter's exact algorithm (no improvement phase) instead of the optimised one. */
  readonly exact: boolean;
}

/** The Kubernetes objects of one cluster, parsed (engine/api) but not yet joined into a Snapshot. */
export interface ClusterObjects {
  readonly nodes: readonly NodeInfo[];
  readonly nodeClaims: readonly NodeClaimInfo[];
  readonly pods: readonly Pod[];
  readonly nodePools: readonly NodePool[];
  readonly nodeClasses: readonly EC2NodeClass[];
  readonly daemonSets: readonly DaemonSet[];
  readonly pdbs: readonly PodDisruptionBudget[];
  /** NodeOverlays (karpenter.sh/v1alpha1): the catalog is overlaid as the controller with the gate NodeOverlay sees it. */
  readonly nodeOverlays?: readonly NodeOverlay[];
}

/** ClusterObjects as they are gathered: every kind's list, there to push to. */
export type ClusterObjectLists = {
  -readonly [K in keyof ClusterObjects]-?: NonNullable<ClusterObjects[K]>[number][];
};

interface Usage {
  /** Sum of the requests of the node's active pods (daemonset pods included), cpu in millicores, memory in bytes. */
  readonly requested: number;
  readonly allocatable: number;
}

/** One row of the per-node table (eks-node-viewer's columns). */
export interface NodeRow {
  readonly name: string;
  /** kept: stays; removed: the plan deletes it; new: the plan launches it. */
  readonly fate: 'kept' | 'removed' | 'new';
  readonly nodePool?: string;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: string;
  /** $/h from the catalog (0 when the type, zone or capacity type is unknown: see priceKnown). */
  readonly pricePerHour: number;
  readonly priceKnown: boolean;
  /** Has the karpenter.sh/nodepool label (Karpenter may disrupt it). */
  readonly managed: boolean;
  readonly cpu: Usage;
  readonly memory: Usage;
  /** Active pods on the node in the state the row describes (after the plan for kept and new nodes). */
  readonly pods: number;
}

export interface ReportPodMove {
  /** namespace/name */
  readonly pod: string;
  /** The node it leaves; null for a pending pod. */
  readonly from: string | null;
  /** The node it lands on (a new node's name for launches), or null when the planner did not say. */
  readonly to: string | null;
}

/** One step of the plan, in the order it would run (budgets allowing). */
export interface Move {
  readonly step: number;
  /** launch: new capacity for pending pods; delete / replace: a consolidation command. */
  readonly kind: 'launch' | 'delete' | 'replace';
  readonly remove: readonly string[];
  readonly add: readonly string[];
  readonly pods: readonly ReportPodMove[];
  /** $/h saved by this step (negative for launches: they add cost). */
  readonly savingsPerHour: number;
  readonly reason: string;
}

interface Unschedulable {
  readonly pod: string;
  readonly reason: string;
  readonly perNodePool?: Readonly<Record<string, string>>;
}

export interface NodeExplanation {
  readonly node: string;
  readonly reason: string;
  /** The engine's explanation code (engine/disruption/types.ts ExplanationCode), when it gave one. */
  readonly code?: string;
}

/** Nodes and $/h of one NodePool, zone, capacity type or instance family, before and after the plan. */
export interface CostGroup {
  readonly key: string;
  readonly nodesBefore: number;
  readonly nodesAfter: number;
  readonly costPerHourBefore: number;
  readonly costPerHourAfter: number;
}

/** Where the change in $/h comes from (engine/whatif/breakdown.ts; docs/whatif.md "Savings breakdown"). */
export interface SavingsBreakdown {
  /** The attribution order: each part is what remains of the change after the parts before it. */
  readonly order: readonly (keyof SavingsBreakdown['perHour'])[];
  /** $/h saved by each cause (negative: adds cost); they add up exactly to savingsPerHour. */
  readonly perHour: {
    /** Nodes launched for pending pods. */
    readonly newCapacity: number;
    /** Nodes removed with no pod to move. */
    readonly emptyNodes: number;
    /** Reserved nodes that go are still paid for (cancels their share of the other parts). */
    readonly reservations: number;
    /** More (or less) of the capacity bought as spot. */
    readonly capacityType: number;
    /** Less (or more) capacity bought: fewer and fuller, or smaller, nodes (packing). */
    readonly packing: number;
    /** A cheaper (or dearer) price per unit of capacity: another family, generation or architecture. */
    readonly instanceType: number;
  };
  readonly byNodePool: readonly CostGroup[];
  readonly byZone: readonly CostGroup[];
  readonly byCapacityType: readonly CostGroup[];
  readonly byFamily: readonly CostGroup[];
}

type RiskKind =
  | 'zone-concentration'
  | 'spread-constraint'
  | 'spot-concentration'
  | 'spot-share'
  | 'single-instance-type'
  | 'exotic-instance-type'
  | 'pods-moved-twice'
  | 'blocked-by-pdb'
  | 'blocked-by-do-not-disrupt'
  | 'scarce-capacity'
  | 'no-nodepools'
  | 'unmanaged-nodes';

/** Something the plan makes more fragile, or something that keeps it from saving: who it concerns and what to set. */
export interface Risk {
  readonly kind: RiskKind;
  readonly severity: 'high' | 'medium' | 'low';
  /** One sentence with the figures. */
  readonly summary: string;
  readonly nodes: readonly string[];
  /** namespace/name */
  readonly pods: readonly string[];
  /** What to set to avoid it (a topology spread constraint, a NodePool requirement, a budget, ...). */
  readonly fix: string;
}

/**
 * Prices read from the AWS APIs for one region at one time (what-if's --live-prices), as plain data: on-demand
 * from the Price List API (GetProducts), spot from EC2 DescribeSpotPriceHistory (the latest price per zone).
 */
export interface LivePrices {
  readonly region: string;
  /** ISO time the prices were read. */
  readonly fetchedAt: string;
  /** $/h per instance type. */
  readonly onDemand: Readonly<Record<string, number>>;
  /** $/h per instance type and zone. */
  readonly spot: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** Where the prices come from, and how far to trust them. */
export interface PriceInfo {
  /** On-demand prices: source and the date of the table. */
  readonly onDemand: { readonly source: string; readonly asOf: string };
  /** Spot prices: estimates from the Spot Instance Advisor's savings, or live DescribeSpotPriceHistory prices. */
  readonly spot: { readonly source: string; readonly asOf: string; readonly estimate: boolean };
  readonly live: boolean;
  /** Instance types of the report priced from a second source (no regional, or no live, price). */
  readonly fallbackTypes: readonly string[];
  /** That second source, in words ("us-east-1's table of 2026-07-20"). */
  readonly fallbackSource?: string;
  /** Reserved nodes are priced at their reservation rate, paid whether used or not. */
  readonly reservedNodes: number;
}

/** One node group of a migration and the NodePool its nodes move to. */
export interface GroupMapping {
  readonly group: string;
  /** The label that named the group (eks.amazonaws.com/nodegroup, ...), or "shape". */
  readonly namedBy: string;
  readonly nodes: readonly string[];
  readonly instanceTypes: readonly string[];
  readonly capacityTypes: readonly string[];
  /** Null when no NodePool takes it (then `reason`): its nodes stay as they are. */
  readonly nodePool: string | null;
  readonly reason?: string;
}

/** A cluster Karpenter does not manage yet, planned as a move to Karpenter (docs/whatif.md "Migrations"). */
export interface MigrationInfo {
  readonly from: 'cluster-autoscaler';
  /** --from given, or detected (no node of the input is managed by Karpenter). */
  readonly trigger: 'option' | 'detected';
  /** The NodePools were proposed from the nodes and pods, or given (--nodepools, or the snapshot's own). */
  readonly nodePools: 'proposed' | 'given';
  readonly groups: readonly GroupMapping[];
  /** The proposal (nodePools: proposed): each NodePool with the reasons for it, and the manifests to apply. */
  readonly proposal?: {
    readonly nodePools: readonly {
      readonly name: string;
      readonly groups: readonly string[];
      readonly why: readonly string[];
    }[];
    readonly notes: readonly string[];
    readonly manifests: readonly Readonly<Record<string, unknown>>[];
  };
}

export interface WhatIfReport {
  readonly schema: 'karpenter-ts/whatif-report@2';
  /** What was read: file names, and the option values this run used. */
  readonly input: {
    readonly sources: readonly string[];
    readonly region: string;
    /** ISO time the snapshot is evaluated at (budget schedules, pod ages). */
    readonly now: string;
    readonly mode: WhatIfMode;
    /** Why this mode: given as an option, or the default (consolidate when nothing is pending, else provision). */
    readonly modeSource: 'option' | 'default';
    readonly exact: boolean;
    readonly planner?: string;
  };
  /** What the run did, in words (provision-only runs say how to see consolidation). */
  readonly notes: readonly string[];
  /**
   * Present when the improvement phase's wall-clock safety net fired in a decision of this run (a provisioning plan
   * or a consolidation simulation): the plan is then not the one its work budget would give on any machine, and
   * `notes` says so too.
   */
  readonly truncated?: true;
  /** Things that make the plan fragile or keep it from saving, most severe first. */
  readonly risks: readonly Risk[];
  readonly costPerHourBefore: number;
  readonly costPerHourAfter: number;
  readonly costPerMonthBefore: number;
  readonly costPerMonthAfter: number;
  readonly savingsPerHour: number;
  /** No cluster hosting these pods on these NodePools costs less (LP bound, plus nodes Karpenter does not manage). */
  readonly lowerBoundPerHour: number;
  readonly lowerBoundStatus: string;
  /** Which bound lowerBoundPerHour is: 'lp', 'patterns', 'patterns-rounded', 'whole-nodes' or 'whole-node-patterns' (engine/bound, docs/lower-bound.md). */
  readonly lowerBoundKind: string;
  /** lowerBound / cost: 1 = no cheaper cluster exists; null when a cost is 0. */
  readonly efficiencyBefore: number | null;
  readonly efficiencyAfter: number | null;
  readonly counts: {
    readonly nodesBefore: number;
    readonly nodesAfter: number;
    readonly pods: number;
    readonly pending: number;
    readonly unschedulable: number;
  };
  readonly savingsBreakdown: SavingsBreakdown;
  readonly prices: PriceInfo;
  readonly nodes: readonly NodeRow[];
  readonly moves: readonly Move[];
  readonly unschedulable: readonly Unschedulable[];
  /** Why each node that stays was not consolidated (consolidate mode). */
  readonly kept: readonly NodeExplanation[];
  /** Things the input did not say and the run assumed (unknown prices, missing node classes, ...). */
  readonly warnings: readonly string[];
  /** A migration to Karpenter: the node groups, the NodePools they move to, the proposal. */
  readonly migration?: MigrationInfo;
  /** Wall-clock time of the run: the only field that differs between two runs of the same input. */
  readonly timing?: { readonly totalMs: number };
}
