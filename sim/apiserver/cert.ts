// A self-signed TLS certificate for the simulated API server, made at start-up with node:crypto alone.
//
// kubectl (client-go) sends a kubeconfig's bearer token only over https, so a server that wants a token
// and is meant for kubectl must speak TLS. The certificate is its own CA: the kubeconfig the simulator
// prints carries it as certificate-authority-data, so clients verify the server instead of skipping
// verification. An EC P-256 key, valid from an hour ago for 30 days, for localhost, 127.0.0.1 and ::1
// (and the listen address when it is another). X.509 structures (RFC 5280) are written as DER by hand.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

interface ServerCert {
  /** PEM private key. */
  readonly key: string;
  /** PEM certificate (also the CA clients trust). */
  readonly cert: string;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

const DAY_MS = 86_400_000;

/** A fresh key and certificate for the names and addresses a loopback server is reached by. */
export function selfSignedCert(extraHost?: string): ServerCert {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const hosts = [
    'localhost',
    '127.0.0.1',
    '::1',
    ...(extraHost && !['0.0.0.0', '::'].includes(extraHost) ? [extraHost] : []),
  ];
  const now = Date.now();
  const name = seq(set(seq(oid(OID.commonName), utf8('karpenter-ts-sim'))));
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial()),
    seq(oid(OID.ecdsaWithSha256)),
    name,
    seq(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + 30 * DAY_MS))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions([...new Set(hosts)]))),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = seq(tbs, seq(oid(OID.ecdsaWithSha256)), bitString(signature));
  return { key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), cert: pem('CERTIFICATE', der) };
}

/** CA (it signs itself), used for signatures and certificates, for TLS servers, with the hosts as SANs. */
function extensions(hosts: readonly string[]): Buffer[] {
  const sans = hosts.map((h) => (isIP(h) ? tagged(0x87, ipBytes(h)) : tagged(0x82, Buffer.from(h, 'ascii'))));
  return [
    extension(OID.basicConstraints, true, seq(boolean(true))),
    // digitalSignature (bit 0) and keyCertSign (bit 5): 1000 0100, the last two bits unused.
    extension(OID.keyUsage, true, tagged(0x03, Buffer.from([2, 0x84]))),
    extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
    extension(OID.subjectAltName, false, seq(...sans)),
  ];
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const words = (s: string): number[] => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const h = words(head);
  const t = words(tail);
  const all = ip.includes('::') ? [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t] : h;
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, i * 2));
  return out;
}

/** A positive 16-byte serial number. */
function serial(): Buffer {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01;
  return b;
}

// DER: tag, length, content.
function tagged(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

const seq = (...parts: Buffer[]): Buffer => tagged(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => tagged(0x31, Buffer.concat(parts));
const explicit = (n: number, inner: Buffer): Buffer => tagged(0xa0 + n, inner);
const integer = (b: Buffer): Buffer => tagged(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const boolean = (v: boolean): Buffer => tagged(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string): Buffer => tagged(0x0c, Buffer.from(s, 'utf8'));
const bitString = (b: Buffer): Buffer => tagged(0x03, Buffer.concat([Buffer.from([0]), b]));
const octets = (b: Buffer): Buffer => tagged(0x04, b);
const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  seq(oid(id), ...(critical ? [boolean(true)] : []), octets(value));

function utcTime(d: Date): Buffer {
  const iso = d.toISOString(); // 2025-01-01T00:00:00.000Z -> 250101000000Z
  return tagged(
    0x17,
    Buffer.from(
      `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`,
      'ascii',
    ),
  );
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tagged(0x06, Buffer.from(bytes));
}

function pem(label: string, der: Buffer): string {
  const body = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}
