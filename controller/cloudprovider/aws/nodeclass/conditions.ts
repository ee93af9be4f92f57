// status.conditions of an EC2NodeClass: one condition per sub-reconciler, rolled up into Ready. A condition
// keeps its lastTransitionTime while its status stays the same. Conditions are the engine's (times in ms)
// plus the generation they were computed for (object.ts renders them for the API server).
import type { Condition } from '../../../../engine/index.ts';
import { observedGeneration, type NodeClassCondition } from './object.ts';

const CONDITION_TYPES = [
  'AMIsReady',
  'CapacityReservationsReady',
  'SubnetsReady',
  'SecurityGroupsReady',
  'InstanceProfileReady',
  'ValidationSucceeded',
] as const;
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
): NodeClassCondition[] {
  // Whole seconds, as metav1.Time stores them: the value survives a round trip through the API server.
  const at = Math.floor(now / 1000) * 1000;
  const make = (c: Omit<NodeClassCondition, 'lastTransitionTime' | 'observedGeneration'>): NodeClassCondition => {
    const prev = previous?.find((p) => p.type === c.type);
    return {
      ...c,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      lastTransitionTime:
        prev && prev.status === c.status && prev.lastTransitionTime !== undefined ? prev.lastTransitionTime : at,
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

/** Ready=True for the node class's current generation (a condition without observedGeneration is trusted). */
export function isReady(conditions: readonly Condition[] | undefined, generation: number | undefined): boolean {
  const ready = conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return false;
  const seen = observedGeneration(ready);
  return generation === undefined || seen === undefined || seen === generation;
}
