// Trace input: pods as CSV rows (docs/whatif.md "Trace input"). A header row names the columns; `cpu` and
// `memory` are required (Kubernetes quantities), `name`, `namespace`, `gpu`, `count`, `labels` and
// `nodeSelector` (`k=v;k2=v2`) are optional. Each row becomes `count` pending Pods, parsed by the engine's
// Pod parser, so they mean exactly what the same pods in YAML would. The header is checked (a first row of
// values, an unknown or repeated column is an error that lists the columns), and so is each value's
// plausibility: a cpu written like memory (2Gi) or a memory written like cpu (500m, or a few bytes) is
// refused, naming both columns, since it is most likely a swapped pair.
import { parsePod, parseQuantity, QuantityError, resourceValue, safeText, type Pod } from '../../engine/index.ts';
import { countProblem, inputLimits, type InputLimits } from '../limits.ts';
import { InputError } from './errors.ts';

const COLUMNS = ['name', 'namespace', 'cpu', 'memory', 'gpu', 'count', 'labels', 'nodeselector'];
const COLUMN_NAMES = 'name, namespace, cpu, memory, gpu, count, labels, nodeSelector';
const MAX_COUNT = 1_000_000;
/** More cores than any instance type has: a value this large is not a pod's cpu. */
const MAX_CPU_MILLI = 1_000_000;
/** Less memory than any container can start with: a value this small is not a pod's memory. */
const MIN_MEMORY_BYTES = 1024 * 1024;

interface Row {
  readonly line: number;
  readonly fields: string[];
}

/** Splits CSV text into rows of fields (RFC 4180: quoted fields, doubled quotes, CRLF or LF). */
export function csvRows(text: string, maxRows = Infinity): Row[] {
  const rows: Row[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = (): void => {
    fields.push(field);
    if (fields.some((f) => f.trim() !== '')) rows.push({ line: rowLine, fields });
    if (rows.length > maxRows) throw new InputError(`more than ${maxRows} rows`);
    fields = [];
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else {
        if (ch === '\n') line++;
        field += ch;
      }
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') {
      fields.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else field += ch;
  }
  if (quoted) throw new InputError(`line ${rowLine}: a quoted field is not closed`);
  endRow();
  return rows;
}

function pairs(v: string, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of v
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new InputError(`${where}: "${safeText(part)}" is not key=value`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/** The columns of the header row, checked: known names, each once, and not a row of values. */
function columns(header: Row | undefined, file: string): string[] {
  if (!header) throw new InputError(`${file}: empty file (expected a header row with at least cpu and memory)`);
  const at = `${file}: line ${header.line}`;
  const cols = header.fields.map((h) => h.trim().toLowerCase());
  if (cols.some((c) => /^[\d.+-]/.test(c) && isQuantity(c))) {
    throw new InputError(
      `${at}: the first row holds values (${header.fields.map((f) => safeText(f.trim())).join(', ')}), not a header: add a header row naming the columns (${COLUMN_NAMES})`,
    );
  }
  for (const [i, c] of cols.entries()) {
    if (!COLUMNS.includes(c)) throw new InputError(`${at}: unknown column "${safeText(c)}" (columns: ${COLUMN_NAMES})`);
    if (cols.indexOf(c) !== i) throw new InputError(`${at}: the column ${c} is named twice`);
  }
  for (const need of ['cpu', 'memory'])
    if (!cols.includes(need))
      throw new InputError(`${at}: the header has no ${need} column (columns: ${COLUMN_NAMES})`);
  return cols;
}

function isQuantity(s: string): boolean {
  try {
    parseQuantity(s);
    return true;
  } catch {
    return false;
  }
}

/** A cpu, memory or gpu value, checked as a quantity (not negative, not too large) and for plausibility. */
function quantity(v: string, column: 'cpu' | 'memory' | 'gpu', where: string): string {
  let n: number;
  try {
    n = resourceValue(column === 'gpu' ? 'nvidia.com/gpu' : column, v);
  } catch (e) {
    throw new InputError(
      `${where}: ${e instanceof QuantityError ? safeText(e.message) : `"${safeText(v)}" is not a Kubernetes quantity`}`,
    );
  }
  const swapped = 'are the cpu and memory columns swapped? The header names which column is which';
  if (column === 'cpu' && /[KMGTPE]i$/.test(v.trim()))
    throw new InputError(`${where}: "${safeText(v)}" is written like memory, not cpu (${swapped})`);
  if (column === 'cpu' && n > MAX_CPU_MILLI)
    throw new InputError(`${where}: "${safeText(v)}" is ${n / 1000} cores, more than any instance has (${swapped})`);
  if (column === 'memory' && n > 0 && n < MIN_MEMORY_BYTES)
    throw new InputError(
      `${where}: "${safeText(v)}" is ${n} bytes of memory, less than 1Mi (${swapped}; memory needs a unit such as 512Mi or 2Gi)`,
    );
  return v;
}

/** How many pods the row asks for (the count column, default 1). */
function countOf(text: string, where: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_COUNT)
    throw new InputError(`${where}: "${safeText(text)}" is not a whole number from 1 to ${MAX_COUNT}`);
  return Number(text);
}

/** Parses a trace; errors name the file, the line and the column. Limits are checked before any pod is made. */
export function podsFromCsv(text: string, file: string, limits: InputLimits = inputLimits(process.env)): Pod[] {
  let rows;
  try {
    rows = csvRows(text, limits.objects + 1);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    throw new InputError(
      `${file}: ${e.message.startsWith('more than') ? countProblem(limits.objects + 1, 'rows', limits) : e.message}`,
    );
  }
  const header = rows.shift();
  const cols = columns(header, file);
  const get = (fields: string[], c: string): string => (fields[cols.indexOf(c)] ?? '').trim();
  let total = 0;
  for (const { line, fields } of rows) {
    if (fields.length !== cols.length)
      throw new InputError(
        `${file}: line ${line}: ${fields.length} fields, the header has ${cols.length} (${cols.join(', ')})`,
      );
    total += countOf(get(fields, 'count') || '1', `${file}: line ${line}: count`);
  }
  const tooMany = countProblem(total, 'pods in the trace', limits);
  if (tooMany) throw new InputError(`${file}: ${tooMany}`);
  const pods: Pod[] = [];
  const seen = new Set<string>();
  for (const row of rows) pods.push(...rowPods(row, (c) => get(row.fields, c), file, seen));
  if (pods.length === 0) throw new InputError(`${file}: no pods (only a header row)`);
  return pods;
}

/** The `count` pods of one row. */
function rowPods({ line }: Row, get: (column: string) => string, file: string, seen: Set<string>): Pod[] {
  const at = (c: string): string => `${file}: line ${line}: ${c}`;
  const cpu = quantity(get('cpu'), 'cpu', at('cpu'));
  const memory = quantity(get('memory'), 'memory', at('memory'));
  const gpu = get('gpu') === '' ? undefined : quantity(get('gpu'), 'gpu', at('gpu'));
  const count = countOf(get('count') || '1', at('count'));
  const labels = pairs(get('labels'), at('labels'));
  const nodeSelector = pairs(get('nodeselector'), at('nodeSelector'));
  const base = get('name') || `trace-${line}`;
  const namespace = get('namespace') || 'default';
  const requests: Record<string, string> = { cpu, memory, ...(gpu ? { 'nvidia.com/gpu': gpu } : {}) };
  const out: Pod[] = [];
  for (let i = 0; i < count; i++) {
    const name = count === 1 ? base : `${base}-${i + 1}`;
    if (seen.has(`${namespace}/${name}`))
      throw new InputError(`${file}: line ${line}: pod ${safeText(namespace)}/${safeText(name)} is listed twice`);
    seen.add(`${namespace}/${name}`);
    const r = parsePod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, uid: `${namespace}/${name}`, labels },
      spec: {
        containers: [{ name: 'main', resources: { requests, ...(gpu ? { limits: { 'nvidia.com/gpu': gpu } } : {}) } }],
        nodeSelector,
      },
    });
    if (!r.ok)
      throw new InputError(
        `${file}: line ${line}: ${r.errors.map((e) => `${e.path}: ${safeText(e.message)}`).join('; ')}`,
      );
    out.push(r.value);
  }
  return out;
}
