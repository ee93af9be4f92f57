// A small map with per-entry expiry on an injected clock. Expired entries are dropped lazily on read and by
// sweep(), which also reports them (the launch-template cache deletes templates from EC2 when they expire).
import type { Clock } from './settings.ts';

export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();

  constructor(
    private readonly clock: Clock,
    readonly ttlMs: number,
  ) {}

  get(key: K): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  set(key: K, value: V, ttlMs = this.ttlMs): void {
    this.entries.set(key, { value, expires: this.clock.now() + ttlMs });
  }

  /** Extends the entry's life by a full TTL from now (a cache "refreshed on use"). */
  touch(key: K): void {
    const e = this.entries.get(key);
    if (e && e.expires > this.clock.now()) e.expires = this.clock.now() + this.ttlMs;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Removes expired entries and returns them. */
  sweep(): Array<[K, V]> {
    const now = this.clock.now();
    const out: Array<[K, V]> = [];
    for (const [k, e] of this.entries) {
      if (e.expires <= now) {
        this.entries.delete(k);
        out.push([k, e.value]);
      }
    }
    return out;
  }

  /** Live entries. */
  *values(): IterableIterator<V> {
    const now = this.clock.now();
    for (const e of this.entries.values()) if (e.expires > now) yield e.value;
  }

  get size(): number {
    return [...this.values()].length;
  }
}
