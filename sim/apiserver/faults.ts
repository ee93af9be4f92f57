// Fault injection and the request log, for failure drills in tests. Faults apply to HTTP requests only:
// the simulated kubelet, scheduler and controllers write in-process and are never failed.
import { errors, type ApiError } from './errors.ts';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

const WRITE_VERBS: readonly Verb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/** What a request was, once routed. Non-resource requests (discovery, openapi) have no verb. */
export interface RequestInfo {
  readonly verb?: Verb | undefined;
  /** Resource key: `pods`, `nodeclaims.karpenter.sh`. */
  readonly resource?: string | undefined;
  readonly subresource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

export interface RequestRecord extends RequestInfo {
  /** Sim time the request arrived. */
  readonly time: number;
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly userAgent: string;
  /** HTTP status sent (for a watch: the status of the response head). */
  status: number;
}

interface FaultMatch {
  /** Resource name as the store resolves it (`nodeclaims`, `pods`, `leases.coordination.k8s.io`); any if absent. */
  readonly resource?: string;
  /** Verbs to fail; default every write verb (create, update, patch, delete, deletecollection). */
  readonly verbs?: readonly Verb[];
  /** Subresource to match (`status`, `eviction`, `binding`, `scale`); any if absent. */
  readonly subresource?: string;
}

export interface FailRule extends FaultMatch {
  /** How many matching requests fail (default 1). */
  readonly count?: number;
  /** HTTP status (default 500). */
  readonly code?: number;
  readonly message?: string;
}

interface ActiveRule {
  match: FaultMatch & { resource?: string };
  left: number;
  error: () => ApiError;
}

interface Latency {
  match: FaultMatch;
  ms: number;
}

export class Faults {
  private readonly rules: ActiveRule[] = [];
  private latencies: Latency[] = [];
  /** Watches still to be refused with HTTP 410 (see nextWatchGone). */
  goneWatches = 0;
  /** Set by the server: ends open watch streams; returns how many. */
  dropWatchesHook: (gone: boolean) => number = () => 0;

  constructor(private readonly resolve: (name: string) => string) {}

  /** Fails the next `count` requests matching the rule with the given status. */
  failNext(rule: FailRule): void {
    const code = rule.code ?? 500;
    const message = rule.message ?? `injected fault: ${code}`;
    this.rules.push({
      match: { ...rule, ...(rule.resource ? { resource: this.resolve(rule.resource) } : {}) },
      left: rule.count ?? 1,
      error: () => errors.injected(code, message),
    });
  }

  /** Adds `ms` of wall-clock latency to matching requests (all requests when `match` is omitted). */
  addLatency(ms: number, match: FaultMatch = {}): void {
    this.latencies.push({
      match: { ...match, ...(match.resource ? { resource: this.resolve(match.resource) } : {}) },
      ms,
    });
  }

  /** Ends every open watch. With `gone`, each stream first gets an in-stream ERROR 410, forcing a relist. */
  dropWatches(opts: { gone?: boolean } = {}): number {
    return this.dropWatchesHook(opts.gone ?? false);
  }

  /** The next `n` watch requests are answered with HTTP 410 Gone. */
  nextWatchGone(n = 1): void {
    this.goneWatches += n;
  }

  /** Removes every rule and latency. */
  reset(): void {
    this.rules.length = 0;
    this.latencies = [];
    this.goneWatches = 0;
  }

  /** Pending failures (for tests that check a rule was used up). */
  pending(): number {
    return this.rules.reduce((n, r) => n + r.left, 0);
  }

  /** Consumes a matching rule, returning the error to answer with. */
  take(info: RequestInfo): ApiError | undefined {
    for (const [i, rule] of this.rules.entries()) {
      if (!matchesRule(rule.match, info, WRITE_VERBS)) continue;
      rule.left--;
      if (rule.left <= 0) this.rules.splice(i, 1);
      return rule.error();
    }
    return undefined;
  }

  latencyFor(info: RequestInfo): number {
    return this.latencies.filter((l) => matchesRule(l.match, info, [])).reduce((a, l) => a + l.ms, 0);
  }
}

function matchesRule(m: FaultMatch, info: RequestInfo, defaultVerbs: readonly Verb[]): boolean {
  if (!info.verb) return false;
  const verbs = m.verbs ?? defaultVerbs;
  if (verbs.length && !verbs.includes(info.verb)) return false;
  if (m.resource && m.resource !== info.resource) return false;
  if (m.subresource !== undefined && m.subresource !== info.subresource) return false;
  return true;
}

/** A bounded log of HTTP requests. */
export class RequestLog {
  private entries: RequestRecord[] = [];
  /** Every request ever logged, counted by `verb resource[/subresource]` (the entries keep only the latest). */
  private readonly counts = new Map<string, number>();
  constructor(private readonly limit = 10_000) {}

  add(r: RequestRecord): void {
    const k = `${r.verb ?? r.method} ${r.resource ?? r.path}${r.subresource ? `/${r.subresource}` : ''}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    this.entries.push(r);
    if (this.entries.length > this.limit * 1.5) this.entries = this.entries.slice(-this.limit);
  }

  /** A copy of the running counts by `verb resource[/subresource]`, over every request since the start. */
  tally(): Map<string, number> {
    return new Map(this.counts);
  }

  all(): readonly RequestRecord[] {
    return this.entries;
  }

  /** Requests matching every given field. */
  find(
    match: Partial<
      Pick<RequestRecord, 'verb' | 'resource' | 'subresource' | 'namespace' | 'name' | 'method' | 'status'>
    >,
  ): RequestRecord[] {
    return this.entries.filter((e) =>
      Object.entries(match).every(([k, v]) => (e as unknown as Record<string, unknown>)[k] === v),
    );
  }

  clear(): void {
    this.entries = [];
  }
}
