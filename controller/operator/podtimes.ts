// When the provisioner first saw each pending pod, and when it first decided where the pod goes (a
// nomination, a new NodeClaim, or an error). Karpenter keeps the same two instants in cluster state
// (AckPods, MarkPodSchedulingDecisions) for its karpenter_pods_provisioning_* metrics; these are in memory
// only, so they start again after a restart, as Karpenter's do.
//
// The instants are fields of the pod's record in cluster state (state/podrecord.ts), carried from record to
// record while the pod (uid) stays and gone with it: a table of its own keyed by `namespace/name` held a key
// string and a small object per pod (about 300 bytes a pod, docs/controller-benchmark.md).

/** Where a pod's two instants are kept (its record in cluster state). */
export interface PodTimeSlot {
  seenAt: number | undefined;
  decidedAt: number | undefined;
}

type Pods = Iterable<{ namespace: string; name: string; uid: string }>;

/** The slot of pod `uid` called namespace/name, or undefined when cluster state holds no such pod. */
type PodTimeSlots = (namespace: string, name: string, uid: string) => PodTimeSlot | undefined;

export class PodTimes {
  private slots: PodTimeSlots | undefined;

  /** Keeps the times in these slots (cluster state's pod records); the operator sets it once cluster state exists. */
  keepIn(slots: PodTimeSlots): void {
    this.slots = slots;
  }

  /** The provisioner saw these pods pending; the first sighting per pod (uid) counts. */
  seen(pods: Pods, now: number): void {
    for (const p of pods) {
      const t = this.slot(p);
      if (t && t.seenAt === undefined) t.seenAt = now;
    }
  }

  /** A scheduling decision was made for these pods; returns how long each first decision took (ms). */
  decided(pods: Pods, now: number): number[] {
    const waits: number[] = [];
    for (const p of pods) {
      const t = this.slot(p);
      if (!t || t.seenAt === undefined || t.decidedAt !== undefined) continue;
      t.decidedAt = now;
      waits.push(now - t.seenAt);
    }
    return waits;
  }

  private slot(p: { namespace: string; name: string; uid: string }): PodTimeSlot | undefined {
    if (!this.slots) throw new Error('PodTimes: no cluster state to keep pod times in (keepIn was not called)');
    return this.slots(p.namespace, p.name, p.uid);
  }
}
