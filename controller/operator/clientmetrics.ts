// client-go's request metrics as Karpenter exports them (client_go_request_total by code and method,
// client_go_request_duration_seconds by verb, group, version, kind and subresource; the verb is the
// action: CREATE, LIST, GET, UPDATE, PATCH, DELETE), for the Kubernetes client's requests.
import type { Metrics } from './metrics.ts';

interface PathParts {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly subresource: string;
  readonly named: boolean;
}

/** /api/v1/namespaces/ns/pods/name/eviction -> core group, v1, pods, eviction; undefined for non-resource paths. */
function pathParts(path: string): PathParts | undefined {
  const seg = path.split('?')[0]!.split('/').filter(Boolean);
  let rest: string[];
  let group = '';
  let version: string | undefined;
  if (seg[0] === 'api') [version, ...rest] = seg.slice(1);
  else if (seg[0] === 'apis') [group = '', version, ...rest] = seg.slice(1);
  else return undefined;
  if (!version || !rest.length) return undefined;
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [kind = '', name, subresource = ''] = rest;
  return { group, version, kind, subresource, named: name !== undefined };
}

function verbOf(method: string, named: boolean): string {
  switch (method) {
    case 'POST':
      return 'CREATE';
    case 'GET':
      return named ? 'GET' : 'LIST';
    case 'PUT':
      return named ? 'UPDATE' : 'CREATE';
    default:
      return method;
  }
}

export function observeKubeRequest(metrics: Metrics, method: string, path: string, code: number, ms: number): void {
  metrics.clientRequests.inc({ code: String(code), method });
  const p = pathParts(path);
  if (!p) return;
  metrics.clientRequestDuration.observe(
    { verb: verbOf(method, p.named), group: p.group, version: p.version, kind: p.kind, subresource: p.subresource },
    ms / 1000,
  );
}
