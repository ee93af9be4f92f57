// resource.k8s.io/v1 objects (ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceClass) -> domain DRA
// types. Malformed fields are errors naming the object and the field. Features the engine does not evaluate
// are not errors of the object: they are recorded as `unsupported` with the reason, and a pod that depends on
// them is not provisioned, with that reason (docs/solver.md, "DRA").
import type {
  AllocatedDevice,
  ClaimSpec,
  CounterSet,
  Device,
  DeviceAttribute,
  DeviceClass,
  DeviceCounterConsumption,
  DeviceRequest,
  DeviceSelector,
  ResourceClaim,
  ResourceClaimTemplate,
  ResourceSlice,
} from '../domain/dra.ts';
import { parseQuantity, unitValue } from '../domain/quantity.ts';
import { parseSelector } from '../dra/cel.ts';
import { at, Decoder, type Obj } from './decode.ts';
import { fail, isRecord, objectRef, ok, show, type PathSeg, type Result } from './errors.ts';
import { nodeSelectorTerm } from './selectors.ts';

type P = readonly PathSeg[];

function start(obj: unknown, kind: string): { d: Decoder; o?: Obj } {
  const d = new Decoder(objectRef(obj, kind));
  if (!isRecord(obj)) {
    d.err([], 'is not an object');
    return { d };
  }
  const api = obj['apiVersion'];
  if (api !== undefined && api !== 'resource.k8s.io/v1')
    d.err(['apiVersion'], `${show(api)} is not supported; use resource.k8s.io/v1`);
  return { d, o: obj };
}

function quantity(d: Decoder, v: unknown, path: P): number | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') {
    d.err(path, `must be a quantity such as 16Gi, not ${show(v)}`);
    return undefined;
  }
  try {
    return unitValue(parseQuantity(v));
  } catch (e) {
    d.err(path, (e as Error).message);
    return undefined;
  }
}

const qualify = (driver: string, name: string) => (name.includes('/') ? name : `${driver}/${name}`);

function selectors(d: Decoder, v: unknown, path: P): DeviceSelector[] {
  return d.arr(v, path).map((s, i) => {
    const so = d.obj(s, [...path, i]);
    const cel = d.obj(at(so, 'cel'), [...path, i, 'cel']);
    if (!cel) {
      d.err([...path, i, 'cel'], 'is required (cel is the only selector type)');
      return { expression: '', unsupported: 'missing cel selector' };
    }
    return parseSelector(d.reqStr(cel['expression'], [...path, i, 'cel', 'expression']));
  });
}

function request(d: Decoder, v: unknown, path: P): DeviceRequest {
  const o = d.obj(v, path);
  const name = d.reqStr(at(o, 'name'), [...path, 'name']);
  const unsupported: string[] = [];
  if (at(o, 'firstAvailable') !== undefined)
    unsupported.push(`request ${name} uses firstAvailable (prioritized alternatives are not supported)`);
  const ex = d.obj(at(o, 'exactly'), [...path, 'exactly']);
  const ep = [...path, 'exactly'];
  if (!ex) {
    if (!unsupported.length) d.err(ep, 'is required (a request needs exactly or firstAvailable)');
    return {
      name,
      deviceClassName: '',
      allocationMode: 'ExactCount',
      count: 1,
      selectors: [],
      capacity: {},
      unsupported: unsupported.join('; ') || 'no exactly',
    };
  }
  const deviceClassName = d.reqStr(ex['deviceClassName'], [...ep, 'deviceClassName']);
  const allocationMode =
    d.oneOf(ex['allocationMode'], [...ep, 'allocationMode'], ['ExactCount', 'All'] as const) ?? 'ExactCount';
  const count = d.int(ex['count'], [...ep, 'count']) ?? 1;
  if (allocationMode === 'ExactCount' && count < 1) d.err([...ep, 'count'], `must be at least 1, not ${count}`);
  if (ex['adminAccess'] === true) unsupported.push(`request ${name} asks for adminAccess`);
  if (d.arr(ex['tolerations'], [...ep, 'tolerations']).length)
    unsupported.push(`request ${name} has device tolerations`);
  const capacity: Record<string, number> = {};
  const cap = d.obj(at(d.obj(ex['capacity'], [...ep, 'capacity']), 'requests'), [...ep, 'capacity', 'requests']);
  for (const [k, q] of Object.entries(cap ?? {})) {
    const n = quantity(d, q, [...ep, 'capacity', 'requests', { key: k }]);
    if (n !== undefined) capacity[k] = n;
  }
  return {
    name,
    deviceClassName,
    allocationMode,
    count,
    selectors: selectors(d, ex['selectors'], [...ep, 'selectors']),
    capacity,
    ...(unsupported.length ? { unsupported: unsupported.join('; ') } : {}),
  };
}

function claimSpec(d: Decoder, spec: Obj | undefined, path: P): ClaimSpec {
  const devices = d.obj(at(spec, 'devices'), [...path, 'devices']);
  const dp = [...path, 'devices'];
  const requests = d
    .arr(at(devices, 'requests'), [...dp, 'requests'])
    .map((r, i) => request(d, r, [...dp, 'requests', i]));
  const unsupported: string[] = [];
  if (d.arr(at(devices, 'constraints'), [...dp, 'constraints']).length)
    unsupported.push('spec.devices.constraints (matchAttribute / distinctAttribute) are not supported');
  // Capacity keys are qualified by the driver of the device they land on; requests name them as written.
  return { requests, ...(unsupported.length ? { unsupported: unsupported.join('; ') } : {}) };
}

function meta(d: Decoder, o: Obj): { name: string; namespace: string } {
  const m = d.obj(o['metadata'], ['metadata']);
  return {
    name: d.reqStr(at(m, 'name'), ['metadata', 'name']),
    namespace: d.str(at(m, 'namespace'), ['metadata', 'namespace']) || 'default',
  };
}

export function parseResourceClaim(obj: unknown): Result<ResourceClaim> {
  const { d, o } = start(obj, 'ResourceClaim');
  if (!o) return fail(d.errors);
  const { name, namespace } = meta(d, o);
  const spec = claimSpec(d, d.obj(o['spec'], ['spec']), ['spec']);
  const status = d.obj(o['status'], ['status']);
  const alloc = d.obj(at(status, 'allocation'), ['status', 'allocation']);
  const rp = ['status', 'allocation', 'devices', 'results'];
  const results: AllocatedDevice[] = d
    .arr(at(d.obj(at(alloc, 'devices'), ['status', 'allocation', 'devices']), 'results'), rp)
    .map((r, i) => {
      const ro = d.obj(r, [...rp, i]);
      const driver = d.reqStr(at(ro, 'driver'), [...rp, i, 'driver']);
      const consumed: Record<string, number> = {};
      for (const [k, q] of Object.entries(d.obj(at(ro, 'consumedCapacity'), [...rp, i, 'consumedCapacity']) ?? {})) {
        const n = quantity(d, q, [...rp, i, 'consumedCapacity', { key: k }]);
        if (n !== undefined) consumed[qualify(driver, k)] = n;
      }
      return {
        request: d.reqStr(at(ro, 'request'), [...rp, i, 'request']),
        driver,
        pool: d.reqStr(at(ro, 'pool'), [...rp, i, 'pool']),
        device: d.reqStr(at(ro, 'device'), [...rp, i, 'device']),
        ...(Object.keys(consumed).length ? { consumedCapacity: consumed } : {}),
      };
    });
  const reservedFor = d
    .arr(at(status, 'reservedFor'), ['status', 'reservedFor'])
    .map((r, i) => d.reqStr(at(d.obj(r, ['status', 'reservedFor', i]), 'uid'), ['status', 'reservedFor', i, 'uid']));
  const claim: ResourceClaim = {
    namespace,
    name,
    ...spec,
    reservedFor,
    ...(alloc ? { allocation: { devices: results } } : {}),
  };
  return d.errors.length ? fail(d.errors) : ok(claim);
}

export function parseResourceClaimTemplate(obj: unknown): Result<ResourceClaimTemplate> {
  const { d, o } = start(obj, 'ResourceClaimTemplate');
  if (!o) return fail(d.errors);
  const { name, namespace } = meta(d, o);
  const inner = d.obj(at(d.obj(o['spec'], ['spec']), 'spec'), ['spec', 'spec']);
  const t: ResourceClaimTemplate = { namespace, name, ...claimSpec(d, inner, ['spec', 'spec']) };
  return d.errors.length ? fail(d.errors) : ok(t);
}

function counterMap(d: Decoder, v: unknown, path: P): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, c] of Object.entries(d.obj(v, path) ?? {})) {
    const n = quantity(d, at(d.obj(c, [...path, { key: k }]), 'value'), [...path, { key: k }, 'value']);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

function device(d: Decoder, driver: string, v: unknown, path: P): Device {
  const o = d.obj(v, path);
  const name = d.reqStr(at(o, 'name'), [...path, 'name']);
  const attributes: Record<string, DeviceAttribute> = {};
  for (const [k, a] of Object.entries(d.obj(at(o, 'attributes'), [...path, 'attributes']) ?? {})) {
    const ap = [...path, 'attributes', { key: k }];
    const ao = d.obj(a, ap);
    const kinds = (['string', 'int', 'bool', 'version'] as const).filter((x) => at(ao, x) !== undefined);
    if (kinds.length !== 1) {
      d.err(ap, `must set exactly one of string, int, bool, version (has ${kinds.length ? kinds.join(', ') : 'none'})`);
      continue;
    }
    const kind = kinds[0]!;
    const value =
      kind === 'int'
        ? d.int(ao!['int'], [...ap, 'int'])
        : kind === 'bool'
          ? d.bool(ao!['bool'], [...ap, 'bool'])
          : d.str(ao![kind], [...ap, kind]);
    if (value !== undefined) attributes[qualify(driver, k)] = { kind, value };
  }
  const capacity: Record<string, number> = {};
  for (const [k, c] of Object.entries(d.obj(at(o, 'capacity'), [...path, 'capacity']) ?? {})) {
    const cp = [...path, 'capacity', { key: k }];
    const co = d.obj(c, cp);
    if (at(co, 'requestPolicy') !== undefined)
      d.err(
        [...cp, 'requestPolicy'],
        'is not supported by the engine (request rounding and limits would change what a claim consumes)',
      );
    const n = quantity(d, at(co, 'value'), [...cp, 'value']);
    if (n !== undefined) capacity[qualify(driver, k)] = n;
  }
  for (const f of [
    'nodeName',
    'nodeSelector',
    'allNodes',
    'bindsToNode',
    'bindingConditions',
    'bindingFailureConditions',
  ]) {
    if (at(o, f) !== undefined && at(o, f) !== false)
      d.err([...path, f], 'is not supported (per-device node selection and binding conditions)');
  }
  if (d.arr(at(o, 'taints'), [...path, 'taints']).length) d.err([...path, 'taints'], 'device taints are not supported');
  const consumesCounters: DeviceCounterConsumption[] = d
    .arr(at(o, 'consumesCounters'), [...path, 'consumesCounters'])
    .map((c, i) => {
      const co = d.obj(c, [...path, 'consumesCounters', i]);
      return {
        counterSet: d.reqStr(at(co, 'counterSet'), [...path, 'consumesCounters', i, 'counterSet']),
        counters: counterMap(d, at(co, 'counters'), [...path, 'consumesCounters', i, 'counters']),
      };
    });
  return {
    name,
    attributes,
    capacity,
    allowMultipleAllocations: d.bool(at(o, 'allowMultipleAllocations'), [...path, 'allowMultipleAllocations']) ?? false,
    consumesCounters,
  };
}

export function parseResourceSlice(obj: unknown): Result<ResourceSlice> {
  const { d, o } = start(obj, 'ResourceSlice');
  if (!o) return fail(d.errors);
  const { name } = meta(d, o);
  const spec = d.obj(o['spec'], ['spec']);
  if (!spec) d.err(['spec'], 'is required but missing');
  const driver = d.reqStr(at(spec, 'driver'), ['spec', 'driver']);
  const po = d.obj(at(spec, 'pool'), ['spec', 'pool']);
  if (!po) d.err(['spec', 'pool'], 'is required but missing');
  const pool = {
    name: d.reqStr(at(po, 'name'), ['spec', 'pool', 'name']),
    generation: d.int(at(po, 'generation'), ['spec', 'pool', 'generation']) ?? 0,
    resourceSliceCount: d.int(at(po, 'resourceSliceCount'), ['spec', 'pool', 'resourceSliceCount']) ?? 1,
  };
  const nodeName = d.str(at(spec, 'nodeName'), ['spec', 'nodeName']) || undefined;
  const nsel = d.obj(at(spec, 'nodeSelector'), ['spec', 'nodeSelector']);
  const nodeSelector = nsel
    ? d
        .arr(nsel['nodeSelectorTerms'], ['spec', 'nodeSelector', 'nodeSelectorTerms'])
        .map((t, i) => nodeSelectorTerm(d, t, ['spec', 'nodeSelector', 'nodeSelectorTerms', i]))
    : undefined;
  const allNodes = d.bool(at(spec, 'allNodes'), ['spec', 'allNodes']) ?? false;
  if (at(spec, 'perDeviceNodeSelection') === true)
    d.err(['spec', 'perDeviceNodeSelection'], "is not supported (devices must share the slice's node selection)");
  const set = [nodeName !== undefined, nodeSelector !== undefined, allNodes].filter(Boolean).length;
  if (set !== 1 && at(spec, 'perDeviceNodeSelection') !== true)
    d.err(['spec'], `must set exactly one of nodeName, nodeSelector, allNodes (has ${set})`);
  const devices = d
    .arr(at(spec, 'devices'), ['spec', 'devices'])
    .map((x, i) => device(d, driver, x, ['spec', 'devices', i]));
  const sharedCounters: CounterSet[] = d.arr(at(spec, 'sharedCounters'), ['spec', 'sharedCounters']).map((c, i) => {
    const co = d.obj(c, ['spec', 'sharedCounters', i]);
    return {
      name: d.reqStr(at(co, 'name'), ['spec', 'sharedCounters', i, 'name']),
      counters: counterMap(d, at(co, 'counters'), ['spec', 'sharedCounters', i, 'counters']),
    };
  });
  const slice: ResourceSlice = {
    name,
    driver,
    pool,
    devices,
    sharedCounters,
    ...(nodeName !== undefined ? { nodeName } : {}),
    ...(nodeSelector ? { nodeSelector } : {}),
    ...(allNodes ? { allNodes } : {}),
  };
  return d.errors.length ? fail(d.errors) : ok(slice);
}

export function parseDeviceClass(obj: unknown): Result<DeviceClass> {
  const { d, o } = start(obj, 'DeviceClass');
  if (!o) return fail(d.errors);
  const { name } = meta(d, o);
  const spec = d.obj(o['spec'], ['spec']);
  const dc: DeviceClass = { name, selectors: selectors(d, at(spec, 'selectors'), ['spec', 'selectors']) };
  return d.errors.length ? fail(d.errors) : ok(dc);
}
