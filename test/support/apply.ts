// `kubectl apply` for tests that write through the simulated API server in process (no HTTP): each object of a
// YAML text is created, or merge-patched (spec, labels, annotations) when it exists.
import type { Api, KObject } from '../../sim/apiserver/index.ts';
import { yamlObjects } from '../../sim/environment.ts';

/**
 * Applies every object of `yaml` through `api`. `resourceOf` maps the kinds a test may apply to their store
 * resources (an object of another kind is an error naming it); a namespaced object without a namespace goes to
 * `default`.
 */
export function applyToApi(api: Api, resourceOf: Readonly<Record<string, string>>, yaml: string): KObject[] {
  return yamlObjects<KObject>(yaml).map((obj) => {
    const resource = resourceOf[String(obj.kind)];
    if (!resource) throw new Error(`apply: unsupported kind ${String(obj.kind)} (${String(obj.metadata?.name)})`);
    const ns = api.resources.resolve(resource).namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    return api.find(resource, ns, obj.metadata.name!)
      ? api.patch(resource, ns, obj.metadata.name!, 'merge', {
          spec: obj['spec'] ?? null,
          metadata: { labels: obj.metadata.labels ?? null, annotations: obj.metadata.annotations ?? null },
        })
      : api.create(resource, ns, { ...obj, metadata: { ...obj.metadata, ...(ns ? { namespace: ns } : {}) } });
  });
}
