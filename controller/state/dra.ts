// The DRA objects of cluster state (resource.k8s.io/v1 ResourceSlices, ResourceClaims, ResourceClaimTemplates,
// DeviceClasses), parsed as they arrive. Watched only when IGNORE_DRA_REQUESTS is false (controller/state/feed.ts).
// An object that does not parse is logged with the field at fault and left out; a pod whose claim, template or
// class is then missing gets a DRA error naming it, so nothing is allocated from a half-understood object.
import {
  formatFieldError,
  parseDeviceClass,
  parseResourceClaim,
  parseResourceClaimTemplate,
  parseResourceSlice,
  type DraState,
  type FieldError,
} from '../../engine/index.ts';

import type { KubeObject } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import type { Change } from './changes.ts';
import { ReportedOnce } from './reported.ts';

type DraKind = 'ResourceSlice' | 'ResourceClaim' | 'ResourceClaimTemplate' | 'DeviceClass';

const keyOf = (o: KubeObject): string =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : `${o.metadata.name}`;

const PARSERS = {
  ResourceSlice: parseResourceSlice,
  ResourceClaim: parseResourceClaim,
  ResourceClaimTemplate: parseResourceClaimTemplate,
  DeviceClass: parseDeviceClass,
} as const;

export class DraObjects {
  private readonly objects: Record<DraKind, Map<string, unknown>> = {
    ResourceSlice: new Map(),
    ResourceClaim: new Map(),
    ResourceClaimTemplate: new Map(),
    DeviceClass: new Map(),
  };
  private cached: DraState | undefined;
  private readonly reported = new ReportedOnce();

  constructor(
    private readonly log: Logger,
    private readonly changed: (c: Change) => void = () => {},
  ) {}

  apply(kind: DraKind, obj: KubeObject): void {
    const key = keyOf(obj);
    this.cached = undefined;
    const r = PARSERS[kind]({ ...obj, kind, apiVersion: obj.apiVersion ?? 'resource.k8s.io/v1' });
    if (!r.ok) {
      this.objects[kind].delete(key);
      this.problem(kind, key, r.errors);
      return;
    }
    this.objects[kind].set(key, r.value);
    this.changed({
      kind,
      type: 'upsert',
      name: obj.metadata.name!,
      ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
      obj,
    });
  }

  remove(kind: DraKind, obj: KubeObject): void {
    if (!this.objects[kind].delete(keyOf(obj))) return;
    this.cached = undefined;
    this.changed({
      kind,
      type: 'delete',
      name: obj.metadata.name!,
      ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
      obj,
    });
  }

  state(): DraState {
    return (this.cached ??= {
      resourceSlices: [...this.objects.ResourceSlice.values()] as DraState['resourceSlices'],
      resourceClaims: [...this.objects.ResourceClaim.values()] as DraState['resourceClaims'],
      resourceClaimTemplates: [...this.objects.ResourceClaimTemplate.values()] as DraState['resourceClaimTemplates'],
      deviceClasses: [...this.objects.DeviceClass.values()] as DraState['deviceClasses'],
    });
  }

  private problem(kind: string, key: string, errors: readonly FieldError[]): void {
    const msg = errors.map(formatFieldError);
    const k = `${kind}/${key}/${msg.join('|')}`;
    if (!this.reported.first(k)) return;
    this.log.error({ [kind.toLowerCase()]: key, errors: msg }, `${kind} does not parse; left out of cluster state`);
  }
}
