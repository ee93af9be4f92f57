// status.conditions of an EC2NodeClass: one condition per sub-reconciler, rolled up into Ready. A condition
// keeps its lastTransitionTime while its status stays the same.
import type { Condition } from '../nodeclass-types.ts';

export const CONDITION_TYPES = ['AMIsReady', 'SubnetsReady', 'SecurityGroupsReady', 'InstanceProfileReady', 'ValidationSucceeded'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

export interface ConditionInput {
  readonly type: ConditionType;
  readonly status: Condition['status'];
  readonly reason: string;
  readonly message: string;
}

export function buildConditions(
  inputs: readonly ConditionInput[],
  previous: readonly Condition[] | undefined,
  generation: number | undefined,
  now: number,
): Condition[] {
  const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const make = (c: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>): Condition => {
    const prev = previous?.find((p) => p.type === c.type);
    return {
      ...c,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : at,
    };
  };
  const out = inputs.map(make);
  const notReady = out.filter((c) => c.status !== 'True');
  out.push(
    make(
      notReady.length === 0
        ? { type: 'Ready', status: 'True', reason: 'Ready', message: '' }
        : {
            type: 'Ready',
            status: notReady.some((c) => c.status === 'False') ? 'False' : 'Unknown',
            reason: 'UnhealthyDependents',
            message: notReady.map((c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ''}`).join('; '),
          },
    ),
  );
  return out;
}

/** Ready=True for the node class's current generation. */
export function isReady(conditions: readonly Condition[] | undefined, generation: number | undefined): boolean {
  const ready = conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && (generation === undefined || ready.observedGeneration === undefined || ready.observedGeneration === generation);
}
