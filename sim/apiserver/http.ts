// The HTTP face of the simulated API server: node:http on loopback, routing each request to the
// in-process Api, with the request log, fault injection and latency in front. Everything answers JSON;
// failures answer a metav1 Status with the right code.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { Api } from './api.ts';
import type { DeleteOptions, PropagationPolicy } from './deletion.ts';
import { apiGroupDoc, apiGroupListDoc, apiVersionsDoc, openApiGroupVersionDoc, openApiRootDoc, resourceListDoc, versionDoc, type VersionInfo } from './discovery.ts';
import { ApiError, errors } from './errors.ts';
import type { Faults, RequestInfo, RequestLog, Verb } from './faults.ts';
import type { FieldValidation, PatchType, WriteOptions } from './registry.ts';
import { route, type Route } from './routes.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { getScale, writeScale } from './subresources.ts';
import { toTable, wantsTable, type IncludeObject } from './table.ts';
import { isObject, type JsonObject } from './types.ts';
import { WatchHub } from './watch.ts';

export interface HttpOptions {
  readonly host: string;
  readonly port: number;
  readonly heartbeatMs: number;
  readonly version: VersionInfo;
  readonly onError: (err: unknown) => void;
}

type ResourceRoute = Extract<Route, { kind: 'resource' }>;

const PATCH_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/json-patch+json': 'json',
  'application/apply-patch+yaml': 'apply',
};

const MAX_BODY = 16 << 20;

export class HttpFront {
  readonly hub: WatchHub;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor(private readonly api: Api, private readonly faults: Faults, private readonly log: RequestLog, private readonly opts: HttpOptions) {
    this.hub = new WatchHub(api.store, () => api.clock.now(), opts.heartbeatMs);
    faults.dropWatchesHook = (gone) => this.hub.dropAll(gone);
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    this.server = server;
    const addr = server.address() as AddressInfo;
    this.url = `http://${this.opts.host}:${addr.port}`;
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
      time: this.api.clock.now(), method, path: url.pathname, query: url.search.replace(/^\?/, ''),
      userAgent: req.headers['user-agent'] ?? '', ...info, status: 0,
    };
    this.log.add(rec);
    try {
      const raw = await readBody(req);
      const delay = this.faults.latencyFor(info);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      const injected = this.faults.take(info);
      if (injected) throw injected;
      if (info.verb === 'watch' && this.faults.goneWatches > 0) {
        this.faults.goneWatches--;
        throw errors.gone('too old resource version (forced by the simulator)');
      }
      this.dispatch(rt, method, req, res, url.searchParams, raw);
    } catch (e) {
      this.fail(res, e);
    }
    rec.status = res.statusCode;
  }

  private fail(res: ServerResponse, e: unknown): void {
    const err = e instanceof ApiError ? e : errors.internal((e as Error)?.message ?? String(e));
    if (!(e instanceof ApiError)) this.opts.onError(e);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    send(res, err.code, err.toStatus());
  }

  private dispatch(rt: Route, method: string, req: IncomingMessage, res: ServerResponse, q: URLSearchParams, raw: string): void {
    const table = this.api.resources;
    const get = (doc: JsonObject | undefined): void => {
      if (method !== 'GET') throw errors.methodNotAllowed(method, 'discovery');
      if (!doc) throw errors.pathNotFound(req.url ?? '');
      send(res, 200, doc);
    };
    switch (rt.kind) {
      case 'version': return get(versionDoc(this.opts.version));
      case 'health': res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'); return;
      case 'api': return get(apiVersionsDoc(new URL(this.url).host));
      case 'apis': return get(apiGroupListDoc(table));
      case 'group': return get(apiGroupDoc(table, rt.group));
      case 'resourceList': return get(resourceListDoc(table, rt.group, rt.version));
      case 'openapi': return get(openApiRootDoc(table));
      case 'openapiGroupVersion': return get(openApiGroupVersionDoc(table, rt.group, rt.version));
      case 'bindings': {
        if (method !== 'POST') throw errors.methodNotAllowed(method, 'bindings');
        const body = parseJson(raw);
        const name = isObject(body) && isObject(body.metadata) ? String(body.metadata.name ?? '') : '';
        this.api.bind(rt.namespace, name, isObject(body) && isObject(body.target) ? String(body.target.name ?? '') : '');
        return send(res, 201, successStatus(201));
      }
      case 'notFound': throw errors.pathNotFound(req.url ?? '');
      case 'resource': return this.resource(rt, method, req, res, q, raw);
    }
  }

  private resource(rt: ResourceRoute, method: string, req: IncomingMessage, res: ServerResponse, q: URLSearchParams, raw: string): void {
    const { r, name, sub } = rt;
    const ns = r.namespaced ? rt.namespace : undefined;
    const api = this.api;
    const now = api.clock.now();
    const asTable = wantsTable(req.headers.accept);
    const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
    const wopts = writeOptions(q, sub);
    if (sub !== undefined && sub !== 'status' && !r.subresources.includes(sub as never)) throw errors.pathNotFound(req.url ?? '');
    if (method === 'GET') {
      if (rt.watch || isTrue(q.get('watch'))) {
        if (name !== undefined) q.set('fieldSelector', [q.get('fieldSelector'), `metadata.name=${name}`].filter(Boolean).join(','));
        this.hub.open(r, res, {
          namespace: ns,
          filter: { namespace: ns, labels: parseLabelSelector(q.get('labelSelector')), fields: parseFieldSelector(q.get('fieldSelector')) },
          resourceVersion: q.get('resourceVersion') ?? undefined, bookmarks: isTrue(q.get('allowWatchBookmarks')), table: asTable,
          timeoutSeconds: q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined,
        });
        return;
      }
      if (name === undefined) {
        const list = api.list(r, ns, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
        if (asTable) return send(res, 200, toTable(r, list.items, now, list.resourceVersion, include));
        return send(res, 200, { kind: `${r.kind}List`, apiVersion: r.apiVersion, metadata: { resourceVersion: list.resourceVersion }, items: list.items });
      }
      if (sub === 'scale') return send(res, 200, getScale(api, r, ns ?? '', name));
      if (sub !== undefined && sub !== 'status') throw errors.methodNotAllowed(method, `${r.key}/${sub}`);
      const obj = api.get(r, ns, name);
      return send(res, 200, asTable ? toTable(r, [obj], now, obj.metadata.resourceVersion ?? '', include) : obj);
    }
    if (method === 'POST') {
      if (name === undefined) return send(res, 201, api.create(r, ns, parseJson(raw), wopts));
      if (sub === 'eviction') return send(res, 201, api.evict(ns ?? '', name, parseJson(raw)));
      if (sub === 'binding') {
        const body = parseJson(raw);
        api.bind(ns ?? '', name, isObject(body) && isObject(body.target) ? String(body.target.name ?? '') : '');
        return send(res, 201, successStatus(201));
      }
      throw errors.methodNotAllowed(method, `${r.key}${sub ? `/${sub}` : ''}`);
    }
    if (name === undefined) {
      if (method !== 'DELETE') throw errors.methodNotAllowed(method, r.key);
      const items = api.deleteCollection(r, ns, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined }, deleteOptions(q, raw));
      return send(res, 200, { kind: `${r.kind}List`, apiVersion: r.apiVersion, metadata: { resourceVersion: String(api.store.resourceVersion()) }, items });
    }
    if (method === 'PUT') {
      if (sub === 'scale') return send(res, 200, writeScale(api, r, ns ?? '', name, parseJson(raw)));
      return send(res, 200, api.update(r, ns, name, parseJson(raw), wopts));
    }
    if (method === 'PATCH') {
      const ctype = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      const type = PATCH_TYPES[ctype];
      if (!type) throw errors.unsupportedMediaType(ctype || '(none)');
      const body = type === 'apply' ? parseYamlBody(raw) : parseJson(raw);
      if (sub === 'scale') return send(res, 200, writeScale(api, r, ns ?? '', name, body, type));
      const existed = type === 'apply' && api.find(r, ns, name) !== undefined;
      const out = api.patch(r, ns, name, type, body, wopts);
      return send(res, type === 'apply' && !existed ? 201 : 200, out);
    }
    if (method === 'DELETE') {
      if (sub !== undefined) throw errors.methodNotAllowed(method, `${r.key}/${sub}`);
      return send(res, 200, api.delete(r, ns, name, deleteOptions(q, raw)));
    }
    throw errors.methodNotAllowed(method, r.key);
  }
}

function requestInfo(rt: Route, method: string, q: URLSearchParams): RequestInfo {
  if (rt.kind === 'bindings') return { verb: 'create', resource: 'pods', subresource: 'binding', namespace: rt.namespace };
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
  if (fv !== null && fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore') throw errors.badRequest(`fieldValidation must be Strict, Warn or Ignore, got "${fv}"`);
  const dryRun = q.get('dryRun');
  if (dryRun !== null && dryRun !== 'All') throw errors.badRequest(`dryRun must be All, got "${dryRun}"`);
  return {
    subresource: sub === 'status' ? 'status' : undefined, fieldManager: q.get('fieldManager') ?? undefined,
    fieldValidation: (fv ?? undefined) as FieldValidation | undefined, dryRun: dryRun === 'All', force: isTrue(q.get('force')),
  };
}

function deleteOptions(q: URLSearchParams, raw: string): DeleteOptions {
  const body = raw.trim() ? parseJson(raw) : {};
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
  return { gracePeriodSeconds, propagationPolicy: policy as PropagationPolicy | undefined, preconditions: b.preconditions, dryRun: q.get('dryRun') === 'All' || (b as { dryRun?: string[] }).dryRun?.includes('All') };
}

function parseJson(raw: string): unknown {
  if (!raw.trim()) throw errors.badRequest('the request body is empty');
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw errors.badRequest(`the request body is not valid JSON: ${(e as Error).message}`);
  }
}

function parseYamlBody(raw: string): unknown {
  if (!raw.trim()) throw errors.badRequest('the request body is empty');
  try {
    return parseYaml(raw);
  } catch (e) {
    throw errors.badRequest(`the request body is not valid YAML: ${(e as Error).message}`);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(errors.badRequest('the request body is too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-cache, private' });
  res.end(text);
}

const successStatus = (code: number) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code });
