// Label and field selectors: the query-string forms (?labelSelector=, ?fieldSelector=) and the
// metav1.LabelSelector object form that PDBs, Deployments and affinity terms carry.
import { errors } from './errors.ts';
import { isObject, type KObject } from './types.ts';

type Requirement =
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'notexists' };

/** A parsed selector: every requirement must hold. An empty list matches everything. */
export type Selector = readonly Requirement[];

const KEY = String.raw`[A-Za-z0-9][-A-Za-z0-9_./]*`;
const VALUE = String.raw`[-A-Za-z0-9_.]*`;
const SET_RE = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s+\(([^)]*)\)$`);
const EQ_RE = new RegExp(String.raw`^(${KEY})\s*(==|=|!=)\s*(${VALUE})$`);
const EXISTS_RE = new RegExp(String.raw`^(!?)\s*(${KEY})$`);

/** Splits on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t !== '');
}

/** Parses `app=web,tier in (a,b),!legacy`. Throws a 400 BadRequest naming the bad term. */
export function parseLabelSelector(s: string | null | undefined): Selector {
  if (!s) return [];
  return splitTerms(s).map((term): Requirement => {
    let m = SET_RE.exec(term);
    if (m)
      return {
        key: m[1]!,
        op: m[2] as 'in' | 'notin',
        values: m[3]!
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      };
    m = EQ_RE.exec(term);
    if (m) return { key: m[1]!, op: m[2] === '!=' ? 'neq' : 'eq', value: m[3]! };
    m = EXISTS_RE.exec(term);
    if (m) return { key: m[2]!, op: m[1] ? 'notexists' : 'exists' };
    throw errors.badRequest(`unable to parse requirement: invalid label selector term "${term}"`);
  });
}

/** Parses `metadata.name=x,spec.nodeName!=` (only =, == and != exist for fields). */
export function parseFieldSelector(s: string | null | undefined): Selector {
  if (!s) return [];
  return splitTerms(s).map((term): Requirement => {
    const m = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw errors.badRequest(`invalid field selector term "${term}": expected field=value or field!=value`);
    return { key: m[1]!, op: m[2] === '!=' ? 'neq' : 'eq', value: m[3]! };
  });
}

export function matches(sel: Selector, get: (key: string) => string | undefined): boolean {
  for (const r of sel) {
    const v = get(r.key);
    switch (r.op) {
      case 'eq':
        if ((v ?? '') !== r.value) return false;
        break;
      case 'neq':
        if ((v ?? '') === r.value) return false;
        break;
      case 'in':
        if (v === undefined || !r.values.includes(v)) return false;
        break;
      case 'notin':
        if (v !== undefined && r.values.includes(v)) return false;
        break;
      case 'exists':
        if (v === undefined) return false;
        break;
      case 'notexists':
        if (v !== undefined) return false;
        break;
    }
  }
  return true;
}

export const labelsOf =
  (obj: KObject) =>
  (key: string): string | undefined =>
    obj.metadata.labels?.[key];

/** Field lookup by dotted path (metadata.name, spec.nodeName, status.phase, ...); absent reads as "". */
export const fieldsOf =
  (obj: KObject) =>
  (key: string): string | undefined => {
    let v: unknown = obj;
    for (const part of key.split('.')) v = isObject(v) ? v[part] : undefined;
    return v === undefined || v === null ? '' : String(v);
  };

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

/**
 * metav1.LabelSelector semantics: an empty selector matches everything, a missing one (undefined/null)
 * matches nothing. Unknown operators match nothing (the real server would have rejected the object).
 */
export function matchesLabelSelector(
  sel: LabelSelectorObject | null | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!sel) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(l[e.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[e.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** The query-string form of a metav1.LabelSelector, as a Scale's status.selector carries it. */
export function formatLabelSelector(sel: LabelSelectorObject | undefined): string {
  if (!sel) return '';
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    if (e.operator === 'In' || e.operator === 'NotIn')
      parts.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}
