// The bookkeeping of the device allocation simulation (allocator.ts): the device references a search picks
// from, and the ledger of what devices, shared capacity and counters are already consumed.
import type { AllocatedDevice, CounterSet, Device, DeviceRequest } from '../domain/dra.ts';
import type { NodeSelectorTerm } from '../domain/types.ts';

/** Where a device can be used from. */
export type Access =
  | { readonly kind: 'node'; readonly node: string }
  | { readonly kind: 'selector'; readonly terms: readonly NodeSelectorTerm[] }
  | { readonly kind: 'all' }
  | { readonly kind: 'template'; readonly hostname: string };

export interface DeviceRef {
  readonly key: string;
  readonly driver: string;
  readonly pool: string;
  readonly device: Device;
  readonly counterSets: ReadonlyMap<string, CounterSet>;
  readonly access: Access;
}

/** A claim as one pod needs it: its spec and, when allocated (before or during this solve), its devices. */
export interface PodClaim {
  readonly key: string;
  readonly requests: readonly DeviceRequest[];
  readonly allocated?: readonly AllocatedDevice[];
}

export interface Pick {
  readonly claim: string;
  readonly request: string;
  readonly ref: DeviceRef;
  readonly consumed: Readonly<Record<string, number>>;
}

/** Consumption of devices and counters: the state allocation checks against. Copy-on-write per solve. */
export class Ledger {
  readonly exclusive = new Set<string>();
  readonly shared = new Map<string, Record<string, number>>();
  readonly counters = new Map<string, Record<string, number>>();
  /** Claims allocated during this solve (by claim key): their picks. */
  readonly allocatedInSolve = new Map<string, readonly Pick[]>();

  inUse(key: string): boolean {
    return this.exclusive.has(key) || this.shared.has(key);
  }

  /** Whether `amount` more of the device's capacity (shared devices) or the whole device is free. */
  canTake(
    ref: DeviceRef,
    consumed: Readonly<Record<string, number>>,
    taken: ReadonlyMap<string, Record<string, number>>,
  ): boolean {
    const k = ref.key;
    if (this.exclusive.has(k)) return false;
    const pending = taken.get(k);
    if (!ref.device.allowMultipleAllocations) {
      if (pending || this.shared.has(k)) return false;
    } else {
      const used = this.shared.get(k) ?? {};
      for (const [c, v] of Object.entries(consumed)) {
        const cap = ref.device.capacity[c] ?? 0;
        if ((used[c] ?? 0) + (pending?.[c] ?? 0) + v > cap) return false;
      }
    }
    // Counters are consumed once, when a device goes from free to allocated.
    if (!this.inUse(k) && !pending && ref.device.consumesCounters.length) {
      for (const cc of ref.device.consumesCounters) {
        const set = ref.counterSets.get(cc.counterSet);
        if (!set) return false;
        const used = this.counters.get(`${ref.driver}/${ref.pool}/${cc.counterSet}`) ?? {};
        const pendingCounters = taken.get(`counters:${ref.driver}/${ref.pool}/${cc.counterSet}`) ?? {};
        for (const [c, v] of Object.entries(cc.counters)) {
          if ((used[c] ?? 0) + (pendingCounters[c] ?? 0) + v > (set.counters[c] ?? 0)) return false;
        }
      }
    }
    return true;
  }

  take(ref: DeviceRef, consumed: Readonly<Record<string, number>>): void {
    const fresh = !this.inUse(ref.key);
    if (ref.device.allowMultipleAllocations) {
      const used = { ...(this.shared.get(ref.key) ?? {}) };
      for (const [c, v] of Object.entries(consumed)) used[c] = (used[c] ?? 0) + v;
      this.shared.set(ref.key, used);
    } else {
      this.exclusive.add(ref.key);
    }
    if (fresh) {
      for (const cc of ref.device.consumesCounters) {
        const k = `${ref.driver}/${ref.pool}/${cc.counterSet}`;
        const used = { ...(this.counters.get(k) ?? {}) };
        for (const [c, v] of Object.entries(cc.counters)) used[c] = (used[c] ?? 0) + v;
        this.counters.set(k, used);
      }
    }
  }

  clone(): Ledger {
    const l = new Ledger();
    for (const k of this.exclusive) l.exclusive.add(k);
    for (const [k, v] of this.shared) l.shared.set(k, v);
    for (const [k, v] of this.counters) l.counters.set(k, v);
    for (const [k, v] of this.allocatedInSolve) l.allocatedInSolve.set(k, v);
    return l;
  }
}
