// Karpenter's pod events about the karpenter.sh/do-not-disrupt annotation (core pkg/utils/pod/events.go and
// IsDoNotDisruptActive, main after v1.14.1): while a duration protects a pod, DoNotDisruptUntil says when it
// ends; once it has, DoNotDisruptGracePeriodElapsed; a value that is neither "true" nor a positive Go
// duration is ignored with a Warning InvalidDoNotDisruptAnnotation. Karpenter publishes them when it checks a
// disruption candidate's pods, so these are the active pods of nodes that reach that check (managed,
// registered and initialized, not going away, without the node-level annotation, of a known NodePool).
import type { Pod, Snapshot, StateNode } from '../domain/types.ts';
import { DO_NOT_DISRUPT_ANNOTATION, NODEPOOL_LABEL } from '../scheduling/labels.ts';
import { isActive } from '../scheduling/pods.ts';
import { doNotDisrupt } from './pods.ts';

interface PodEvent {
  readonly pod: Pod;
  readonly type: 'Normal' | 'Warning';
  readonly reason: 'DoNotDisruptUntil' | 'DoNotDisruptGracePeriodElapsed' | 'InvalidDoNotDisruptAnnotation';
  readonly message: string;
  readonly dedupeValues: readonly string[];
}

/** Go's time.ParseDuration error for a value that is not a duration (the text Karpenter's event quotes); '' when it parses. */
export function goDurationError(value: string): string {
  const q = JSON.stringify(value);
  let s = value.replace(/^[-+]/, '');
  if (s === '0') return '';
  if (s === '') return `time: invalid duration ${q}`;
  while (s !== '') {
    const num = /^(\d*)(\.\d*)?/.exec(s)![0];
    if (num === '' || num === '.') return `time: invalid duration ${q}`;
    s = s.slice(num.length);
    const unit = /^[^\d.]*/.exec(s)![0];
    if (unit === '') return `time: missing unit in duration ${q}`;
    if (!['ns', 'us', '\u00b5s', '\u03bcs', 'ms', 's', 'm', 'h'].includes(unit))
      return `time: unknown unit ${JSON.stringify(unit)} in duration ${q}`;
    s = s.slice(unit.length);
  }
  return '';
}

/** RFC 3339 in UTC to the second, as Go's time.RFC3339 prints a UTC time. */
const rfc3339 = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** The event Karpenter publishes for one pod's annotation at `now`, if any. */
export function doNotDisruptEvent(pod: Pod, now: number): PodEvent | undefined {
  const d = doNotDisrupt(pod, now);
  const uid = pod.uid;
  switch (d.state) {
    case 'invalid': {
      const parse = goDurationError(d.value);
      const why = parse
        ? `failed to parse ${JSON.stringify(d.value)} as a duration: ${parse}`
        : `duration ${JSON.stringify(d.value)} must be positive`;
      return {
        pod,
        type: 'Warning',
        reason: 'InvalidDoNotDisruptAnnotation',
        message: `Invalid ${DO_NOT_DISRUPT_ANNOTATION} annotation: ${why}, ignoring annotation`,
        dedupeValues: [uid, why],
      };
    }
    case 'active':
      if (d.until === undefined) return undefined;
      return {
        pod,
        type: 'Normal',
        reason: 'DoNotDisruptUntil',
        message: `The ${DO_NOT_DISRUPT_ANNOTATION} grace period will elapse at ${rfc3339(d.until)}`,
        dedupeValues: [uid, rfc3339(d.until)],
      };
    case 'elapsed':
      return {
        pod,
        type: 'Normal',
        reason: 'DoNotDisruptGracePeriodElapsed',
        message: `The ${DO_NOT_DISRUPT_ANNOTATION} grace period has elapsed, pod is now disruptable`,
        dedupeValues: [uid],
      };
    case 'none':
      return undefined;
  }
}

/** Whether Karpenter's candidate check reaches the node's pods (§1.3 steps 2-8). */
function podsChecked(s: Snapshot, n: StateNode): boolean {
  if (!n.hasNodeClaim || !n.hasNode || !n.initialized || n.markedForDeletion || n.deleting || n.instanceTerminating)
    return false;
  if (n.annotations[DO_NOT_DISRUPT_ANNOTATION] === 'true') return false;
  const pool = n.labels[NODEPOOL_LABEL];
  return pool !== undefined && s.nodePools.some((p) => p.name === pool);
}

/** The do-not-disrupt events of one disruption pass. */
export function doNotDisruptEvents(s: Snapshot): PodEvent[] {
  const out: PodEvent[] = [];
  for (const n of s.nodes) {
    if (!n.pods.some((p) => p.annotations[DO_NOT_DISRUPT_ANNOTATION] !== undefined) || !podsChecked(s, n)) continue;
    for (const p of n.pods) {
      if (!isActive(p)) continue;
      const e = doNotDisruptEvent(p, s.now);
      if (e) out.push(e);
    }
  }
  return out;
}
