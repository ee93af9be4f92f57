// The HTTP face of the simulated API server: node:http on loopback, routing each request to the
// in-process Api, with the request guard (Host, token, media type: guard.ts), the body cap (body.ts), the
// request log, fault injection and latency in front. Everything answers JSON; failures answer a metav1
// Status with the right code.
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Api } from './api.ts';
import { checkShape, parseBody, readBody, type BodyFormat } from './body.ts';
import { decodeProtobufBody } from './protobuf.ts';
import type { DeleteOptions, PropagationPolicy } from './deletion.ts';
import {
  apiGroupDoc,
  apiGroupListDoc,
  apiVersionsDoc,
  openApiGroupVersionDoc,
  openApiRootDoc,
  resourceListDoc,
  swaggerDoc,
  versionDoc,
  type VersionInfo,
} from './discovery.ts';
import { ApiError, errors } from './errors.ts';
import type { Faults, RequestInfo, RequestLog, Verb } from './faults.ts';
import { RequestGuard } from './guard.ts';
import type { FieldValidation, PatchType, WriteOptions } from './registry.ts';
import { route, type Route } from './routes.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { getScale, writeScale } from './subresources.ts';
import { toTable, wantsTable, type IncludeObject } from './table.ts';
import { isObject, type JsonObject } from './types.ts';
import { WatchHub } from './watch.ts';

interface HttpOptions {
  readonly host: string;
  readonly port: number;
  readonly heartbeatMs: number;
  readonly version: VersionInfo;
  readonly onError: (err: unknown) => void;
  /** The bearer token requests must carry; undefined: none. */
  readonly token: string | undefined;
  /** Bodies larger than this are refused with 413. */
  readonly maxBodyBytes: number;
  /** A watcher whose unsent output exceeds this many bytes is dropped. */
  readonly watchBufferBytes: number;
  /** Serve https with this key and certificate (PEM); plain http without. */
  readonly tls?: { readonly key: string; readonly cert: string } | undefined;
}

type ResourceRoute = Extract<Route, { kind: 'resource' }>;

/**
 * How long a kept-alive connection may sit idle before the server closes it: kube-apiserver's 90 s (its
 * http.Server IdleTimeout, k8s.io/apiserver pkg/server/secure_serving.go). Node's default is 5 s, and it tells the
 * client so (`Keep-Alive: timeout=5`), which undici reads as "close it after 3 s" (the hint less its 2 s
 * threshold): a client whose event loop fell 2 s behind sent requests on connections the server was closing,
 * and lost writes to `other side closed`. Against kube-apiserver a client idles out after 4 s (undici's default
 * without a hint), 86 s before the server would.
 */
const IDLE_TIMEOUT_MS = 90_000;

/**
 * kube-apiserver (Go net/http) says nothing of its idle timeout; Node adds `Keep-Alive: timeout=N` unless the
 * response names its connection itself. A request that asked for `Connection: close` (or HTTP/1.0) keeps Node's
 * own handling.
 */
function withoutKeepAliveHint(req: IncomingMessage, res: ServerResponse): void {
  if (req.httpVersion === '1.1' && !/\bclose\b/i.test(req.headers.connection ?? ''))
    res.setHeader('Connection', 'keep-alive');
}

/** A request's body, parsed on first use in the format its Content-Type named. */
class Body {
  constructor(
    private readonly raw: Buffer,
    private readonly format: BodyFormat | undefined,
  ) {}

  get empty(): boolean {
    return this.format === 'protobuf' ? this.raw.length === 0 : this.raw.toString('utf8').trim() === '';
  }

  value(): unknown {
    if (!this.format) throw errors.unsupportedMediaType('(none)', ['application/json', 'application/yaml']);
    if (this.format !== 'protobuf') return parseBody(this.raw, this.format);
    if (!this.raw.length) throw errors.badRequest('the request body is empty');
    const object = decodeProtobufBody(this.raw);
    checkShape(object);
    return object;
  }
}

/** One request on its way through dispatch. */
interface Call {
  readonly method: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly q: URLSearchParams;
  readonly body: Body;
  readonly patch: PatchType | undefined;
}

export class HttpFront {
  readonly hub: WatchHub;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly guard: RequestGuard;
  url = '';
  /** The Prometheus text GET /metrics answers; unset: 404. */
  metrics: (() => Promise<string>) | undefined;

  constructor(
    private readonly api: Api,
    private readonly faults: Faults,
    private readonly log: RequestLog,
    private readonly opts: HttpOptions,
  ) {
    this.hub = new WatchHub(api.store, () => api.clock.now(), {
      heartbeatMs: opts.heartbeatMs,
      maxBufferBytes: opts.watchBufferBytes,
    });
    this.guard = new RequestGuard({ token: opts.token, listenHost: opts.host });
    faults.dropWatchesHook = (gone) => this.hub.dropAll(gone);
  }

  async listen(): Promise<void> {
    const listener: RequestListener = (req, res) => {
      withoutKeepAliveHint(req, res);
      void this.handle(req, res);
    };
    const server = this.opts.tls
      ? createTlsServer({ key: this.opts.tls.key, cert: this.opts.tls.cert }, listener)
      : createServer(listener);
    server.keepAliveTimeout = IDLE_TIMEOUT_MS;
    server.on(this.opts.tls ? 'secureConnection' : 'connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    this.server = server;
    const addr = server.address() as AddressInfo;
    this.url = `${this.opts.tls ? 'https' : 'http'}://${this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host}:${addr.port}`;
  }

  async close(): Promise<void> {
    this.hub.close();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const method = req.method ?? 'GET';
    const rt = route(this.api.resources, url.pathname);
    const info = requestInfo(rt, method, url.searchParams);
    const rec = {
      time: this.api.clock.now(),
      method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      userAgent: req.headers['user-agent'] ?? '',
      ...info,
      status: 0,
    };
    this.log.add(rec);
    try {
      const admitted = this.guard.admit(req, url.pathname);
      const body = new Body(await readBody(req, this.opts.maxBodyBytes), admitted.format);
      await this.injectFaults(info);
      this.dispatch(rt, { method, req, res, q: url.searchParams, body, patch: admitted.patch });
    } catch (e) {
      this.fail(res, e);
    }
    rec.status = res.statusCode;
  }

  /** Latency, injected failures and forced 410s the drills asked for. */
  private async injectFaults(info: RequestInfo): Promise<void> {
    const delay = this.faults.latencyFor(info);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const injected = this.faults.take(info);
    if (injected) throw injected;
    if (info.verb === 'watch' && this.faults.goneWatches > 0) {
      this.faults.goneWatches--;
      throw errors.gone('too old resource version (forced by the simulator)');
    }
  }

  /** GET /metrics: the controller's metrics, as its own endpoint serves them. */
  private serveMetrics(res: ServerResponse): void {
    const source = this.metrics;
    if (!source) throw errors.pathNotFound('/metrics');
    source().then(
      (text) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text),
      (e: unknown) => this.fail(res, e),
    );
  }

  private fail(res: ServerResponse, e: unknown): void {
    const err = e instanceof ApiError ? e : errors.internal((e as Error)?.message ?? String(e));
    if (!(e instanceof ApiError)) this.opts.onError(e);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    // The rest of an oversized body is not read: the connection cannot carry another request.
    if (err.code === 413) res.setHeader('connection', 'close');
    send(res, err.code, err.toStatus());
  }

  private dispatch(rt: Route, call: Call): void {
    const { method, req, res } = call;
    const table = this.api.resources;
    const get = (doc: JsonObject | undefined): void => {
      if (method !== 'GET') throw errors.methodNotAllowed(method, 'discovery');
      if (!doc) throw errors.pathNotFound(req.url ?? '');
      send(res, 200, doc);
    };
    switch (rt.kind) {
      case 'version':
        return get(versionDoc(this.opts.version));
      case 'health':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        return;
      case 'api':
        return get(apiVersionsDoc(new URL(this.url).host));
      case 'apis':
        return get(apiGroupListDoc(table));
      case 'group':
        return get(apiGroupDoc(table, rt.group));
      case 'resourceList':
        return get(resourceListDoc(table, rt.group, rt.version));
      case 'openapi':
        return get(openApiRootDoc(table));
      case 'openapiV2':
        return get(swaggerDoc(table));
      case 'metrics':
        return this.serveMetrics(res);
      case 'openapiGroupVersion':
        return get(openApiGroupVersionDoc(table, rt.group, rt.version));
      case 'bindings': {
        if (method !== 'POST') throw errors.methodNotAllowed(method, 'bindings');
        const body = call.body.value();
        const name = isObject(body) && isObject(body.metadata) ? String(body.metadata.name ?? '') : '';
        this.api.bind(rt.namespace, name, bindingTarget(body));
        return send(res, 201, successStatus(201));
      }
      case 'notFound':
        throw errors.pathNotFound(req.url ?? '');
      case 'resource':
        return this.resource(rt, call);
    }
  }

  private resource(rt: ResourceRoute, call: Call): void {
    const { r, sub } = rt;
    if (sub !== undefined && sub !== 'status' && !r.subresources.includes(sub as never))
      throw errors.pathNotFound(call.req.url ?? '');
    switch (call.method) {
      case 'GET':
        return rt.watch || isTrue(call.q.get('watch')) ? this.watch(rt, call) : this.read(rt, call);
      case 'POST':
        return this.post(rt, call);
      case 'PUT':
        return this.put(rt, call);
      case 'PATCH':
        return this.patch(rt, call);
      case 'DELETE':
        return this.remove(rt, call);
      default:
        throw errors.methodNotAllowed(call.method, r.key);
    }
  }

  private watch(rt: ResourceRoute, { res, req, q }: Call): void {
    const ns = rt.r.namespaced ? rt.namespace : undefined;
    if (rt.name !== undefined)
      q.set('fieldSelector', [q.get('fieldSelector'), `metadata.name=${rt.name}`].filter(Boolean).join(','));
    this.hub.open(rt.r, res, {
      namespace: ns,
      filter: {
        namespace: ns,
        labels: parseLabelSelector(q.get('labelSelector')),
        fields: parseFieldSelector(q.get('fieldSelector')),
      },
      resourceVersion: q.get('resourceVersion') ?? undefined,
      bookmarks: isTrue(q.get('allowWatchBookmarks')),
      table: wantsTable(req.headers.accept),
      timeoutSeconds: q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined,
    });
  }

  private read(rt: ResourceRoute, { res, req, q, method }: Call): void {
    const { r, name, sub } = rt;
    const ns = r.namespaced ? rt.namespace : undefined;
    const now = this.api.clock.now();
    const asTable = wantsTable(req.headers.accept);
    const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
    if (name === undefined) {
      const list = this.api.list(r, ns, {
        labelSelector: q.get('labelSelector') ?? undefined,
        fieldSelector: q.get('fieldSelector') ?? undefined,
      });
      if (asTable) return send(res, 200, toTable(r, list.items, now, list.resourceVersion, include));
      return send(res, 200, {
        kind: `${r.kind}List`,
        apiVersion: r.apiVersion,
        metadata: { resourceVersion: list.resourceVersion },
        items: list.items,
      });
    }
    if (sub === 'scale') return send(res, 200, getScale(this.api, r, ns ?? '', name));
    if (sub !== undefined && sub !== 'status') throw errors.methodNotAllowed(method, `${r.key}/${sub}`);
    const obj = this.api.get(r, ns, name);
    return send(res, 200, asTable ? toTable(r, [obj], now, obj.metadata.resourceVersion ?? '', include) : obj);
  }

  private post(rt: ResourceRoute, { res, q, body, method }: Call): void {
    const { r, name, sub } = rt;
    const ns = r.namespaced ? rt.namespace : undefined;
    if (name === undefined) return send(res, 201, this.api.create(r, ns, body.value(), writeOptions(q, sub)));
    if (sub === 'eviction') return send(res, 201, this.api.evict(ns ?? '', name, body.value()));
    if (sub === 'binding') {
      this.api.bind(ns ?? '', name, bindingTarget(body.value()));
      return send(res, 201, successStatus(201));
    }
    throw errors.methodNotAllowed(method, `${r.key}${sub ? `/${sub}` : ''}`);
  }

  private put(rt: ResourceRoute, { res, q, body, method }: Call): void {
    const { r, name, sub } = rt;
    const ns = r.namespaced ? rt.namespace : undefined;
    if (name === undefined) throw errors.methodNotAllowed(method, r.key);
    if (sub === 'scale') return send(res, 200, writeScale(this.api, r, ns ?? '', name, body.value()));
    return send(res, 200, this.api.update(r, ns, name, body.value(), writeOptions(q, sub)));
  }

  private patch(rt: ResourceRoute, { res, q, body, method, patch }: Call): void {
    const { r, name, sub } = rt;
    const ns = r.namespaced ? rt.namespace : undefined;
    if (name === undefined || !patch) throw errors.methodNotAllowed(method, r.key);
    const value = body.value();
    if (sub === 'scale') return send(res, 200, writeScale(this.api, r, ns ?? '', name, value, patch));
    const existed = patch === 'apply' && this.api.find(r, ns, name) !== undefined;
    const out = this.api.patch(r, ns, name, patch, value, writeOptions(q, sub));
    return send(res, patch === 'apply' && !existed ? 201 : 200, out);
  }

  private remove(rt: ResourceRoute, { res, q, body, method }: Call): void {
    const { r, name, sub } = rt;
    const ns = r.namespaced ? rt.namespace : undefined;
    const options = deleteOptions(q, body.empty ? {} : body.value());
    if (name === undefined) {
      const items = this.api.deleteCollection(
        r,
        ns,
        { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined },
        options,
      );
      return send(res, 200, {
        kind: `${r.kind}List`,
        apiVersion: r.apiVersion,
        metadata: { resourceVersion: String(this.api.store.resourceVersion()) },
        items,
      });
    }
    if (sub !== undefined) throw errors.methodNotAllowed(method, `${r.key}/${sub}`);
    return send(res, 200, this.api.delete(r, ns, name, options));
  }
}

const bindingTarget = (body: unknown): string =>
  isObject(body) && isObject(body.target) ? String(body.target.name ?? '') : '';

function requestInfo(rt: Route, method: string, q: URLSearchParams): RequestInfo {
  if (rt.kind === 'bindings')
    return { verb: 'create', resource: 'pods', subresource: 'binding', namespace: rt.namespace };
  if (rt.kind !== 'resource') return {};
  let verb: Verb | undefined;
  if (method === 'GET') verb = rt.watch || isTrue(q.get('watch')) ? 'watch' : rt.name === undefined ? 'list' : 'get';
  else if (method === 'POST') verb = 'create';
  else if (method === 'PUT') verb = 'update';
  else if (method === 'PATCH') verb = 'patch';
  else if (method === 'DELETE') verb = rt.name === undefined ? 'deletecollection' : 'delete';
  return { verb, resource: rt.r.key, subresource: rt.sub, namespace: rt.namespace, name: rt.name };
}

const isTrue = (v: string | null): boolean => v === 'true' || v === '1';

function writeOptions(q: URLSearchParams, sub: string | undefined): WriteOptions {
  const fv = q.get('fieldValidation');
  if (fv !== null && fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore')
    throw errors.badRequest(`fieldValidation must be Strict, Warn or Ignore, got "${fv}"`);
  const dryRun = q.get('dryRun');
  if (dryRun !== null && dryRun !== 'All') throw errors.badRequest(`dryRun must be All, got "${dryRun}"`);
  return {
    subresource: sub === 'status' ? 'status' : undefined,
    fieldManager: q.get('fieldManager') ?? undefined,
    fieldValidation: (fv ?? undefined) as FieldValidation | undefined,
    dryRun: dryRun === 'All',
    force: isTrue(q.get('force')),
  };
}

function deleteOptions(q: URLSearchParams, body: unknown): DeleteOptions {
  const b = (isObject(body) ? body : {}) as DeleteOptions & { orphanDependents?: boolean };
  const grace = q.get('gracePeriodSeconds');
  const policy = q.get('propagationPolicy') ?? b.propagationPolicy ?? (b.orphanDependents ? 'Orphan' : undefined);
  if (policy !== undefined && policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
    throw errors.badRequest(`propagationPolicy must be Background, Foreground or Orphan, got "${policy}"`);
  }
  const gracePeriodSeconds = grace !== null ? Number(grace) : b.gracePeriodSeconds;
  if (gracePeriodSeconds !== undefined && !(Number.isInteger(gracePeriodSeconds) && gracePeriodSeconds >= 0)) {
    throw errors.badRequest(`gracePeriodSeconds must be a non-negative integer, got "${String(gracePeriodSeconds)}"`);
  }
  return {
    gracePeriodSeconds,
    propagationPolicy: policy as PropagationPolicy | undefined,
    preconditions: b.preconditions,
    dryRun: q.get('dryRun') === 'All' || (b as { dryRun?: string[] }).dryRun?.includes('All'),
  };
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-cache, private',
  });
  res.end(text);
}

const successStatus = (code: number) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code });
