// Just enough TOML for Bottlerocket user data: tables ([a.b]), key = value lines (single-line values, kept
// as written), dotted and quoted keys, comments. A user's settings are read into a table -> key -> value map
// so Karpenter's settings can overwrite or add keys, then the map is written back. Arrays of tables and
// multi-line values are refused with a clear error rather than mangled.

type TomlDoc = Map<string, Map<string, string>>;

function splitKey(raw: string, line: number): string[] {
  const out: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(\.|$)/y;
  let i = 0;
  while (i < raw.length) {
    re.lastIndex = i;
    const m = re.exec(raw);
    if (!m) throw new Error(`spec.userData line ${line}: cannot read the TOML key "${raw.trim()}"`);
    out.push(m[1] ?? m[2] ?? m[3]!);
    i = re.lastIndex;
    if (!m[4]) break;
  }
  return out;
}

/** Index of the "=" that ends a key (outside quotes). */
function keyEnd(line: string): number {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '=') return i;
  }
  return -1;
}

export function parseToml(text: string): TomlDoc {
  const doc: TomlDoc = new Map([['', new Map()]]);
  let table = '';
  text.split(/\r?\n/).forEach((raw, idx) => {
    const line = raw.trim();
    const n = idx + 1;
    if (line === '' || line.startsWith('#')) return;
    if (line.startsWith('[[')) throw new Error(`spec.userData line ${n}: arrays of tables ([[...]]) are not supported`);
    if (line.startsWith('[')) {
      const close = line.lastIndexOf(']');
      if (close < 0) throw new Error(`spec.userData line ${n}: unterminated table header`);
      table = splitKey(line.slice(1, close), n).join('.');
      if (!doc.has(table)) doc.set(table, new Map());
      return;
    }
    const eq = keyEnd(line);
    if (eq < 0) throw new Error(`spec.userData line ${n}: expected key = value`);
    const path = splitKey(line.slice(0, eq), n);
    const value = line.slice(eq + 1).trim();
    if (
      value === '' ||
      value.startsWith('"""') ||
      value.startsWith("'''") ||
      (value.startsWith('[') && !value.endsWith(']'))
    ) {
      throw new Error(`spec.userData line ${n}: multi-line TOML values are not supported`);
    }
    const parent = [table, ...path.slice(0, -1)].filter(Boolean).join('.');
    if (!doc.has(parent)) doc.set(parent, new Map());
    doc.get(parent)!.set(path[path.length - 1]!, value);
  });
  return doc;
}

const BARE = /^[A-Za-z0-9_-]+$/;
const tomlKey = (k: string): string => (BARE.test(k) ? k : JSON.stringify(k));
export const tomlString = (s: string): string => JSON.stringify(s);
export const tomlStringArray = (xs: readonly string[]): string => `[${xs.map(tomlString).join(', ')}]`;

export function setValue(doc: TomlDoc, table: string, key: string, value: string): void {
  if (!doc.has(table)) doc.set(table, new Map());
  doc.get(table)!.set(key, value);
}

export function serializeToml(doc: TomlDoc): string {
  const out: string[] = [];
  for (const [table, entries] of doc) {
    if (!entries.size) continue;
    if (table) out.push('', `[${table.split('.').map(tomlKey).join('.')}]`);
    for (const [k, v] of entries) out.push(`${tomlKey(k)} = ${v}`);
  }
  return out.join('\n').replace(/^\n/, '') + '\n';
}
