// The schemas behind `kubectl explain` (and anything else reading /openapi/v2 or /openapi/v3): the
// Karpenter kinds from the CRDs this project installs (their openAPIV3Schema), the built-in kinds from
// @kubernetes/client-node's models (field names and types; the models carry no descriptions). Each kind
// carries x-kubernetes-group-version-kind, which is how kubectl finds it.
import * as k8s from '@kubernetes/client-node';
import { CRDS, renderCrd } from '../../engine/index.ts';
import type { ResourceTable } from './resources.ts';
import type { JsonObject } from './types.ts';

type Attr = { name: string; baseName: string; type: string; format: string };
type Model = { getAttributeTypeMap(): Attr[] };

const models = k8s as unknown as Record<string, Model | undefined>;
const PRIMITIVES: Readonly<Record<string, JsonObject>> = {
  string: { type: 'string' },
  number: { type: 'number' },
  boolean: { type: 'boolean' },
  Date: { type: 'string', format: 'date-time' },
  any: {},
  object: { type: 'object' },
  IntOrString: { 'x-kubernetes-int-or-string': true },
};

/** The client-node model of a built-in kind (V1Pod, EventsV1Event, ...). */
function modelName(group: string, kind: string): string | undefined {
  const candidates =
    group === 'events.k8s.io' ? [`EventsV1${kind}`] : kind === 'Event' ? ['CoreV1Event'] : [`V1${kind}`];
  return candidates.find((n) => typeof models[n]?.getAttributeTypeMap === 'function');
}

/** Converts client-node models into schemas named `io.k8s.<Model>`, referring to each other with $ref. */
class ModelSchemas {
  readonly out: Record<string, JsonObject> = {};

  ref(model: string): JsonObject {
    const name = `io.k8s.${model}`;
    if (!this.out[name]) {
      this.out[name] = { type: 'object' };
      const properties: JsonObject = {};
      for (const a of models[model]!.getAttributeTypeMap()) properties[a.baseName] = this.type(a.type.trim());
      this.out[name] = { type: 'object', properties };
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  type(t: string): JsonObject {
    const arr = /^Array<(.+)>$/.exec(t);
    if (arr) return { type: 'array', items: this.type(arr[1]!.trim()) };
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(t);
    if (map) return { type: 'object', additionalProperties: this.type(map[1]!.trim()) };
    if (PRIMITIVES[t]) return { ...PRIMITIVES[t] };
    if (typeof models[t]?.getAttributeTypeMap === 'function') return this.ref(t);
    return {};
  }
}

const gvk = (group: string, version: string, kind: string): JsonObject => ({
  'x-kubernetes-group-version-kind': [{ group, version, kind }],
});

/** Every schema, by name (`io.k8s.V1Pod`, `sh.karpenter.v1.NodePool`, ...); a kind's own schema carries its GVK. */
export function openApiSchemas(table: ResourceTable): Record<string, JsonObject> {
  const m = new ModelSchemas();
  const out: Record<string, JsonObject> = {};
  for (const def of CRDS) {
    const crd = renderCrd(def) as { spec: { versions: Array<{ schema: { openAPIV3Schema: JsonObject } }> } };
    const schema = structuredClone(crd.spec.versions[0]!.schema.openAPIV3Schema);
    (schema['properties'] as JsonObject)['metadata'] = m.ref('V1ObjectMeta');
    out[`${def.group.split('.').reverse().join('.')}.${def.version}.${def.kind}`] = {
      ...schema,
      ...gvk(def.group, def.version, def.kind),
    };
  }
  const crdGroups = new Set(CRDS.map((d) => d.group));
  for (const r of table.all) {
    if (crdGroups.has(r.group)) continue;
    const model = modelName(r.group, r.kind);
    const name = model ? `io.k8s.${model}` : `io.k8s.${r.group || 'core'}.${r.version}.${r.kind}`;
    if (model) m.ref(model);
    else m.out[name] = { type: 'object' };
    m.out[name] = {
      ...m.out[name],
      description: `${r.kind} (${r.group || 'core'}/${r.version})`,
      ...gvk(r.group, r.version, r.kind),
    };
  }
  return { ...m.out, ...out };
}

/** The same schemas as OpenAPI v2 definitions (`#/definitions/...` references). */
export function swaggerDefinitions(schemas: Record<string, JsonObject>): JsonObject {
  return JSON.parse(JSON.stringify(schemas).replaceAll('#/components/schemas/', '#/definitions/')) as JsonObject;
}
