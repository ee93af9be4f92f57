// The objects default topology spread deduces pod selectors from (engine/scheduling/defaultspread.ts):
// Services, ReplicaSets, StatefulSets and ReplicationControllers, watched only when SCHEDULER_CONFIG sets
// default constraints (Karpenter starts its Service informer lazily for the same reason). Objects that do not
// parse are logged with the field at fault and left out.
import {
  formatFieldError,
  ownerKey,
  parseServiceSelector,
  parseWorkloadSelector,
  type FieldError,
  type LabelSelector,
  type SelectorSources,
  type ServiceSelector,
  type WorkloadSelector,
} from '../../engine/index.ts';
import type { KubeObject } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import { namespacedChange, type Change } from './changes.ts';

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;

export class SelectorObjects {
  private readonly services = new Map<string, ServiceSelector>();
  private readonly owners = new Map<string, LabelSelector>();
  private cached: SelectorSources | undefined;

  constructor(private readonly deps: { log: Logger; changed: (c: Change) => void }) {}

  applyService(obj: KubeObject): void {
    const r = parseServiceSelector(obj);
    if (!r.ok) return this.problem('service', obj, r.errors);
    this.services.set(keyOf(obj), r.value);
    this.touch('Service', 'upsert', obj);
  }

  removeService(obj: KubeObject): void {
    if (this.services.delete(keyOf(obj))) this.touch('Service', 'delete', obj);
  }

  applyWorkload(kind: WorkloadSelector['kind'], obj: KubeObject): void {
    const r = parseWorkloadSelector(obj, kind);
    if (!r.ok) return this.problem(kind, obj, r.errors);
    this.owners.set(ownerKey(kind, r.value.namespace, r.value.name), r.value.selector);
    this.touch(kind, 'upsert', obj);
  }

  removeWorkload(kind: WorkloadSelector['kind'], obj: KubeObject): void {
    if (this.owners.delete(ownerKey(kind, obj.metadata.namespace ?? 'default', obj.metadata.name ?? '')))
      this.touch(kind, 'delete', obj);
  }

  /** The sources as the engine takes them (Services in name order, as a list read from the cache is). */
  sources(): SelectorSources {
    this.cached ??= {
      services: [...this.services.values()].sort((a, b) =>
        a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1,
      ),
      owners: new Map(this.owners),
    };
    return this.cached;
  }

  private touch(kind: Change['kind'], type: Change['type'], obj: KubeObject): void {
    this.cached = undefined;
    this.deps.changed(namespacedChange(kind, type, obj));
  }

  private problem(what: string, obj: KubeObject, errors: readonly FieldError[]): void {
    this.deps.log.error(
      { [what.toLowerCase()]: keyOf(obj), errors: errors.map(formatFieldError) },
      `${what} does not parse; its selector is left out of default topology spread`,
    );
  }
}
