// The controller's Kubernetes client: JSON in, JSON out, over @kubernetes/client-node's own HTTP stack
// (its KubeConfig, authentication, TLS dispatcher and undici fetch). We do not use the generated typed
// clients because they turn timestamps into Date objects and drop fields they do not model, while our
// parsers (engine/api) read Kubernetes JSON exactly as the API server writes it. Every request is bounded
// (lists by their own, longer timeout): one that gets no full answer in time is aborted and fails with a
// RequestTimeoutError, reported once (operator/timeouts.ts).
import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import type { Activity } from './activity.ts';
import { TokenBucket } from './ratelimit.ts';
import {
  KUBE_LIST_TIMEOUT_MS,
  KUBE_REQUEST_TIMEOUT_MS,
  RequestTimeoutError,
  type TimeoutReporter,
} from './timeouts.ts';

interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A Kubernetes object as JSON. spec and status stay untyped here; parsers give them meaning. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

interface KubeList {
  items: KubeObject[];
  metadata?: { resourceVersion?: string };
}

interface KindInfo {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Every kind the controller reads or writes. */
export const KINDS = {
  Node: { group: '', version: 'v1', plural: 'nodes', namespaced: false },
  Pod: { group: '', version: 'v1', plural: 'pods', namespaced: true },
  Event: { group: '', version: 'v1', plural: 'events', namespaced: true },
  DaemonSet: { group: 'apps', version: 'v1', plural: 'daemonsets', namespaced: true },
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
  ReplicaSet: { group: 'apps', version: 'v1', plural: 'replicasets', namespaced: true },
  StatefulSet: { group: 'apps', version: 'v1', plural: 'statefulsets', namespaced: true },
  ReplicationController: { group: '', version: 'v1', plural: 'replicationcontrollers', namespaced: true },
  Service: { group: '', version: 'v1', plural: 'services', namespaced: true },
  PodDisruptionBudget: { group: 'policy', version: 'v1', plural: 'poddisruptionbudgets', namespaced: true },
  NodePool: { group: 'karpenter.sh', version: 'v1', plural: 'nodepools', namespaced: false },
  NodeClaim: { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', namespaced: false },
  EC2NodeClass: { group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses', namespaced: false },
  NodeOverlay: { group: 'karpenter.sh', version: 'v1alpha1', plural: 'nodeoverlays', namespaced: false },
  CapacityBuffer: { group: 'autoscaling.x-k8s.io', version: 'v1beta1', plural: 'capacitybuffers', namespaced: true },
  PodTemplate: { group: '', version: 'v1', plural: 'podtemplates', namespaced: true },
  Lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
  ResourceSlice: { group: 'resource.k8s.io', version: 'v1', plural: 'resourceslices', namespaced: false },
  ResourceClaim: { group: 'resource.k8s.io', version: 'v1', plural: 'resourceclaims', namespaced: true },
  ResourceClaimTemplate: {
    group: 'resource.k8s.io',
    version: 'v1',
    plural: 'resourceclaimtemplates',
    namespaced: true,
  },
  DeviceClass: { group: 'resource.k8s.io', version: 'v1', plural: 'deviceclasses', namespaced: false },
} as const satisfies Record<string, KindInfo>;

export type Kind = keyof typeof KINDS;

export const apiVersionOf = (kind: Kind): string => {
  const k = KINDS[kind];
  return k.group ? `${k.group}/${k.version}` : k.version;
};

/** The collection path of a kind, across namespaces (or in one). */
export function collectionPath(kind: Kind, namespace?: string): string {
  const k = KINDS[kind];
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  return k.namespaced && namespace
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${k.plural}`
    : `${base}/${k.plural}`;
}

function itemPath(kind: Kind, name: string, namespace: string | undefined, subresource?: string): string {
  const k = KINDS[kind];
  if (k.namespaced && !namespace) throw new Error(`${kind} ${name}: a namespace is required`);
  return `${collectionPath(kind, namespace)}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

/** An error answer from the API server, with its HTTP code and Status reason. */
export class KubeError extends Error {
  override name = 'KubeError';
  constructor(
    message: string,
    readonly code: number,
    readonly reason?: string,
    readonly status?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const codeOf = (e: unknown): number | undefined => (e instanceof KubeError ? e.code : undefined);
export const isNotFound = (e: unknown): boolean => codeOf(e) === 404;
export const isConflict = (e: unknown): boolean => codeOf(e) === 409;
export const isTooManyRequests = (e: unknown): boolean => codeOf(e) === 429;

/** Returns undefined for a 404, rethrows anything else. */
export function ignoreNotFound(e: unknown): undefined {
  if (isNotFound(e)) return undefined;
  throw e;
}

interface DeleteOptions {
  readonly namespace?: string;
  readonly gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid. */
  readonly uid?: string;
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
}

export interface KubeClientOptions {
  /** Tracks every request (the simulator waits for them). */
  readonly activity?: Activity;
  /** fieldManager on writes (default karpenter-ts). */
  readonly fieldManager?: string;
  /**
   * Called before every write (POST, PUT, PATCH, DELETE); throwing refuses it. Leader election uses it so
   * that a replica that is not (or no longer) the leader cannot change the cluster, even from a reconcile
   * that was already running when it stepped down.
   */
  readonly guard?: (method: string, path: string) => void;
  /** Wall-clock bound of a request other than a list (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Wall-clock bound of a list (default 2 min). */
  readonly listTimeoutMs?: number;
  /** Told about every request that timed out (the operator logs and counts it). */
  readonly onTimeout?: TimeoutReporter;
  /** Told about every answered request: method, path, HTTP status and wall time (client-go's metrics). */
  readonly observe?: (method: string, path: string, code: number, ms: number) => void;
  /** Told about every GET sent again because its connection was lost before the answer (see KubeClient.answer). */
  readonly onConnectionLost?: (method: string, path: string, err: unknown) => void;
  /** KUBE_CLIENT_QPS / KUBE_CLIENT_BURST: every request waits for a token (0 qps: no limit). */
  readonly rateLimit?: { readonly qps: number; readonly burst: number };
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface RequestSpec {
  /** Low-cardinality name for the metric: `list Pod`, `patch NodeClaim/status`. */
  readonly op: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly query?: Record<string, string>;
  readonly list?: boolean;
}

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/** How long one shared connection pool serves before it is rebuilt from the kubeconfig (rotated TLS files). */
const DISPATCHER_MAX_AGE_MS = 10 * 60_000;

/** How many times a GET whose connection was lost before its answer is sent again (see KubeClient.answer). */
const CONNECTION_RETRIES = 2;

/**
 * undici's and the kernel's names for a connection that ended under a request: `other side closed` (the
 * server's FIN, UND_ERR_SOCKET), a reset (ECONNRESET) or a write into a closed socket (EPIPE). fetch wraps
 * them as the `cause` of its TypeError.
 */
const CONNECTION_LOST = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

function connectionLost(err: unknown): boolean {
  if (err instanceof RequestTimeoutError) return false;
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_LOST.has(code)) return true;
  }
  return false;
}

function tokenBucket(rl: KubeClientOptions['rateLimit']): TokenBucket | undefined {
  return rl && rl.qps > 0 ? new TokenBucket(rl.qps, Math.max(1, rl.burst)) : undefined;
}

/**
 * `kubeConfig` as applySecurityAuthentication uses it, except that the undici Agent it would make for every request
 * (client-node's private createDispatcher, whenever TLS options apply) comes from `pool`, which makes one only when
 * the shared pool is due (KubeClient.pooled). Making an Agent and closing it again cost about 0.1 ms of the event
 * loop a request. A client-node without that method makes its Agent as before and shareDispatcher drops it.
 */
function pooledAuth(
  kubeConfig: KubeConfig,
  pool: (create: () => Dispatcher | undefined) => Dispatcher | undefined,
): KubeConfig {
  const own = kubeConfig as unknown as { createDispatcher?: (...args: unknown[]) => Dispatcher | undefined };
  const create = own.createDispatcher;
  if (typeof create !== 'function') return kubeConfig;
  return Object.create(kubeConfig, {
    createDispatcher: { value: (...args: unknown[]) => pool(() => create.apply(kubeConfig, args)) },
  }) as KubeConfig;
}

export class KubeClient {
  private readonly http = new IsomorphicFetchHttpLibrary();
  private readonly server: string;
  private shared: { readonly key: string; readonly at: number; readonly dispatcher: Dispatcher } | undefined;
  private readonly fieldManager: string;
  private readonly limiter: TokenBucket | undefined;
  /** The kubeconfig as it authenticates a request, handing out the shared pool (pooledAuth). */
  private readonly auth: KubeConfig;

  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly opts: KubeClientOptions = {},
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig: no current cluster (set a current-context)');
    this.server = cluster.server.replace(/\/+$/, '');
    this.fieldManager = opts.fieldManager ?? 'karpenter-ts';
    this.limiter = tokenBucket(opts.rateLimit);
    this.auth = pooledAuth(kubeConfig, (create) => this.pooled(create));
  }

  /**
   * This client with a token bucket of its own at the same rate: the same server, credentials, options and
   * transport, but its requests neither wait for this client's tokens nor take them. The Kubernetes events of
   * the controller go through one, as controller-runtime's event recorder writes through an events client of
   * its own made from the manager's config (pkg/internal/recorder/recorder.go, NewProvider), and client-go
   * gives every client its own token bucket of the config's QPS and Burst (rest/config.go,
   * RESTClientForConfigAndClient): a burst of events cannot hold up a reconcile's requests.
   */
  withOwnRateLimit(): KubeClient {
    const own = Object.create(this) as KubeClient;
    Object.defineProperty(own, 'limiter', { value: tokenBucket(this.opts.rateLimit) });
    return own;
  }

  get(kind: Kind, name: string, namespace?: string): Promise<KubeObject> {
    return this.request('GET', itemPath(kind, name, namespace), { op: `get ${kind}` });
  }

  /** The object, or undefined when it does not exist. */
  async find(kind: Kind, name: string, namespace?: string): Promise<KubeObject | undefined> {
    return this.get(kind, name, namespace).catch(ignoreNotFound);
  }

  list(kind: Kind, opts: { namespace?: string; labelSelector?: string } = {}): Promise<KubeList> {
    const query = opts.labelSelector ? { labelSelector: opts.labelSelector } : undefined;
    return this.request('GET', collectionPath(kind, opts.namespace), {
      op: `list ${kind}`,
      list: true,
      ...(query ? { query } : {}),
    });
  }

  create(kind: Kind, obj: KubeObject): Promise<KubeObject> {
    const body = { ...obj, apiVersion: apiVersionOf(kind), kind };
    return this.request('POST', collectionPath(kind, obj.metadata.namespace), {
      op: `create ${kind}`,
      body,
      query: { fieldManager: this.fieldManager },
    });
  }

  /** A JSON merge patch (RFC 7386); put metadata.resourceVersion in it for optimistic locking. */
  patch(
    kind: Kind,
    name: string,
    patch: Record<string, unknown>,
    opts: { namespace?: string; subresource?: 'status' } = {},
  ): Promise<KubeObject> {
    return this.request('PATCH', itemPath(kind, name, opts.namespace, opts.subresource), {
      op: `patch ${kind}${opts.subresource ? `/${opts.subresource}` : ''}`,
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: this.fieldManager },
    });
  }

  /** A merge patch of the status subresource; with resourceVersion it fails (409) if the object moved on. */
  patchStatus(
    kind: Kind,
    name: string,
    status: Record<string, unknown>,
    opts: { namespace?: string; resourceVersion?: string } = {},
  ): Promise<KubeObject> {
    const body: Record<string, unknown> = { status };
    if (opts.resourceVersion) body['metadata'] = { resourceVersion: opts.resourceVersion };
    return this.patch(kind, name, body, {
      subresource: 'status',
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
    });
  }

  /** PUT: replaces the object; with metadata.resourceVersion set, fails with 409 if it moved on. */
  replace(kind: Kind, obj: KubeObject): Promise<KubeObject> {
    const body = { ...obj, apiVersion: apiVersionOf(kind), kind };
    return this.request('PUT', itemPath(kind, obj.metadata.name ?? '', obj.metadata.namespace), {
      op: `update ${kind}`,
      body,
      query: { fieldManager: this.fieldManager },
    });
  }

  async delete(kind: Kind, name: string, opts: DeleteOptions = {}): Promise<void> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.gracePeriodSeconds !== undefined) body['gracePeriodSeconds'] = opts.gracePeriodSeconds;
    if (opts.uid) body['preconditions'] = { uid: opts.uid };
    if (opts.propagationPolicy) body['propagationPolicy'] = opts.propagationPolicy;
    await this.request('DELETE', itemPath(kind, name, opts.namespace), { op: `delete ${kind}`, body });
  }

  /** POST pods/NAME/eviction (policy/v1). A PDB that forbids it answers 429. */
  async evict(namespace: string, name: string, uid?: string): Promise<void> {
    const body: Record<string, unknown> = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } };
    if (uid) body['deleteOptions'] = { preconditions: { uid } };
    await this.request('POST', itemPath('Pod', name, namespace, 'eviction'), { op: 'create Pod/eviction', body });
  }

  /** GET /version (a non-resource URL every authenticated client may read): `{ major: "1", minor: "32+" }`. */
  serverVersion(): Promise<{ major?: string; minor?: string; gitVersion?: string }> {
    return this.request('GET', '/version', { op: 'get /version' });
  }

  private request<T>(method: Method, path: string, o: RequestSpec): Promise<T> {
    if (method !== 'GET' && this.opts.guard) {
      try {
        this.opts.guard(method, path);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const p = this.limiter
      ? this.limiter.take().then(() => this.send<T>(method, path, o))
      : this.send<T>(method, path, o);
    return this.opts.activity ? this.opts.activity.track(p) : p;
  }

  /** The transport: one request to the API server. Protected so that tests can serve requests in memory (test/fakes/kube.ts). */
  protected async send<T>(method: Method, path: string, o: RequestSpec): Promise<T> {
    const { status, text } = await this.answer(method, path, o);
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (status >= 200 && status < 300) return json as T;
    const st = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
    const message = typeof st['message'] === 'string' ? st['message'] : text.slice(0, 300) || `HTTP ${status}`;
    throw new KubeError(
      `${method} ${path}: ${message}`,
      status,
      typeof st['reason'] === 'string' ? st['reason'] : undefined,
      st,
    );
  }

  /**
   * The API server's answer, asking again (at once, on another connection) when a GET's connection was lost
   * before its answer, at most CONNECTION_RETRIES times. A pooled keep-alive connection can be closed by the
   * server just as a request goes out on it (the server's idle timeout firing while the request is on the
   * wire): undici fails that request with `other side closed` and does not retry it. client-go retries GETs,
   * and only GETs, on a reset connection or an unexpected EOF (rest/request.go, isErrRetryableFunc; writes are
   * not idempotent); here too writes fail as before and their callers retry with backoff.
   */
  private async answer(method: Method, path: string, o: RequestSpec): Promise<{ status: number; text: string }> {
    for (let attempt = 0; ; attempt++) {
      const ctx = await this.context(method, path, o);
      try {
        return await this.exchange(ctx, method, path, o);
      } catch (err) {
        if (method !== 'GET' || attempt >= CONNECTION_RETRIES || !connectionLost(err)) throw err;
        this.opts.onConnectionLost?.(method, path, err);
      }
    }
  }

  /** The request, authenticated, on the shared connection pool. */
  private async context(method: Method, path: string, o: RequestSpec): Promise<RequestContext> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
    const ctx = new RequestContext(url.toString(), HttpMethod[method]);
    ctx.setHeaderParam('Accept', 'application/json');
    if (o.body !== undefined) {
      ctx.setHeaderParam('Content-Type', o.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(o.body));
    }
    await this.auth.applySecurityAuthentication(ctx);
    this.shareDispatcher(ctx);
    return ctx;
  }

  /**
   * The shared pool while the kubeconfig's cluster and user stay the same and it is younger than
   * DISPATCHER_MAX_AGE_MS; else a new one from `create`, the old pool left to finish its requests in flight.
   */
  private pooled(create: () => Dispatcher | undefined): Dispatcher | undefined {
    const key = JSON.stringify([this.kubeConfig.getCurrentCluster(), this.kubeConfig.getCurrentUser()]);
    const now = performance.now();
    const s = this.shared;
    if (s && s.key === key && now - s.at < DISPATCHER_MAX_AGE_MS) return s.dispatcher;
    const fresh = create();
    if (s) void s.dispatcher.close().catch(() => undefined);
    this.shared = fresh ? { key, at: now, dispatcher: fresh } : undefined;
    return fresh;
  }

  /**
   * One connection pool for every request. client-node's applySecurityAuthentication gives each request a new
   * undici Agent whenever TLS options apply (a CA, a client certificate, or verification off), so every request
   * opened a connection of its own (a TLS handshake, on a real cluster) and left it for the collector; client-go
   * keeps one transport per TLS configuration and reuses its connections. The pool is rebuilt when the
   * kubeconfig's cluster or user changes and every DISPATCHER_MAX_AGE_MS, so that certificates rotated in
   * files or by an exec plugin are picked up; the old pool finishes its requests in flight, then closes.
   */
  private shareDispatcher(ctx: RequestContext): void {
    const fresh = ctx.getDispatcher();
    if (!fresh || fresh === this.shared?.dispatcher) return;
    const key = JSON.stringify([this.kubeConfig.getCurrentCluster(), this.kubeConfig.getCurrentUser()]);
    const now = performance.now();
    const s = this.shared;
    if (s && s.key === key && now - s.at < DISPATCHER_MAX_AGE_MS) {
      ctx.setDispatcher(s.dispatcher);
      void fresh.close().catch(() => undefined);
      return;
    }
    if (s) void s.dispatcher.close().catch(() => undefined);
    this.shared = { key, at: now, dispatcher: fresh };
  }

  /** Sends the request and reads the whole answer, aborting both at the timeout. */
  private async exchange(
    ctx: RequestContext,
    method: Method,
    path: string,
    o: RequestSpec,
  ): Promise<{ status: number; text: string }> {
    const ms = o.list
      ? (this.opts.listTimeoutMs ?? KUBE_LIST_TIMEOUT_MS)
      : (this.opts.requestTimeoutMs ?? KUBE_REQUEST_TIMEOUT_MS);
    const signal = AbortSignal.timeout(ms);
    ctx.setSignal(signal);
    try {
      const started = performance.now();
      const res = await this.transport(ctx, method);
      this.opts.observe?.(method, path, res.status, performance.now() - started);
      return { status: res.status, text: await res.read() };
    } catch (err) {
      if (!signal.aborted) throw err;
      this.opts.onTimeout?.({ client: 'kubernetes', operation: o.op, timeoutMs: ms, target: `${method} ${path}` });
      throw new RequestTimeoutError(
        'kubernetes',
        o.op,
        ms,
        `${method} ${path}: no answer from the API server within ${ms / 1000} s`,
        { cause: err },
      );
    }
  }

  /**
   * Sends the request: with undici's own request() on the shared pool, or with client-node's fetch when there is
   * none (a kubeconfig without TLS options). fetch builds a WHATWG Request and Response, their headers and web
   * streams and an AbortController of its own for every request; a focused A/B put request() at about half the
   * event loop's time a request. The timeout's signal aborts both the request and the reading of the answer.
   */
  private async transport(
    ctx: RequestContext,
    method: Method,
  ): Promise<{ status: number; read: () => Promise<string> }> {
    const pool = ctx.getDispatcher();
    if (pool === undefined || pool !== this.shared?.dispatcher) {
      const res = await this.http.send(ctx).toPromise();
      return { status: res.httpStatusCode, read: () => res.body.text() };
    }
    const url = new URL(ctx.getUrl());
    const body = ctx.getBody();
    const res = await pool
      .request({
        origin: url.origin,
        path: url.pathname + url.search,
        method,
        headers: ctx.getHeaders(),
        ...(body === undefined ? {} : { body: body as string }),
        signal: ctx.getSignal(),
      })
      .catch((err: unknown) => {
        // The error as fetch gives it (what callers and logs have seen): a TypeError with undici's as its cause.
        throw new TypeError('fetch failed', { cause: err });
      });
    return { status: res.statusCode, read: () => res.body.text() };
  }
}
