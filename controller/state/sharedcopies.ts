// One copy of each equal value, found by a key (the value itself, or its JSON), so that the many objects holding
// equal values hold one. The table starts afresh once it holds `max` keys: a stream of distinct values cannot grow it
// without end, and a value seen again after that is kept again.

export class SharedCopies<T> {
  private readonly byKey = new Map<string, T>();

  constructor(private readonly max: number) {}

  /** The copy kept under `key`, if any. */
  get(key: string): T | undefined {
    return this.byKey.get(key);
  }

  /** The copy kept under `key`, or `value`, kept under it from now on. */
  keep(key: string, value: T): T {
    const had = this.byKey.get(key);
    if (had !== undefined) return had;
    if (this.byKey.size >= this.max) this.byKey.clear();
    this.byKey.set(key, value);
    return value;
  }
}
