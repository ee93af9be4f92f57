// What a request must show before the simulated API server does anything with it, so the server is safe
// to leave running on a laptop:
//
// - a Host header naming this machine's loopback (localhost, 127.0.0.1, [::1]) or the address the server
//   listens on: a web page that rebinds its own DNS name to 127.0.0.1 cannot reach it (403);
// - the server's bearer token (401 without it), except on the paths a real cluster shows anonymous
//   callers (/healthz, /livez, /readyz, /version); the token can be turned off explicitly;
// - a body in a media type the verb accepts: JSON, YAML or Kubernetes protobuf (what kubectl's typed
//   clients send: `create namespace`, `create deployment`) for create, update and delete options, one of
//   the four patch types for PATCH (415 otherwise). A browser form or a `text/plain` fetch can therefore
//   never write (protobuf is no type a form can send, and a page's fetch with it needs a CORS preflight this
//   server never grants).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { BodyFormat } from './body.ts';
import { errors } from './errors.ts';
import { PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import type { PatchType } from './registry.ts';

const PATCH_TYPES: Readonly<Record<string, PatchType>> = {
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/json-patch+json': 'json',
  'application/apply-patch+yaml': 'apply',
};

const BODY_TYPES: Readonly<Record<string, BodyFormat>> = {
  'application/json': 'json',
  'application/yaml': 'yaml',
  [PROTOBUF_MEDIA_TYPE]: 'protobuf',
};
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

interface GuardOptions {
  /** The bearer token every request must carry; undefined: no authentication. */
  readonly token: string | undefined;
  /** The address the server listens on (allowed as a Host besides the loopback names). */
  readonly listenHost: string;
}

/** What the guard learnt about the body: how to parse it. */
interface Admitted {
  /** JSON, YAML or protobuf; undefined: the request may not carry a body (a DELETE without a Content-Type). */
  readonly format: BodyFormat | undefined;
  /** The patch type of a PATCH. */
  readonly patch?: PatchType;
}

export class RequestGuard {
  private readonly hosts: Set<string>;
  private readonly tokenDigest: Buffer | undefined;

  constructor(opts: GuardOptions) {
    const own =
      opts.listenHost.includes(':') && !opts.listenHost.startsWith('[') ? `[${opts.listenHost}]` : opts.listenHost;
    this.hosts = new Set([...LOOPBACK_HOSTS, ...(own === '0.0.0.0' || own === '[::]' ? [] : [own.toLowerCase()])]);
    this.tokenDigest = opts.token === undefined ? undefined : digest(opts.token);
  }

  /** Throws the Status a request gets when it must not go further; otherwise says how to read its body. */
  admit(req: IncomingMessage, path: string): Admitted {
    this.checkHost(req.headers.host);
    this.checkToken(req.headers.authorization, path);
    return mediaOf(req.method ?? 'GET', req.headers['content-type']);
  }

  private checkHost(host: string | undefined): void {
    const name = (host ?? '').toLowerCase().replace(/:\d+$/, '');
    if (!this.hosts.has(name)) {
      throw errors.refused(
        `the simulated API server only answers requests addressed to ${[...this.hosts].join(', ')} (Host: ${JSON.stringify(host ?? '')})`,
      );
    }
  }

  private checkToken(authorization: string | undefined, path: string): void {
    if (!this.tokenDigest) return;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) {
      if (!authorization?.trim() && PUBLIC_PATHS.has(path)) return;
      throw errors.unauthorized();
    }
    if (!timingSafeEqual(digest(m[1]!), this.tokenDigest)) throw errors.unauthorized();
  }
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The media type (no parameters, lower case) of a Content-Type header, '' when absent. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * How a request's body is read. A write's media type must be one its verb accepts; a DELETE without a
 * Content-Type is fine (its options are optional), and its body is then refused if there is one.
 */
function mediaOf(method: string, header: string | undefined): Admitted {
  const type = mediaType(header);
  if (method === 'PATCH') {
    const patch = PATCH_TYPES[type];
    if (!patch) throw errors.unsupportedMediaType(type || '(none)', Object.keys(PATCH_TYPES));
    return { format: patch === 'apply' ? 'yaml' : 'json', patch };
  }
  const format = BODY_TYPES[type];
  if (format) return { format };
  if (method === 'POST' || method === 'PUT' || (method === 'DELETE' && type !== ''))
    throw errors.unsupportedMediaType(type || '(none)', Object.keys(BODY_TYPES));
  return { format: undefined };
}
