// Protobuf request bodies (application/vnd.kubernetes.protobuf), as kubectl's typed clients send them for
// `create namespace`, `create deployment` and `drain`'s evictions and deletes. The body is the 4 bytes "k8s\0"
// and a runtime.Unknown message (typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3,
// contentType = 4) whose raw bytes are the object's own message. Objects are decoded into the JSON form the
// rest of the server takes, by the field tables of protobuf-schema.ts (k8s.io/api's generated.proto): a
// field a table does not know, a kind without a table or a malformed message is a 400 naming it, never a
// silently dropped field. Answers stay JSON (kubectl's protobuf clients accept JSON).
import { FORBIDDEN_KEY, MAX_BODY_DEPTH } from './body.ts';
import { errors } from './errors.ts';
import { PROTOBUF_MESSAGES } from './protobuf-schema.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from('k8s\0', 'latin1');

interface Field {
  readonly name: string;
  readonly type: string;
  readonly repeated: boolean;
  /** A Go pointer scalar: its zero value is kept (replicas: 0); other zero scalars are omitted, as JSON omits them. */
  readonly pointer: boolean;
  /** An embedded message whose fields JSON writes into the enclosing object (Probe's handler). */
  readonly inline: boolean;
  readonly map?: readonly [string, string];
}

const tables = new Map<string, ReadonlyMap<number, Field>>();

function tableOf(message: string): ReadonlyMap<number, Field> | undefined {
  const cached = tables.get(message);
  if (cached) return cached;
  const spec = PROTOBUF_MESSAGES[message];
  if (spec === undefined) return undefined;
  const table = new Map<number, Field>();
  for (const entry of spec ? spec.split('|') : []) {
    const [name, number, rawType] = entry.split(' ') as [string, string, string];
    const mark = rawType.at(-1)!;
    const type = '*?^'.includes(mark) ? rawType.slice(0, -1) : rawType;
    const m = /^map<([^,]+),(.+)>$/.exec(type);
    table.set(Number(number), {
      name,
      type,
      repeated: mark === '*',
      pointer: mark === '?',
      inline: mark === '^',
      ...(m ? { map: [m[1]!, m[2]!] as const } : {}),
    });
  }
  tables.set(message, table);
  return table;
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const RUNTIME = 'k8s.io.apimachinery.pkg.runtime';

/** The proto message of a kind: k8s.io.api.<group's first label>.<version>.<Kind> (core: "core"). */
export function messageOf(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
  if (group === 'meta.k8s.io' || (group === '' && kind === 'DeleteOptions')) return `${META}.${kind}`;
  return `k8s.io.api.${group === '' ? 'core' : group.split('.')[0]}.${version}.${kind}`;
}

/** A bounded cursor over one message's bytes. */
class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
    readonly where: string,
  ) {
    this.pos = start;
  }

  fail(what: string): never {
    throw errors.badRequest(`the protobuf request body is malformed: ${what} in ${this.where}`);
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) this.fail('a varint runs past the end');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
    return this.fail('a varint is longer than 10 bytes');
  }

  bytes(): { start: number; end: number } {
    const length = Number(this.varint());
    const start = this.pos;
    if (length < 0 || start + length > this.end) this.fail('a length-delimited field runs past the end');
    this.pos = start + length;
    return { start, end: start + length };
  }

  fixed(n: 4 | 8): Buffer {
    if (this.pos + n > this.end) this.fail('a fixed-size field runs past the end');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

/** A scalar from its wire form (varint, fixed or bytes). */
function scalar(type: string, wire: number, r: Reader): unknown {
  switch (type) {
    case 'string':
    case 'bytes': {
      if (wire !== 2) return r.fail(`a ${type} field with wire type ${wire}`);
      const { start, end } = r.bytes();
      return type === 'string' ? r.buf.toString('utf8', start, end) : r.buf.subarray(start, end).toString('base64');
    }
    case 'bool':
      return r.varint() !== 0n;
    case 'int32':
    case 'int64':
      return Number(BigInt.asIntN(64, r.varint()));
    case 'uint32':
    case 'uint64':
      return Number(r.varint());
    case 'double':
      return r.fixed(8).readDoubleLE(0);
    case 'float':
      return r.fixed(4).readFloatLE(0);
    default:
      return r.fail(`the scalar type ${type}`);
  }
}

const SCALAR_TYPES = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'double', 'float']);
const isZero = (v: unknown): boolean => v === '' || v === 0 || v === false;

/** A value of a field: a scalar (one element of a packed list at a time is handled by the caller), or a message. */
function fieldValue(type: string, wire: number, r: Reader, where: string): unknown {
  if (SCALAR_TYPES.has(type)) return scalar(type, wire, r);
  if (wire !== 2) return r.fail(`the message field ${where} with wire type ${wire}`);
  const { start, end } = r.bytes();
  return decodeMessage(type, r.buf, start, end, where);
}

/** One map entry (key = 1, value = 2). */
function mapEntry(f: Field, r: Reader, where: string): [string, unknown] {
  const { start, end } = r.bytes();
  const e = new Reader(r.buf, start, end, where);
  let key = '';
  let value: unknown = SCALAR_TYPES.has(f.map![1]) ? (f.map![1] === 'string' ? '' : undefined) : {};
  while (e.pos < end) {
    const tag = Number(e.varint());
    const n = tag >>> 3;
    if (n === 1) key = String(scalar(f.map![0], tag & 7, e));
    else if (n === 2) value = fieldValue(f.map![1], tag & 7, e, `${where}[value]`);
    else e.fail(`map entry field ${n}`);
  }
  // As in JSON bodies: assigning this key would swap the map's prototype instead of adding an entry.
  if (key === FORBIDDEN_KEY)
    throw errors.badRequest(
      `the request body has a field named "${FORBIDDEN_KEY}" (at ${where}), which is not accepted`,
    );
  return [key, value];
}

/** A few well-known messages have a JSON form of their own. */
function special(type: string, r: Reader, start: number, end: number, where: string): { value: unknown } | undefined {
  const plain = () => decodeFields(type, r.buf, start, end, where);
  switch (type) {
    case `${META}.Time`:
    case `${META}.MicroTime`: {
      if (start === end) return { value: null };
      const t = plain() as { seconds?: number; nanos?: number };
      const iso = new Date((t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString();
      return {
        value: type.endsWith('MicroTime')
          ? iso.replace(
              /\.(\d{3})Z$/,
              (_, ms: string) => `.${ms}${String(Math.floor((t.nanos ?? 0) / 1000) % 1000).padStart(3, '0')}Z`,
            )
          : iso.replace(/\.\d{3}Z$/, 'Z'),
      };
    }
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return { value: (plain() as { string?: string }).string ?? '0' };
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString': {
      const v = decodeFields(type, r.buf, start, end, where, true) as {
        type?: number;
        intVal?: number;
        strVal?: string;
      };
      return { value: v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0) };
    }
    case `${META}.Duration`: {
      const ns = (plain() as { duration?: number }).duration ?? 0;
      return { value: `${ns / 1e9}s` };
    }
    case `${RUNTIME}.RawExtension`:
    case `${META}.FieldsV1`: {
      const raw = decodeFields(type, r.buf, start, end, where) as { raw?: string; Raw?: string };
      const b64 = raw.raw ?? raw.Raw;
      if (b64 === undefined) return { value: {} };
      try {
        return { value: JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) };
      } catch {
        return r.fail(`${where} holds bytes that are not JSON`);
      }
    }
    default:
      return undefined;
  }
}

function decodeMessage(type: string, buf: Buffer, start: number, end: number, where: string): unknown {
  const s = special(type, new Reader(buf, start, end, where), start, end, where);
  return s ? s.value : decodeFields(type, buf, start, end, where);
}

/** The fields of one message, as JSON; keepZeros keeps zero scalars (IntOrString's intVal 0 is a value). */
function decodeFields(
  type: string,
  buf: Buffer,
  start: number,
  end: number,
  where: string,
  keepZeros = false,
): Record<string, unknown> {
  if (where.split(/[.[]/).length > MAX_BODY_DEPTH)
    throw errors.badRequest(`the request body nests deeper than ${MAX_BODY_DEPTH} levels (at ${where})`);
  const table = tableOf(type);
  if (!table)
    throw errors.badRequest(`the protobuf request body holds a ${type}, which this server cannot decode (send JSON)`);
  const out: Record<string, unknown> = {};
  const r = new Reader(buf, start, end, where);
  while (r.pos < end) {
    const tag = Number(r.varint());
    const n = tag >>> 3;
    const wire = tag & 7;
    const f = table.get(n);
    if (!f)
      throw errors.badRequest(
        `the protobuf request body has field ${n} in ${where} (${type}), which this server does not know (send JSON)`,
      );
    const path = `${where}.${f.name}`;
    if (f.map) {
      const [k, v] = mapEntry(f, r, path);
      const m = (out[f.name] ??= {}) as Record<string, unknown>;
      m[k] = v;
    } else if (f.repeated) {
      const list = (out[f.name] ??= []) as unknown[];
      if (wire === 2 && SCALAR_TYPES.has(f.type) && f.type !== 'string' && f.type !== 'bytes') {
        const { start: ps, end: pe } = r.bytes();
        const packed = new Reader(buf, ps, pe, path);
        while (packed.pos < pe) list.push(scalar(f.type, f.type === 'double' ? 1 : f.type === 'float' ? 5 : 0, packed));
      } else list.push(fieldValue(f.type, wire, r, `${path}[${list.length}]`));
    } else if (f.inline) {
      Object.assign(out, fieldValue(f.type, wire, r, where));
    } else {
      const v = fieldValue(f.type, wire, r, path);
      if (SCALAR_TYPES.has(f.type) && !f.pointer && !keepZeros && isZero(v)) delete out[f.name];
      else out[f.name] = v;
    }
  }
  return out;
}

/** Decodes a protobuf request body (the "k8s\0" envelope around runtime.Unknown) into the object's JSON form. */
export function decodeProtobufBody(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw errors.badRequest('the protobuf request body does not start with the "k8s\\0" envelope prefix');
  }
  // Its typeMeta is inline, as TypeMeta is in every object's JSON.
  const unknown = decodeFields(`${RUNTIME}.Unknown`, body, MAGIC.length, body.length, 'Unknown') as {
    apiVersion?: string;
    kind?: string;
    raw?: string;
    contentEncoding?: string;
  };
  const apiVersion = unknown.apiVersion ?? '';
  const kind = unknown.kind ?? '';
  if (!kind) throw errors.badRequest('the protobuf request body names no kind (typeMeta.kind is empty)');
  if (unknown.contentEncoding)
    throw errors.badRequest(
      `the protobuf request body is encoded as ${unknown.contentEncoding}, which this server does not decode`,
    );
  const raw = Buffer.from(unknown.raw ?? '', 'base64');
  const message = messageOf(apiVersion, kind);
  const object = decodeFields(message, raw, 0, raw.length, kind);
  return { apiVersion, kind, ...object };
}
