// The simulated Kubernetes API server: the public facade of sim/apiserver.
//
//   const server = await startApiServer({ clock });
//   server.url                      http://127.0.0.1:<port> for client-node / kubectl
//   server.store                    observation: get / list / subscribe (frozen objects)
//   server.api                      in-process writes with full API semantics (never fault-injected)
//   server.faults, server.requests  failure drills and the HTTP request log
//   server.addValidator(kind, fn)   validation hook per kind (422 Invalid on field errors)
import type { Clock } from '../../controller/operator/clock.ts';
import { Api } from './api.ts';
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
}

export interface ApiServer {
  readonly url: string;
  readonly store: Store;
  readonly api: Api;
  readonly resources: ResourceTable;
  readonly faults: Faults;
  readonly requests: RequestLog;
  addValidator(resource: string, fn: Validator): () => void;
  /** Open watch streams. */
  openWatches(): number;
  close(): Promise<void>;
}

export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Store and Api without HTTP, for in-process use. */
export function createApi(opts: Pick<ApiServerOptions, 'clock' | 'eventWindow' | 'seed' | 'extraResources' | 'unservedGroups' | 'namespaces' | 'onError'>): Api {
  const onError = opts.onError ?? ((err: unknown) => console.error('sim apiserver:', err));
  const unserved = new Set(opts.unservedGroups ?? []);
  const resources = new ResourceTable([...BUILTIN_RESOURCES.filter((r) => !unserved.has(r.group)), ...(opts.extraResources ?? [])]);
  const store = new Store({ ...(opts.eventWindow !== undefined ? { eventWindow: opts.eventWindow } : {}), onListenerError: onError });
  const api = new Api({ clock: opts.clock, resources, store, random: seededRandom(opts.seed ?? 1) });
  for (const ns of opts.namespaces ?? DEFAULT_NAMESPACES) api.create('namespaces', undefined, { metadata: { name: ns } });
  return api;
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const onError = opts.onError ?? ((err: unknown) => console.error('sim apiserver:', err));
  const api = createApi({ ...opts, onError });
  const faults = new Faults((name) => api.resources.resolve(name).key);
  const requests = new RequestLog();
  const front = new HttpFront(api, faults, requests, {
    host: opts.host ?? '127.0.0.1', port: opts.port ?? 0, heartbeatMs: opts.heartbeatMs ?? 10_000,
    version: opts.version ?? { major: '1', minor: '32' }, onError,
  });
  await front.listen();
  return {
    url: front.url, store: api.store, api, resources: api.resources, faults, requests,
    addValidator: (resource, fn) => api.addValidator(resource, fn),
    openWatches: () => front.hub.count(),
    close: () => front.close(),
  };
}

export { Api } from './api.ts';
export type { DeleteOptions, PropagationPolicy } from './deletion.ts';
export { ApiError, errors, type Status } from './errors.ts';
export { MULTIPLE_PDBS_MESSAGE, PDB_VIOLATION_MESSAGE } from './eviction.ts';
export type { FailRule, FaultMatch, Faults, RequestLog, RequestRecord, Verb } from './faults.ts';
export { computePdbStatus, isPodReady } from './pdb.ts';
export type { AdmissionRequest, FieldValidation, ListOptions, PatchType, Validator, WriteOptions } from './registry.ts';
export { BUILTIN_RESOURCES, resource, ResourceTable, type ResourceInfo } from './resources.ts';
export { matchesLabelSelector, parseLabelSelector, type LabelSelectorObject } from './selectors.ts';
export type { ListFilter, ObjectRef, Store } from './store.ts';
export { draft, type FieldError, type KObject, type ObjectMeta, type OwnerReference, type StoreEvent } from './types.ts';
