// Text that came from an input (object names, labels, file names, messages quoting them) as it may be
// shown on a terminal: control characters (C0, DEL, C1: an ESC starts a terminal command, a CR rewrites
// the line) and the invisible characters that reorder or hide text (bidirectional embeddings, overrides
// and isolates, zero-width marks, line and paragraph separators) are written as \x1b or \u202e escapes,
// so a name cannot recolour the screen, move the cursor, forge a line or read backwards. Every renderer
// that prints such text calls one of these two.

const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;
const UNSAFE_KEEP_LINES =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

function escapeChar(ch: string): string {
  const c = ch.charCodeAt(0);
  return c < 0x100 ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
}

/** A name or value for one line of a terminal: every control or invisible formatting character escaped. */
export function safeText(s: string): string {
  return s.replace(UNSAFE, escapeChar);
}

/** A message of one or more lines: the same, but its line breaks stay. */
export function safeLines(s: string): string {
  return s.replace(UNSAFE_KEEP_LINES, escapeChar);
}

/** A copy of a JSON-like value (a report) with every string passed through safeText, for a terminal. */
export function safeStrings<T>(v: T): T {
  if (typeof v === 'string') return safeText(v) as T;
  if (Array.isArray(v)) return v.map((x) => safeStrings(x)) as T;
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = safeStrings(x);
    return out as T;
  }
  return v;
}
