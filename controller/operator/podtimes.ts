// When the provisioner first saw each pending pod, and when it first decided where the pod goes (a
// nomination, a new NodeClaim, or an error). Karpenter keeps the same two instants in cluster state
// (AckPods, MarkPodSchedulingDecisions) for its karpenter_pods_provisioning_* metrics; these are in memory
// only, so they start again after a restart, as Karpenter's do.

export interface PodTime {
  readonly uid: string;
  readonly seen: number;
  decided?: number;
}

export class PodTimes {
  private readonly byKey = new Map<string, PodTime>();

  /** The provisioner saw these pods pending; the first sighting per pod (uid) counts. */
  seen(pods: Iterable<{ namespace: string; name: string; uid: string }>, now: number): void {
    for (const p of pods) {
      const key = `${p.namespace}/${p.name}`;
      const t = this.byKey.get(key);
      if (!t || t.uid !== p.uid) this.byKey.set(key, { uid: p.uid, seen: now });
    }
  }

  /** A scheduling decision was made for these pods; returns how long each first decision took (ms). */
  decided(pods: Iterable<{ namespace: string; name: string; uid: string }>, now: number): number[] {
    const waits: number[] = [];
    for (const p of pods) {
      const t = this.byKey.get(`${p.namespace}/${p.name}`);
      if (!t || t.uid !== p.uid || t.decided !== undefined) continue;
      t.decided = now;
      waits.push(now - t.seen);
    }
    return waits;
  }

  get(namespace: string, name: string, uid: string): PodTime | undefined {
    const t = this.byKey.get(`${namespace}/${name}`);
    return t && t.uid === uid ? t : undefined;
  }

  forget(namespace: string, name: string): void {
    this.byKey.delete(`${namespace}/${name}`);
  }
}
