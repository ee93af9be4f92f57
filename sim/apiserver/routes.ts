// URL paths to what they address. Resource paths follow the real server:
//   /api/v1/<plural>[/<name>[/<sub>]]                               cluster-scoped (or all namespaces)
//   /api/v1/namespaces/<ns>/<plural>[/<name>[/<sub>]]               namespaced
//   /apis/<group>/<version>/...                                     the same under a group
//   /api/v1/watch/...                                               the deprecated watch prefix
import type { ResourceInfo, ResourceTable } from './resources.ts';

export type Route =
  | { kind: 'version' | 'api' | 'apis' | 'openapi' | 'openapiV2' | 'health' | 'metrics' }
  | { kind: 'group'; group: string }
  | { kind: 'resourceList' | 'openapiGroupVersion'; group: string; version: string }
  | { kind: 'bindings'; namespace: string }
  | {
      kind: 'resource';
      r: ResourceInfo;
      namespace?: string | undefined;
      name?: string | undefined;
      sub?: string | undefined;
      watch: boolean;
    }
  | { kind: 'notFound' };

export function route(table: ResourceTable, path: string): Route {
  const seg = path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s));
  const [a, b, c, d] = seg;
  if (seg.length === 1 && a === 'version') return { kind: 'version' };
  if (seg.length === 1 && (a === 'healthz' || a === 'readyz' || a === 'livez')) return { kind: 'health' };
  if (seg.length === 1 && a === 'metrics') return { kind: 'metrics' };
  if (seg.length === 2 && a === 'openapi' && b === 'v2') return { kind: 'openapiV2' };
  if (a === 'openapi' && b === 'v3') {
    if (seg.length === 2) return { kind: 'openapi' };
    if (c === 'api' && seg.length === 4) return { kind: 'openapiGroupVersion', group: '', version: d! };
    if (c === 'apis' && seg.length === 5) return { kind: 'openapiGroupVersion', group: d!, version: seg[4]! };
    return { kind: 'notFound' };
  }
  if (a === 'api') {
    if (seg.length === 1) return { kind: 'api' };
    if (seg.length === 2) return { kind: 'resourceList', group: '', version: b! };
    return resourcePath(table, '', b!, seg.slice(2));
  }
  if (a === 'apis') {
    if (seg.length === 1) return { kind: 'apis' };
    if (seg.length === 2) return { kind: 'group', group: b! };
    if (seg.length === 3) return { kind: 'resourceList', group: b!, version: c! };
    return resourcePath(table, b!, c!, seg.slice(3));
  }
  return { kind: 'notFound' };
}

function resourcePath(table: ResourceTable, group: string, version: string, rest: string[]): Route {
  let watch = false;
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const inner = table.fromPath(group, version, rest[2]!);
    if (inner?.namespaced || (group === '' && rest[2] === 'bindings')) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
  }
  if (group === '' && namespace !== undefined && rest.length === 1 && rest[0] === 'bindings')
    return { kind: 'bindings', namespace };
  const [plural, name, sub, ...extra] = rest;
  const r = plural === undefined ? undefined : table.fromPath(group, version, plural);
  if (!r || extra.length) return { kind: 'notFound' };
  if (r.namespaced && namespace === undefined && name !== undefined) return { kind: 'notFound' };
  return { kind: 'resource', r, namespace, name, sub, watch };
}
