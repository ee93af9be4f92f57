// Problems logged once per distinct key (an object that does not parse, and why), with a bound: past it every key is
// forgotten at once and each logs once more, so a stream of bad objects under churn cannot grow the set without end.
// Karpenter itself logs such an error at each reconcile and keeps nothing; this keeps the log quiet in between.

/** Distinct problem keys remembered at once. */
const MAX_REPORTED = 10_000;

export class ReportedOnce {
  private readonly keys = new Set<string>();

  constructor(private readonly max = MAX_REPORTED) {}

  /** True the first time `key` is seen (since it was last forgotten): the caller logs it then. */
  first(key: string): boolean {
    if (this.keys.has(key)) return false;
    if (this.keys.size >= this.max) this.keys.clear();
    this.keys.add(key);
    return true;
  }
}
