// Request bodies: read with a size cap (413 beyond it, as the real API server's 3 MiB limit), parsed as
// JSON, YAML or Kubernetes protobuf (protobuf.ts) by their media type, and checked before any code walks them: a key `__proto__` is refused
// (assigning it would swap an object's prototype instead of adding a field) and so is nesting deeper
// than a Kubernetes object ever needs (the recursive copy, compare and freeze steps would overflow the
// stack). Keys named `constructor` or `prototype` are plain data: every reader uses own fields only.
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { errors } from './errors.ts';

/** The real API server's request body limit (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** How deep a body may nest maps and lists. */
export const MAX_BODY_DEPTH = 100;
export const FORBIDDEN_KEY = '__proto__';

/** Reads the whole body; a body over `limit` bytes fails with 413 without being kept. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(errors.entityTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size <= limit) return void chunks.push(c);
      over = true;
      chunks.length = 0;
      reject(errors.entityTooLarge(limit));
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export type BodyFormat = 'json' | 'yaml' | 'protobuf';

/** A parsed, checked JSON or YAML body (protobuf bodies are decoded by protobuf.ts, then checked here too). */
export function parseBody(bytes: Buffer, format: Exclude<BodyFormat, 'protobuf'>): unknown {
  const raw = bytes.toString('utf8');
  if (!raw.trim()) throw errors.badRequest('the request body is empty');
  let value: unknown;
  try {
    value = format === 'json' ? JSON.parse(raw) : parseYaml(raw);
  } catch (e) {
    throw errors.badRequest(
      `the request body is not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${(e as Error).message}`,
    );
  }
  checkShape(value);
  return value;
}

/** Refuses `__proto__` keys and deep nesting anywhere in a parsed value (iteratively: no recursion to overflow). */
export function checkShape(value: unknown): void {
  const todo: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: '', depth: 0 }];
  for (let item = todo.pop(); item; item = todo.pop()) {
    const { v, path, depth } = item;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_BODY_DEPTH)
      throw errors.badRequest(`the request body nests deeper than ${MAX_BODY_DEPTH} levels (at ${path || '/'})`);
    if (Array.isArray(v)) {
      v.forEach((x, i) => todo.push({ v: x, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const k of Object.keys(v)) {
      if (k === FORBIDDEN_KEY)
        throw errors.badRequest(
          `the request body has a field named "${FORBIDDEN_KEY}" (at ${path || '/'}), which is not accepted`,
        );
      todo.push({ v: (v as Record<string, unknown>)[k], path: `${path}.${k}`, depth: depth + 1 });
    }
  }
}
