// Each method's own filter, ShouldDisrupt (docs/karpenter/disruption.md §1.4), with Karpenter's Unconsolidatable
// event text where it publishes one, plus our own words (how long consolidateAfter still runs).
import { formatDuration } from '../api/duration.ts';
import { CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import type { Candidate, Explanation, MethodName } from './types.ts';
import { explanation, shortDuration } from './words.ts';

const unconsolidatable = (
  c: Candidate,
  code: Explanation['code'],
  message: string,
  eventMessage: string,
  data: Record<string, unknown> = {},
): Explanation => explanation(c.node.name, code, message, data, { reason: 'Unconsolidatable', message: eventMessage });

function isStatic(c: Candidate): boolean {
  return c.nodePool.replicas !== undefined;
}

/**
 * Why Consolidatable is not True, in words: consolidateAfter still running (with the time left, from the
 * last pod event or the initialization time, §5.2), or the condition simply not set yet.
 */
function notConsolidatable(c: Candidate, now: number): Explanation {
  const after = c.nodePool.disruption.consolidateAfter;
  const ref = c.node.lastPodEventTime ?? c.node.conditions.initializedAt;
  if (after !== null && ref !== undefined && now - ref < after) {
    const left = ref + after - now;
    return explanation(
      c.node.name,
      'consolidate-after',
      `consolidateAfter ${shortDuration(after)} not elapsed (${shortDuration(left)} left)`,
      {
        consolidateAfter: formatDuration(after),
        remainingMs: left,
      },
    );
  }
  return explanation(c.node.name, 'not-consolidatable', 'the Consolidatable condition is not True yet');
}

function disabled(c: Candidate): Explanation {
  const msg = `NodePool "${c.nodePool.name}" has consolidation disabled`;
  return unconsolidatable(c, 'consolidation-disabled', `nodepool ${c.nodePool.name} has consolidateAfter: Never`, msg);
}

export function emptinessFilter(c: Candidate, now: number): Explanation | undefined {
  if (isStatic(c))
    return explanation(
      c.node.name,
      'static-nodepool',
      `nodepool ${c.nodePool.name} is static (replicas); it is never consolidated`,
    );
  if (c.nodePool.disruption.consolidateAfter === null) return disabled(c);
  if ((c.node.bufferPods ?? 0) > 0) {
    return unconsolidatable(
      c,
      'buffer-pods',
      `node hosts ${c.node.bufferPods} capacity-buffer pods`,
      `Node "${c.node.name}" has buffer pods`,
      { bufferPods: c.node.bufferPods },
    );
  }
  if (!c.empty)
    return explanation(
      c.node.name,
      'not-empty',
      `node is not empty (${c.reschedulablePods.length} pods to reschedule)`,
    );
  if (c.node.conditions.consolidatable !== true) return notConsolidatable(c, now);
  return undefined;
}

/** `allowEmpty`: the repack takes empty nodes too (emptiness may have been held back by its budget). */
export function consolidationFilter(c: Candidate, now: number, allowEmpty = false): Explanation | undefined {
  if (isStatic(c))
    return explanation(
      c.node.name,
      'static-nodepool',
      `nodepool ${c.nodePool.name} is static (replicas); it is never consolidated`,
    );
  if (!c.instanceType) {
    const name = c.node.labels[INSTANCE_TYPE_LABEL] ?? '';
    return unconsolidatable(
      c,
      'instance-type-not-found',
      `instance type "${name}" is not offered by nodepool ${c.nodePool.name}`,
      `Instance Type "${name}" not found`,
      { instanceType: name },
    );
  }
  for (const key of [CAPACITY_TYPE_LABEL, ZONE_LABEL]) {
    if (c.node.labels[key] === undefined)
      return unconsolidatable(c, 'missing-label', `node has no ${key} label`, `Node does not have label "${key}"`, {
        label: key,
      });
  }
  if (c.nodePool.disruption.consolidateAfter === null) return disabled(c);
  if (c.empty && !allowEmpty)
    return explanation(c.node.name, 'left-to-emptiness', 'node is empty; emptiness handles it');
  if (!c.empty && c.nodePool.disruption.consolidationPolicy === 'WhenEmpty') {
    const msg = `NodePool "${c.nodePool.name}" has consolidation policy WhenEmpty, but node is not empty`;
    return unconsolidatable(
      c,
      'when-empty-policy',
      `nodepool ${c.nodePool.name} consolidates only empty nodes (WhenEmpty) and this node has ${c.reschedulablePods.length} ${c.reschedulablePods.length === 1 ? 'pod' : 'pods'}`,
      msg,
    );
  }
  if (c.node.conditions.consolidatable !== true) return notConsolidatable(c, now);
  return undefined;
}

export function driftFilter(c: Candidate): Explanation | undefined {
  if (isStatic(c))
    return explanation(
      c.node.name,
      'static-nodepool',
      `nodepool ${c.nodePool.name} is static; static drift handles it`,
    );
  if (!c.node.conditions.drifted) return explanation(c.node.name, 'not-drifted', 'node is not drifted');
  return undefined;
}

export function staticDriftFilter(c: Candidate): Explanation | undefined {
  if (!isStatic(c)) return explanation(c.node.name, 'not-drifted', `nodepool ${c.nodePool.name} is not static`);
  if (!c.node.conditions.drifted) return explanation(c.node.name, 'not-drifted', 'node is not drifted');
  return undefined;
}

export function methodFilter(method: MethodName, c: Candidate, now: number): Explanation | undefined {
  switch (method) {
    case 'emptiness':
      return emptinessFilter(c, now);
    case 'multi':
    case 'single':
      return consolidationFilter(c, now);
    case 'drift':
      return driftFilter(c);
    case 'static-drift':
      return staticDriftFilter(c);
    case 'repack':
      return consolidationFilter(c, now, true);
  }
}
