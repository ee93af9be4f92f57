// The capacity-buffer half of cluster state (feature gate CapacityBuffer; Karpenter core pkg/state/
// virtualpods and the buffer-pod counts of pkg/state/cluster.go, main at 2266468):
// - CapacityBuffers as the informer sees them (parsed; one that does not parse is kept with its errors, so
//   the buffer controller can say so on its status);
// - PodTemplate changes, passed on to subscribers (the buffer controller re-resolves the buffers naming one);
// - the virtual pods of each buffer ready for provisioning, written by the buffer controller when it resolves
//   the buffer and read by every decision: the same pod objects from one decision to the next until the
//   buffer changes, so the engine's warm model ships them once;
// - how many virtual pods the last provisioning pass placed on each existing node (by providerID), which
//   keeps emptiness from deleting a node that holds buffer room.
import { formatFieldError, parseCapacityBuffer, type CapacityBuffer, type Pod } from '../../engine/index.ts';
import type { KubeObject } from '../operator/kube.ts';
import { namespacedChange, type Change } from './changes.ts';

export interface BufferEntry {
  readonly obj: KubeObject;
  /** undefined when the object does not validate (see errors). */
  readonly buffer?: CapacityBuffer;
  readonly errors: readonly string[];
}

export const bufferKey = (o: KubeObject): string => `${o.metadata.namespace ?? 'default'}/${o.metadata.name ?? ''}`;

export class BufferObjects {
  private readonly entries = new Map<string, BufferEntry>();
  private readonly pods = new Map<string, readonly Pod[]>();
  private all: readonly Pod[] = [];
  private perNode: ReadonlyMap<string, number> = new Map();

  constructor(
    private readonly deps: {
      changed: (c: Change) => void;
      /** The virtual pods or the per-node counts changed: consolidation looks again. */
      unconsolidated: () => void;
    },
  ) {}

  applyBuffer(obj: KubeObject): void {
    const key = bufferKey(obj);
    const old = this.entries.get(key);
    if (Number(obj.metadata.resourceVersion) < Number(old?.obj.metadata.resourceVersion)) return;
    const r = parseCapacityBuffer(obj);
    this.entries.set(
      key,
      r.ok ? { obj, buffer: r.value, errors: [] } : { obj, errors: r.errors.map(formatFieldError) },
    );
    this.deps.changed(namespacedChange('CapacityBuffer', 'upsert', obj, old?.obj));
  }

  removeBuffer(obj: KubeObject): void {
    const key = bufferKey(obj);
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.deps.changed(namespacedChange('CapacityBuffer', 'delete', old.obj));
  }

  /** PodTemplates are not kept (the buffer controller reads the one it needs): subscribers hear of the change. */
  podTemplateChanged(obj: KubeObject, type: Change['type']): void {
    this.deps.changed(namespacedChange('PodTemplate', type, obj));
  }

  buffer(key: string): BufferEntry | undefined {
    return this.entries.get(key);
  }

  buffers(): BufferEntry[] {
    return [...this.entries.values()];
  }

  /** Sets (or, with undefined, drops) a buffer's virtual pods; the same list object keeps them as they were. */
  setVirtualPods(key: string, pods: readonly Pod[] | undefined): void {
    const prior = this.pods.get(key);
    if (prior === pods) return;
    if (pods?.length) this.pods.set(key, pods);
    else if (prior) this.pods.delete(key);
    else return;
    this.all = [...this.pods.keys()].sort().flatMap((k) => this.pods.get(k)!);
    // No virtual pod left: no node holds buffer room (with some left, the next provisioning pass recounts).
    if (!this.all.length) this.perNode = new Map();
    this.deps.unconsolidated();
  }

  virtualPodsOf(key: string): readonly Pod[] | undefined {
    return this.pods.get(key);
  }

  /** Every buffer's virtual pods (in buffer-key order), the same array until one changes. */
  virtualPods(): readonly Pod[] {
    return this.all;
  }

  /** The last provisioning pass's placements of virtual pods on existing nodes, by providerID. */
  setNodeCounts(counts: ReadonlyMap<string, number>): void {
    const same = counts.size === this.perNode.size && [...counts].every(([k, v]) => this.perNode.get(k) === v);
    if (same) return;
    this.perNode = counts;
    this.deps.unconsolidated();
  }

  bufferPodsOn(providerID: string | undefined): number {
    return providerID ? (this.perNode.get(providerID) ?? 0) : 0;
  }
}
