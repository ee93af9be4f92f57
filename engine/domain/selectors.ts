// Domain types of what pods and nodes select and tolerate: labels, node selector requirements and terms, label
// selectors, taints and tolerations, re-exported by types.ts. Readonly data.

export type Labels = Readonly<Record<string, string>>;

/** Operators of node selector requirements. Gte/Lte exist only on NodePool/NodeClaim requirements. */
export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
  /** NodePool/NodeClaim requirements only: the instance-type options must span this many values. */
  readonly minValues?: number;
}

/** One ORed term of required node affinity; its expressions are ANDed. */
export interface NodeSelectorTerm {
  readonly matchExpressions: readonly NodeSelectorRequirement[];
  /** Karpenter ignores pods whose required terms use matchFields; kept so validation can say so. */
  readonly matchFields?: readonly NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values: readonly string[];
}

/** A label selector. An empty selector ({}) matches everything; an absent one (undefined) matches nothing. */
export interface LabelSelector {
  readonly matchLabels?: Labels;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect;
}

export interface Toleration {
  readonly key?: string;
  readonly operator?: 'Exists' | 'Equal' | 'Lt' | 'Gt';
  readonly value?: string;
  readonly effect?: TaintEffect;
  readonly tolerationSeconds?: number;
}
