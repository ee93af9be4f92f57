// JSON merge patch (RFC 7386) and JSON patch (RFC 6902). Both work on fresh copies and never touch their
// inputs. Errors are ApiErrors with the status the real API server uses (400 for a malformed patch, 422
// for a patch that does not apply). Paths and keys reach own fields only (own/setOwn): a patch naming
// `constructor` or `prototype` edits a field of that name, and a pointer through `__proto__` is refused.
import { FORBIDDEN_KEY } from './body.ts';
import { ApiError, errors } from './errors.ts';
import { isObject, jsonEqual, own, setOwn, type JsonObject } from './types.ts';

/** RFC 7386: objects merge recursively, null deletes, everything else (lists too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, mergePatch(own(out, k), v));
  }
  return out;
}

interface Op {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

function parsePointer(p: unknown, what: string): string[] {
  if (typeof p !== 'string' || (p !== '' && !p.startsWith('/')))
    throw errors.badRequest(`json patch: ${what} "${String(p)}" is not a JSON pointer`);
  const tokens =
    p === ''
      ? []
      : p
          .slice(1)
          .split('/')
          .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (tokens.includes(FORBIDDEN_KEY))
    throw errors.badRequest(`json patch: ${what} "${p}" goes through "${FORBIDDEN_KEY}", which is not accepted`);
  return tokens;
}

const unprocessable = (message: string) => new ApiError(422, 'Invalid', message);

function parentOf(doc: unknown, tokens: string[], path: string): { parent: unknown; last: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    cur = own(cur, t);
    if (cur === undefined) throw unprocessable(`json patch: path "${path}" does not exist`);
  }
  return { parent: cur, last: tokens[tokens.length - 1]! };
}

function arrayIndex(arr: unknown[], t: string, path: string, forAdd: boolean): number {
  if (forAdd && t === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(t)) throw unprocessable(`json patch: "${t}" in "${path}" is not an array index`);
  const i = Number(t);
  if (i > arr.length || (!forAdd && i === arr.length))
    throw unprocessable(`json patch: index ${i} in "${path}" is out of range`);
  return i;
}

function get(doc: unknown, tokens: string[], path: string): unknown {
  if (tokens.length === 0) return doc;
  const { parent, last } = parentOf(doc, tokens, path);
  const v = Array.isArray(parent) ? parent[arrayIndex(parent, last, path, false)] : own(parent, last);
  if (v === undefined) throw unprocessable(`json patch: path "${path}" does not exist`);
  return v;
}

function add(doc: unknown, tokens: string[], value: unknown, path: string): unknown {
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, path, true), 0, value);
  else if (isObject(parent)) setOwn(parent, last, value);
  else throw unprocessable(`json patch: the parent of "${path}" is not an object or array`);
  return doc;
}

function remove(doc: unknown, tokens: string[], path: string): unknown {
  if (tokens.length === 0) throw unprocessable('json patch: cannot remove the whole document');
  get(doc, tokens, path);
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, path, false), 1);
  else delete (parent as JsonObject)[last];
  return doc;
}

/** RFC 6902 over a copy of `target`. A failing `test` is a 422, like the real server. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw errors.badRequest('json patch: the body must be a JSON array of operations');
  let doc = structuredClone(target);
  for (const [i, raw] of ops.entries()) {
    if (!isObject(raw) || typeof raw.op !== 'string') throw errors.badRequest(`json patch: operation ${i} has no "op"`);
    const op = raw as unknown as Op;
    const tokens = parsePointer(op.path, 'path');
    switch (op.op) {
      case 'add':
        doc = add(doc, tokens, structuredClone(op.value), op.path);
        break;
      case 'remove':
        doc = remove(doc, tokens, op.path);
        break;
      case 'replace':
        if (tokens.length === 0) doc = structuredClone(op.value);
        else doc = add(remove(doc, tokens, op.path), tokens, structuredClone(op.value), op.path);
        break;
      case 'move': {
        const from = parsePointer(op.from, 'from');
        const v = get(doc, from, String(op.from));
        doc = add(remove(doc, from, String(op.from)), tokens, v, op.path);
        break;
      }
      case 'copy': {
        const from = parsePointer(op.from, 'from');
        doc = add(doc, tokens, structuredClone(get(doc, from, String(op.from))), op.path);
        break;
      }
      case 'test':
        if (!jsonEqual(get(doc, tokens, op.path), op.value))
          throw unprocessable(`json patch: test operation for path "${op.path}" failed`);
        break;
      default:
        throw errors.badRequest(`json patch: unknown operation "${op.op}" at index ${i}`);
    }
  }
  return doc;
}
