// An in-memory Kubernetes API for controller unit tests: the controller's own KubeClient (its paths, bodies,
// guard and error mapping) with the transport replaced by direct calls into the simulator's API semantics
// (sim/apiserver's Api: resourceVersions and 409s, finalizers and graceful deletion, merge patches, the status
// subresource, eviction against PDBs). No socket, no HTTP server, no informer: clusterStateOf() feeds cluster
// state straight from the store's change events.
//
//   const fake = fakeKube();                 // or fakeKube({ clock })
//   fake.api.create('nodes', undefined, {...});
//   await controller.reconcile(key);         // ctx.kube = fake.kube
//   expect(fake.writes()).toEqual([...]);
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, KubeError, type KubeClientOptions, type Method } from '../../controller/operator/kube.ts';
import type { Clock } from '../../controller/operator/clock.ts';
import { ApiError, createApi, type Api } from '../../sim/apiserver/index.ts';
import { route } from '../../sim/apiserver/routes.ts';
import { manualClock } from '../../sim/clock.ts';

interface RecordedRequest {
  readonly method: Method;
  readonly path: string;
  readonly body?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A fresh copy, as a response off the wire would be (the store's objects are frozen and shared). */
const wire = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server: 'http://fake-apiserver.invalid', skipTLSVerify: true }],
    users: [{ name: 'fake' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  return kc;
}

/** A request the fake answers with an error once (failure drills: conflicts, throttling, outages). */
interface FailRule {
  readonly method?: Method;
  /** Matches the request path (a substring, or a RegExp). */
  readonly path: string | RegExp;
  readonly code: number;
  readonly reason?: string;
  readonly message?: string;
}

const REASONS: Readonly<Record<number, string>> = {
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** KubeClient whose requests are served by `api` in this thread. */
class InMemoryKubeClient extends KubeClient {
  readonly requests: RecordedRequest[] = [];
  private readonly failures: FailRule[] = [];

  /** The next request matching the rule fails with its code (rules are used once, in order). */
  failNext(rule: FailRule): void {
    this.failures.push(rule);
  }

  /** Rules not used yet. */
  pendingFailures(): number {
    return this.failures.length;
  }

  constructor(
    readonly api: Api,
    opts: KubeClientOptions = {},
  ) {
    super(kubeConfig(), opts);
  }

  protected override async send<T>(
    method: Method,
    path: string,
    o: { body?: unknown; contentType?: string; query?: Record<string, string> },
  ): Promise<T> {
    this.requests.push({ method, path, ...(o.body !== undefined ? { body: wire(o.body) } : {}) });
    // A turn of the event loop, as a round trip takes: callers must not rely on a write being synchronous.
    await new Promise((r) => setImmediate(r));
    const i = this.failures.findIndex(
      (f) =>
        (!f.method || f.method === method) && (typeof f.path === 'string' ? path.includes(f.path) : f.path.test(path)),
    );
    if (i >= 0) {
      const [f] = this.failures.splice(i, 1);
      const reason = f!.reason ?? REASONS[f!.code] ?? 'InternalError';
      const message = f!.message ?? `injected ${f!.code}`;
      throw new KubeError(`${method} ${path}: ${message}`, f!.code, reason, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: f!.code,
        reason,
        message,
      });
    }
    try {
      return wire(this.serve(method, path, o.query ?? {}, wire(o.body), o.contentType)) as T;
    } catch (e) {
      if (e instanceof ApiError) {
        const status = e.toStatus() as unknown as Record<string, unknown>;
        throw new KubeError(`${method} ${path}: ${e.message}`, e.code, e.reason, status);
      }
      throw e;
    }
  }

  private serve(
    method: Method,
    path: string,
    query: Record<string, string>,
    body: unknown,
    contentType: string | undefined,
  ): unknown {
    const rt = route(this.api.resources, path);
    if (rt.kind === 'version') return { major: '1', minor: '32', gitVersion: 'v1.32.0-fake' };
    if (rt.kind !== 'resource' || rt.watch)
      throw new ApiError(404, 'NotFound', `the fake API serves no ${method} ${path}`);
    const { r, name, sub } = rt;
    const ns = r.namespaced ? rt.namespace : undefined;
    const subresource = sub === 'status' ? ('status' as const) : undefined;
    switch (method) {
      case 'GET': {
        if (name !== undefined) return this.api.get(r, ns, name);
        const list = this.api.list(r, ns, {
          ...(query['labelSelector'] ? { labelSelector: query['labelSelector'] } : {}),
        });
        return {
          kind: `${r.kind}List`,
          apiVersion: r.apiVersion,
          metadata: { resourceVersion: list.resourceVersion },
          items: list.items,
        };
      }
      case 'POST':
        if (name === undefined) return this.api.create(r, ns, body, { fieldManager: query['fieldManager'] });
        if (sub === 'eviction') return this.api.evict(ns ?? '', name, body);
        break;
      case 'PUT':
        if (name !== undefined)
          return this.api.update(r, ns, name, body, { subresource, fieldManager: query['fieldManager'] });
        break;
      case 'PATCH':
        if (name !== undefined && contentType === 'application/merge-patch+json')
          return this.api.patch(r, ns, name, 'merge', body, { subresource, fieldManager: query['fieldManager'] });
        break;
      case 'DELETE': {
        if (name === undefined) break;
        const b = isObject(body) ? body : {};
        return this.api.delete(r, ns, name, {
          ...(typeof b['gracePeriodSeconds'] === 'number' ? { gracePeriodSeconds: b['gracePeriodSeconds'] } : {}),
          ...(isObject(b['preconditions']) ? { preconditions: b['preconditions'] as { uid?: string } } : {}),
          ...(typeof b['propagationPolicy'] === 'string'
            ? { propagationPolicy: b['propagationPolicy'] as 'Background' }
            : {}),
        });
      }
    }
    throw new ApiError(
      405,
      'MethodNotAllowed',
      `the fake API serves no ${method} ${path}${contentType ? ` (${contentType})` : ''}`,
    );
  }
}

export interface FakeKube {
  readonly api: Api;
  readonly kube: InMemoryKubeClient;
  readonly clock: Clock;
  /** Writes the controller made (everything but GET), in order, as `METHOD path`. */
  writes(): string[];
}

/** A fresh in-memory API (default namespaces, resource.k8s.io served) and a client for the controller. */
export function fakeKube(o: { clock?: Clock; client?: KubeClientOptions } = {}): FakeKube {
  const clock = o.clock ?? manualClock();
  const api = createApi({
    clock,
    onError: (err) => {
      throw err;
    },
  });
  const kube = new InMemoryKubeClient(api, o.client);
  return {
    api,
    kube,
    clock,
    writes: () => kube.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`),
  };
}
