// The simulated Kubernetes API server: the public facade of sim/apiserver.
//
//   const server = await startApiServer({ clock });
//   server.url                      http://127.0.0.1:<port> for client-node / kubectl
//   server.token                    the bearer token requests must carry (kubeConfigFor(server) has it)
//   server.store                    observation: get / list / subscribe (frozen objects)
//   server.api                      in-process writes with full API semantics (never fault-injected)
//   server.faults, server.requests  failure drills and the HTTP request log
//   server.addValidator(kind, fn)   validation hook per kind (422 Invalid on field errors)
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../controller/operator/clock.ts';
import { Api } from './api.ts';
import { MAX_BODY_BYTES } from './body.ts';
import { selfSignedCert } from './cert.ts';
import type { VersionInfo } from './discovery.ts';
import { Faults, RequestLog } from './faults.ts';
import { HttpFront } from './http.ts';
import { seededRandom } from './ids.ts';
import type { Validator } from './registry.ts';
import { BUILTIN_RESOURCES, ResourceTable, type ResourceInfo } from './resources.ts';
import { Store } from './store.ts';

export interface ApiServerOptions {
  readonly clock: Clock;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: an ephemeral port. */
  readonly port?: number;
  /** Wall-clock ms between watch heartbeats (default 10,000; client-node gives up after 30 s of silence). */
  readonly heartbeatMs?: number;
  /** How many changes watches can resume from (default 10,000); older resourceVersions get 410. */
  readonly eventWindow?: number;
  /** Seed for uids and generated names (default 1). */
  readonly seed?: number;
  /** Kinds served besides the built-in table (see resource() in resources.ts). */
  readonly extraResources?: readonly ResourceInfo[];
  /** API groups left out of the built-in table, as on an older server (for example `resource.k8s.io` before 1.34). */
  readonly unservedGroups?: readonly string[];
  /** What /version reports (default 1.32). */
  readonly version?: VersionInfo;
  /** Namespaces that exist from the start (default default, kube-system, kube-public, kube-node-lease). */
  readonly namespaces?: readonly string[];
  /** Unexpected errors (bugs, failing subscribers); default console.error. */
  readonly onError?: (err: unknown) => void;
  /**
   * The bearer token every request must carry (default: a random one, see ApiServer.token); false turns
   * authentication off (any caller that can reach the port may read and write).
   */
  readonly token?: string | false;
  /**
   * Serve https with a self-signed certificate made at start-up (ApiServer.ca; kubeConfigFor trusts it).
   * kubectl sends a bearer token only over https, so a server for kubectl users needs this. Default false.
   */
  readonly tls?: boolean;
  /** Request bodies larger than this are refused with 413 (default 3 MiB, the real API server's limit). */
  readonly maxBodyBytes?: number;
  /** A watcher whose unsent live events exceed this many bytes is dropped (default 16 MiB). */
  readonly watchBufferBytes?: number;
}

export interface ApiServer {
  readonly url: string;
  /** The bearer token requests must carry; undefined when authentication is off. */
  readonly token: string | undefined;
  /** The server's certificate (PEM) when it serves https: the CA clients should trust. */
  readonly ca: string | undefined;
  readonly store: Store;
  readonly api: Api;
  readonly resources: ResourceTable;
  readonly faults: Faults;
  readonly requests: RequestLog;
  addValidator(resource: string, fn: Validator): () => void;
  /** Open watch streams. */
  openWatches(): number;
  /** Watch streams dropped because their client did not read fast enough. */
  droppedWatches(): number;
  /** What GET /metrics answers (`kubectl get --raw /metrics`): the simulator hands it the controller's metrics. */
  serveMetrics(text: () => Promise<string>): void;
  close(): Promise<void>;
}

const DEFAULT_WATCH_BUFFER_BYTES = 16 * 1024 * 1024;

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Store and Api without HTTP, for in-process use. */
export function createApi(
  opts: Pick<
    ApiServerOptions,
    'clock' | 'eventWindow' | 'seed' | 'extraResources' | 'unservedGroups' | 'namespaces' | 'onError'
  >,
): Api {
  const onError = opts.onError ?? ((err: unknown) => console.error('sim apiserver:', err));
  const unserved = new Set(opts.unservedGroups ?? []);
  const resources = new ResourceTable([
    ...BUILTIN_RESOURCES.filter((r) => !unserved.has(r.group)),
    ...(opts.extraResources ?? []),
  ]);
  const store = new Store({
    ...(opts.eventWindow !== undefined ? { eventWindow: opts.eventWindow } : {}),
    onListenerError: onError,
  });
  const api = new Api({ clock: opts.clock, resources, store, random: seededRandom(opts.seed ?? 1) });
  for (const ns of opts.namespaces ?? DEFAULT_NAMESPACES)
    api.create('namespaces', undefined, { metadata: { name: ns } });
  return api;
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const onError = opts.onError ?? ((err: unknown) => console.error('sim apiserver:', err));
  const api = createApi({ ...opts, onError });
  const faults = new Faults((name) => api.resources.resolve(name).key);
  const requests = new RequestLog();
  const token = opts.token === false ? undefined : (opts.token ?? randomBytes(32).toString('base64url'));
  const host = opts.host ?? '127.0.0.1';
  const tls = opts.tls ? selfSignedCert(host) : undefined;
  const front = new HttpFront(api, faults, requests, {
    host,
    port: opts.port ?? 0,
    heartbeatMs: opts.heartbeatMs ?? 10_000,
    version: opts.version ?? { major: '1', minor: '32' },
    onError,
    token,
    maxBodyBytes: opts.maxBodyBytes ?? MAX_BODY_BYTES,
    watchBufferBytes: opts.watchBufferBytes ?? DEFAULT_WATCH_BUFFER_BYTES,
    tls,
  });
  await front.listen();
  return {
    url: front.url,
    token,
    ca: tls?.cert,
    store: api.store,
    api,
    resources: api.resources,
    faults,
    requests,
    addValidator: (resource, fn) => api.addValidator(resource, fn),
    openWatches: () => front.hub.count(),
    droppedWatches: () => front.hub.dropped,
    serveMetrics: (text) => {
      front.metrics = text;
    },
    close: () => front.close(),
  };
}

export { Api } from './api.ts';
export { MAX_BODY_BYTES, MAX_BODY_DEPTH } from './body.ts';
export type { DeleteOptions, PropagationPolicy } from './deletion.ts';
export { ApiError, errors, type Status } from './errors.ts';
export { MULTIPLE_PDBS_MESSAGE, PDB_VIOLATION_MESSAGE } from './eviction.ts';
export type { FailRule, Faults, RequestLog, RequestRecord, Verb } from './faults.ts';
export { computePdbStatus, isPodReady } from './pdb.ts';
export type { AdmissionRequest, FieldValidation, ListOptions, PatchType, Validator, WriteOptions } from './registry.ts';
export { BUILTIN_RESOURCES, ResourceTable, type ResourceInfo } from './resources.ts';
export { matchesLabelSelector, parseLabelSelector, type LabelSelectorObject } from './selectors.ts';
export type { ListFilter, ObjectRef, Store } from './store.ts';
export {
  draft,
  type FieldError,
  type KObject,
  type OwnerReference,
  type StoreEvent,
} from './types.ts';
