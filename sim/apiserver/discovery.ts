// Discovery and OpenAPI documents, built from the resource table.
//
// Legacy discovery (/api, /apis, /api/v1, /apis/<g>/<v>) is what kubectl 1.20-1.33 and client-node's
// KubernetesObjectApi read; kubectl asks for aggregated discovery first but accepts these. The OpenAPI v3
// documents are stubs with one purpose (docs/stack.md §6): declaring the fieldValidation parameter on each
// kind's PATCH operation, which is what makes plain `kubectl apply` use server-side field validation
// instead of downloading schemas.
import { stableHash } from './ids.ts';
import { openApiSchemas, swaggerDefinitions } from './openapischemas.ts';
import type { ResourceInfo, ResourceTable } from './resources.ts';
import type { JsonObject } from './types.ts';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export interface VersionInfo {
  readonly major: string;
  readonly minor: string;
}

export function versionDoc(v: VersionInfo): JsonObject {
  return {
    major: v.major,
    minor: v.minor,
    gitVersion: `v${v.major}.${v.minor}.0`,
    gitCommit: 'karpenter-ts-sim',
    gitTreeState: 'clean',
    buildDate: '2025-01-01T00:00:00Z',
    goVersion: 'go1.23.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

export function apiVersionsDoc(host: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }],
  };
}

function groupDoc(table: ResourceTable, group: string): JsonObject {
  const versions = table
    .groupVersions()
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
}

export function apiGroupListDoc(table: ResourceTable): JsonObject {
  const groups = [
    ...new Set(
      table
        .groupVersions()
        .map((gv) => gv.group)
        .filter((g) => g !== ''),
    ),
  ];
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map((g) => {
      const { kind: _k, apiVersion: _a, ...rest } = groupDoc(table, g);
      return rest;
    }),
  };
}

export function apiGroupDoc(table: ResourceTable, group: string): JsonObject | undefined {
  return table.groupVersions().some((gv) => gv.group === group) ? groupDoc(table, group) : undefined;
}

function subresourceEntries(r: ResourceInfo): JsonObject[] {
  return r.subresources.map((sub) => {
    const base = { name: `${r.plural}/${sub}`, singularName: '', namespaced: r.namespaced };
    switch (sub) {
      case 'status':
        return { ...base, kind: r.kind, verbs: ['get', 'patch', 'update'] };
      case 'scale':
        return { ...base, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] };
      case 'eviction':
        return { ...base, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] };
      case 'binding':
        return { ...base, kind: 'Binding', verbs: ['create'] };
    }
  });
}

export function resourceListDoc(table: ResourceTable, group: string, version: string): JsonObject | undefined {
  const rs = table.all.filter((r) => r.group === group && r.version === version);
  if (!rs.length) return undefined;
  const resources: JsonObject[] = [];
  if (group === '')
    resources.push({ name: 'bindings', singularName: 'binding', namespaced: true, kind: 'Binding', verbs: ['create'] });
  for (const r of rs) {
    resources.push({
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: VERBS,
      ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
      ...(r.categories.length ? { categories: r.categories } : {}),
      storageVersionHash: stableHash(r.key),
    });
    resources.push(...subresourceEntries(r));
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

const gvPath = (group: string, version: string): string => (group ? `apis/${group}/${version}` : `api/${version}`);

export function openApiRootDoc(table: ResourceTable): JsonObject {
  const paths: JsonObject = {};
  for (const { group, version } of table.groupVersions()) {
    const p = gvPath(group, version);
    paths[p] = {
      serverRelativeURL: `/openapi/v3/${p}?hash=${stableHash(openApiGroupVersionDoc(table, group, version))}`,
    };
  }
  return { paths };
}

export function openApiGroupVersionDoc(table: ResourceTable, group: string, version: string): JsonObject | undefined {
  const rs = table.all.filter((r) => r.group === group && r.version === version);
  if (!rs.length) return undefined;
  const paths: JsonObject = {};
  const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  for (const r of rs) {
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const op = (action: string) => ({
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
      parameters: [param('dryRun'), param('fieldManager'), param('fieldValidation')],
      responses: { '200': { description: 'OK' } },
    });
    const base = `/${gvPath(group, version)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}`;
    paths[base] = { post: op('post') };
    paths[`${base}/{name}`] = {
      put: op('put'),
      patch: { ...op('patch'), parameters: [...op('patch').parameters, param('force')] },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1' },
    paths,
    components: { schemas: openApiSchemas(table) },
  };
}

/** /openapi/v2: every kind's schema as a Swagger 2.0 definition (kubectl explain --output plaintext-openapiv2). */
export function swaggerDoc(table: ResourceTable): JsonObject {
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'v1' },
    paths: {},
    definitions: swaggerDefinitions(openApiSchemas(table)),
  };
}
