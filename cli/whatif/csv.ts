// Trace input: pods as CSV rows (docs/whatif.md "Trace input"). A header row names the columns; `cpu` and
// `memory` are required (Kubernetes quantities), `name`, `namespace`, `gpu`, `count`, `labels` and
// `nodeSelector` (`k=v;k2=v2`) are optional. Each row becomes `count` pending Pods, parsed by the engine's
// Pod parser, so they mean exactly what the same pods in YAML would.
import { parsePod, parseQuantity, QuantityError, type Pod } from '../../engine/index.ts';
import { InputError } from './errors.ts';

const COLUMNS = ['name', 'namespace', 'cpu', 'memory', 'gpu', 'count', 'labels', 'nodeselector'];
const MAX_COUNT = 1_000_000;

/** Splits CSV text into rows of fields (RFC 4180: quoted fields, doubled quotes, CRLF or LF). */
export function csvRows(text: string): { line: number; fields: string[] }[] {
  const rows: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (ch === '"') quoted = false;
      else { if (ch === '\n') line++; field += ch; }
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') { fields.push(field); field = ''; }
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      fields.push(field);
      if (fields.some((f) => f.trim() !== '')) rows.push({ line: rowLine, fields });
      fields = []; field = ''; line++; rowLine = line;
    } else field += ch;
  }
  if (quoted) throw new InputError(`line ${rowLine}: a quoted field is not closed`);
  fields.push(field);
  if (fields.some((f) => f.trim() !== '')) rows.push({ line: rowLine, fields });
  return rows;
}

function pairs(v: string, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of v.split(';').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new InputError(`${where}: "${part}" is not key=value`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function quantity(v: string, where: string): string {
  try {
    parseQuantity(v);
    return v;
  } catch (e) {
    throw new InputError(`${where}: ${e instanceof QuantityError ? e.message : `"${v}" is not a Kubernetes quantity`}`);
  }
}

/** Parses a trace; errors name the file, the line and the column. */
export function podsFromCsv(text: string, file: string): Pod[] {
  let rows;
  try {
    rows = csvRows(text);
  } catch (e) {
    throw e instanceof InputError ? new InputError(`${file}: ${e.message}`) : e;
  }
  const header = rows.shift();
  if (!header) throw new InputError(`${file}: empty file (expected a header row with at least cpu and memory)`);
  const cols = header.fields.map((h) => h.trim().toLowerCase());
  for (const c of cols) if (!COLUMNS.includes(c)) throw new InputError(`${file}: line ${header.line}: unknown column "${c}" (columns: name, namespace, cpu, memory, gpu, count, labels, nodeSelector)`);
  for (const need of ['cpu', 'memory']) if (!cols.includes(need)) throw new InputError(`${file}: line ${header.line}: the header has no ${need} column`);
  const pods: Pod[] = [];
  const seen = new Set<string>();
  for (const { line, fields } of rows) {
    if (fields.length !== cols.length) throw new InputError(`${file}: line ${line}: ${fields.length} fields, the header has ${cols.length}`);
    const get = (c: string): string => (fields[cols.indexOf(c)] ?? '').trim();
    const at = (c: string): string => `${file}: line ${line}: ${c}`;
    const cpu = quantity(get('cpu'), at('cpu'));
    const memory = quantity(get('memory'), at('memory'));
    const gpu = get('gpu') === '' ? undefined : quantity(get('gpu'), at('gpu'));
    const countText = get('count') || '1';
    if (!/^\d+$/.test(countText) || Number(countText) < 1 || Number(countText) > MAX_COUNT) throw new InputError(`${at('count')}: "${countText}" is not a whole number from 1 to ${MAX_COUNT}`);
    const labels = pairs(get('labels'), at('labels'));
    const nodeSelector = pairs(get('nodeselector'), at('nodeSelector'));
    const base = get('name') || `trace-${line}`;
    const namespace = get('namespace') || 'default';
    const count = Number(countText);
    const requests: Record<string, string> = { cpu, memory, ...(gpu ? { 'nvidia.com/gpu': gpu } : {}) };
    for (let i = 0; i < count; i++) {
      const name = count === 1 ? base : `${base}-${i + 1}`;
      if (seen.has(`${namespace}/${name}`)) throw new InputError(`${file}: line ${line}: pod ${namespace}/${name} is listed twice`);
      seen.add(`${namespace}/${name}`);
      const r = parsePod({
        apiVersion: 'v1', kind: 'Pod',
        metadata: { name, namespace, uid: `${namespace}/${name}`, labels },
        spec: { containers: [{ name: 'main', resources: { requests, ...(gpu ? { limits: { 'nvidia.com/gpu': gpu } } : {}) } }], nodeSelector },
      });
      if (!r.ok) throw new InputError(`${file}: line ${line}: ${r.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
      pods.push(r.value);
    }
  }
  if (pods.length === 0) throw new InputError(`${file}: no pods (only a header row)`);
  return pods;
}
