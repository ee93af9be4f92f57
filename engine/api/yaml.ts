// Multi-document YAML (or JSON, which is YAML) to plain objects, keeping enough of the syntax tree to say
// which line a field came from. Pure: the caller reads the file and hands over the text.
import { isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, type Node } from 'yaml';
import { isRecord, type PathSeg } from './errors.ts';

export interface SourceDocument {
  /** 1-based position of the document in the stream (empty documents count too). */
  readonly index: number;
  /** The decoded value; undefined for an empty document. */
  readonly value: unknown;
  /** Syntax errors of this document ("line 3: ..."); when present, `value` must not be trusted. */
  readonly syntaxErrors: readonly { readonly message: string; readonly line?: number }[];
  /** 1-based line where the document's content starts. */
  readonly line?: number;
  /** The line of the field at `path`, or of its nearest ancestor present in the source. */
  lineOf(path: readonly PathSeg[]): number | undefined;
}

/** Splits text into documents. Never throws: syntax problems come back per document. */
export function parseDocuments(text: string): SourceDocument[] {
  const lineCounter = new LineCounter();
  let docs;
  try {
    docs = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  } catch (e) {
    return [emptyDoc(1, [{ message: (e as Error).message }])];
  }
  const lineAt = (offset: number): number => lineCounter.linePos(offset).line;
  const out: SourceDocument[] = [];
  let index = 0;
  for (const doc of docs) {
    index++;
    const syntaxErrors: { message: string; line?: number }[] = doc.errors.map((err) => ({
      message: firstLine(err.message),
      line: err.linePos?.[0].line ?? lineAt(err.pos[0]),
    }));
    const contents = doc.contents as Node | null;
    let value: unknown;
    if (syntaxErrors.length === 0) {
      try {
        value = doc.toJS({ maxAliasCount: 100 });
      } catch (e) {
        syntaxErrors.push({
          message: (e as Error).message,
          line: contents?.range ? lineAt(contents.range[0]) : undefined,
        });
      }
    }
    const line = contents?.range ? lineAt(contents.range[0]) : undefined;
    out.push({
      index,
      value: value === null ? undefined : value,
      syntaxErrors,
      line,
      lineOf: (path) => lineOfPath(contents, path, lineAt) ?? line,
    });
  }
  return out;
}

function emptyDoc(index: number, syntaxErrors: { message: string; line?: number }[]): SourceDocument {
  return { index, value: undefined, syntaxErrors, lineOf: () => undefined };
}

function firstLine(s: string): string {
  const i = s.indexOf('\n');
  return (i < 0 ? s : s.slice(0, i)).replace(/ at line \d+, column \d+:?$/, '');
}

/** Walks the syntax tree along `path`; returns the line of the deepest node reached. */
function lineOfPath(
  root: Node | null,
  path: readonly PathSeg[],
  lineAt: (offset: number) => number,
): number | undefined {
  let node: unknown = root;
  let best: number | undefined;
  const lineOfNode = (n: unknown): number | undefined => {
    const r = (n as Node | null)?.range;
    return r ? lineAt(r[0]) : undefined;
  };
  best = lineOfNode(node);
  for (const seg of path) {
    if (typeof seg === 'number') {
      if (!isSeq(node)) return best;
      node = node.items[seg];
      if (node === undefined) return best;
      best = lineOfNode(node) ?? best;
    } else {
      const key = typeof seg === 'string' ? seg : seg.key;
      if (!isMap(node)) return best;
      const pair = node.items.find((p) => isPair(p) && keyText(p.key) === key);
      if (!pair) return best;
      best = lineOfNode(pair.key) ?? best;
      node = pair.value;
      if (node === null || node === undefined) return best;
      // A key's value on the same line as the key is best reported at the key.
      if (isMap(node) || isSeq(node)) continue;
      best = lineOfNode(node) ?? best;
    }
  }
  return best;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  if (isRecord(key) || key === null || key === undefined) return undefined;
  return String(key);
}
