// Checks Karpenter makes beyond its CRD schema (its runtime validation: cron schedules that parse, taint
// key/effect pairs that are unique, quantities and durations that fit), and the object metadata rules the
// API server applies to every object. They run on values that already passed the schema.
import { parseCron } from '../disruption/cron.ts';
import { parseQuantity, isNegative, QuantityError } from '../domain/quantity.ts';
import { resourceValue } from '../domain/resources.ts';
import { parseGoDuration } from './duration.ts';
import { fieldError, isRecord, type FieldError, type PathSeg } from './errors.ts';
import { isDns1123Subdomain, labelKeyProblem, labelValueProblem } from './labels.ts';

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (isRecord(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function metadataErrors(obj: Obj, object: string): FieldError[] {
  const out: FieldError[] = [];
  const meta = obj['metadata'];
  if (!isRecord(meta))
    return [fieldError(object, ['metadata'], 'is required: every object needs metadata with a name')];
  const name = meta['name'];
  if (name === undefined) {
    if (typeof meta['generateName'] !== 'string')
      out.push(fieldError(object, ['metadata', 'name'], 'is required but missing'));
  } else if (typeof name !== 'string' || !isDns1123Subdomain(name)) {
    out.push(
      fieldError(
        object,
        ['metadata', 'name'],
        `"${String(name)}" is not a valid name: use lower-case letters, digits, "-" and ".", starting and ending with a letter or digit (at most 253 characters)`,
      ),
    );
  }
  for (const [k, v] of Object.entries(rec(meta['labels']))) {
    const path: PathSeg[] = ['metadata', 'labels', { key: k }];
    const p =
      labelKeyProblem(k) ??
      (typeof v === 'string' ? labelValueProblem(v) : `the value must be a string, not ${JSON.stringify(v)}`);
    if (p) out.push(fieldError(object, path, p));
  }
  for (const [k, v] of Object.entries(rec(meta['annotations']))) {
    if (typeof v !== 'string')
      out.push(
        fieldError(
          object,
          ['metadata', 'annotations', { key: k }],
          `the value must be a string, not ${JSON.stringify(v)}; quote it`,
        ),
      );
  }
  return out;
}

function durationErrors(object: string, path: PathSeg[], v: unknown): FieldError[] {
  if (typeof v !== 'string' || v === 'Never') return [];
  const r = parseGoDuration(v);
  return r.ok ? [] : [fieldError(object, path, r.message)];
}

function quantityErrors(object: string, path: PathSeg[], list: unknown, what: string): FieldError[] {
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(rec(list))) {
    if (typeof v !== 'string' && typeof v !== 'number') continue;
    try {
      if (isNegative(parseQuantity(v)))
        out.push(fieldError(object, [...path, { key: k }], `${what} must not be negative (got ${v})`));
      else resourceValue(k, v);
    } catch (e) {
      if (!(e instanceof QuantityError)) throw e;
      out.push(fieldError(object, [...path, { key: k }], e.message));
    }
  }
  return out;
}

function taintErrors(object: string, spec: Obj, base: PathSeg[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Map<string, string>();
  for (const field of ['taints', 'startupTaints']) {
    list(spec[field]).forEach((t, i) => {
      const taint = rec(t);
      const k = `${String(taint['key'])}:${String(taint['effect'])}`;
      const first = seen.get(k);
      if (first) out.push(fieldError(object, [...base, field, i], `duplicate taint ${k} (already in ${first})`));
      else seen.set(k, `${[...base, field].join('.')}[${i}]`);
    });
  }
  return out;
}

export function nodePoolErrors(obj: Obj, object: string): FieldError[] {
  const spec = rec(obj['spec']);
  const tspec = rec(rec(spec['template'])['spec']);
  const out: FieldError[] = [];
  list(rec(spec['disruption'])['budgets']).forEach((b, i) => {
    const schedule = rec(b)['schedule'];
    if (typeof schedule === 'string') {
      const r = parseCron(schedule);
      if (!r.ok)
        out.push(
          fieldError(
            object,
            ['spec', 'disruption', 'budgets', i, 'schedule'],
            `"${schedule}" is not a valid schedule: ${r.message}`,
          ),
        );
    }
    out.push(...durationErrors(object, ['spec', 'disruption', 'budgets', i, 'duration'], rec(b)['duration']));
  });
  out.push(
    ...durationErrors(object, ['spec', 'disruption', 'consolidateAfter'], rec(spec['disruption'])['consolidateAfter']),
  );
  out.push(...durationErrors(object, ['spec', 'template', 'spec', 'expireAfter'], tspec['expireAfter']));
  out.push(
    ...durationErrors(object, ['spec', 'template', 'spec', 'terminationGracePeriod'], tspec['terminationGracePeriod']),
  );
  out.push(...quantityErrors(object, ['spec', 'limits'], spec['limits'], 'a limit'));
  out.push(...taintErrors(object, tspec, ['spec', 'template', 'spec']));
  return out;
}

export function nodeClaimErrors(obj: Obj, object: string): FieldError[] {
  const spec = rec(obj['spec']);
  const status = rec(obj['status']);
  return [
    ...durationErrors(object, ['spec', 'expireAfter'], spec['expireAfter']),
    ...durationErrors(object, ['spec', 'terminationGracePeriod'], spec['terminationGracePeriod']),
    ...quantityErrors(
      object,
      ['spec', 'resources', 'requests'],
      rec(spec['resources'])['requests'],
      'a resource request',
    ),
    ...quantityErrors(object, ['status', 'capacity'], status['capacity'], 'a capacity'),
    ...quantityErrors(object, ['status', 'allocatable'], status['allocatable'], 'an allocatable amount'),
    ...taintErrors(object, spec, ['spec']),
  ];
}

export function ec2NodeClassErrors(obj: Obj, object: string): FieldError[] {
  const kubelet = rec(rec(obj['spec'])['kubelet']);
  const out: FieldError[] = [];
  for (const field of ['kubeReserved', 'systemReserved']) {
    out.push(...quantityErrors(object, ['spec', 'kubelet', field], kubelet[field], `${field}`));
  }
  for (const [k, v] of Object.entries(rec(kubelet['evictionSoftGracePeriod']))) {
    out.push(...durationErrors(object, ['spec', 'kubelet', 'evictionSoftGracePeriod', { key: k }], v));
  }
  return out;
}
