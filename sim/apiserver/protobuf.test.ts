// Protobuf request bodies: the bytes kubectl 1.32.4 sent for `kubectl create namespace team-b`,
// `kubectl create deployment web --image=nginx --replicas=3 --port=80 -n team-b` and
// `kubectl create deployment zero --image=nginx --replicas=0`, and the DeleteOptions of `kubectl drain
// --disable-eviction`'s pod deletes (recorded from a loopback server), decoded to the objects
// `--dry-run=client -o json` prints for the same commands; malformed and unknown input refused
// with a message naming what is wrong.
import { describe, expect, it } from 'vitest';
import { decodeProtobufBody, messageOf } from './protobuf.ts';
import { PROTOBUF_MESSAGES } from './protobuf-schema.ts';

const NAMESPACE = Buffer.from('azhzAAoPCgJ2MRIJTmFtZXNwYWNlEh4KFgoGdGVhbS1iEgAaACIAKgAyADgAQgASABoCCgAaACIA', 'base64');
const DEPLOYMENT = Buffer.from(
  'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50Er4BCiUKA3dlYhIAGgZ0ZWFtLWIiACoAMgA4AEIAWgoKA2FwcBIDd2ViEoYBCAMSDAoKCgNhcHASA3dlYhpsChwKABIAGgAiACoAMgA4AEIAWgoKA2FwcBIDd2ViEkwSLgoFbmdpbngSBW5naW54KgAyCgoAEAAYUCIAKgBCAGoAcgCAAQCIAQCQAQCiAQAaADIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAIgIKACgAOAAaDAgAEAAYACAAKAA4ABoAIgA=',
  'base64',
);
const DELETE_OPTIONS = Buffer.from('azhzAAoTCgJ2MRINRGVsZXRlT3B0aW9ucxIAGgAiAA==', 'base64');
const ZERO = Buffer.from(
  'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50Eq8BCiEKBHplcm8SABoAIgAqADIAOABCAFoLCgNhcHASBHplcm8SfAgAEg0KCwoDYXBwEgR6ZXJvGmEKHQoAEgAaACIAKgAyADgAQgBaCwoDYXBwEgR6ZXJvEkASIgoFbmdpbngSBW5naW54KgBCAGoAcgCAAQCIAQCQAQCiAQAaADIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAIgIKACgAOAAaDAgAEAAYACAAKAA4ABoAIgA=',
  'base64',
);

/** Protobuf encoding for the malformed-input cases: a tag and a length-delimited payload. */
const varint = (n: number): number[] => {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return out;
};
const field = (n: number, payload: Buffer | string): Buffer => {
  const b = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.from([...varint((n << 3) | 2), ...varint(b.length), ...b]);
};
const envelope = (apiVersion: string, kind: string, raw: Buffer): Buffer =>
  Buffer.concat([
    Buffer.from('k8s\0', 'latin1'),
    field(1, Buffer.concat([field(1, apiVersion), field(2, kind)])),
    field(2, raw),
  ]);

describe('protobuf request bodies', () => {
  it('decodes kubectl create namespace', () => {
    expect(decodeProtobufBody(NAMESPACE)).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-b', creationTimestamp: null },
      spec: {},
      status: {},
    });
  });

  it('decodes kubectl create deployment, keeping replicas: 0 and dropping the zero values JSON omits', () => {
    const template = (app: string, ports?: object) => ({
      metadata: { creationTimestamp: null, labels: { app } },
      spec: { containers: [{ name: 'nginx', image: 'nginx', ...(ports ? { ports } : {}), resources: {} }] },
    });
    expect(decodeProtobufBody(DEPLOYMENT)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team-b', creationTimestamp: null, labels: { app: 'web' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: template('web', [{ containerPort: 80 }]),
        strategy: {},
      },
      status: {},
    });
    expect((decodeProtobufBody(ZERO) as { spec: { replicas: number } }).spec.replicas).toBe(0);
  });

  it("decodes drain's DeleteOptions", () => {
    expect(decodeProtobufBody(DELETE_OPTIONS)).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions' });
  });

  it('decodes times, quantities and int-or-strings to their JSON forms', () => {
    const meta = field(1, Buffer.concat([field(1, 'p'), field(8, Buffer.from([0x08, ...varint(1767225600)]))]));
    const resources = field(8, field(2, Buffer.concat([field(1, 'cpu'), field(2, field(1, '250m'))])));
    // Probe's handler (field 1) is inline in JSON: livenessProbe.httpGet, not livenessProbe.handler.httpGet.
    const probe = field(
      10,
      field(
        1,
        field(2, Buffer.concat([field(1, '/healthz'), field(2, Buffer.from([0x08, 0x01, ...field(3, 'http')]))])),
      ),
    );
    const pod = Buffer.concat([meta, field(2, field(2, Buffer.concat([field(1, 'c'), resources, probe])))]);
    expect(decodeProtobufBody(envelope('v1', 'Pod', pod))).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        containers: [
          {
            name: 'c',
            resources: { requests: { cpu: '250m' } },
            livenessProbe: { httpGet: { path: '/healthz', port: 'http' } },
          },
        ],
      },
    });
  });

  it('refuses what it cannot decode, naming it', () => {
    expect(() => decodeProtobufBody(Buffer.from('{"kind":"Namespace"}'))).toThrow(
      /does not start with the "k8s\\0" envelope/,
    );
    expect(() => decodeProtobufBody(envelope('v1', 'Secret', Buffer.alloc(0)))).toThrow(
      /k8s\.io\.api\.core\.v1\.Secret, which this server cannot decode/,
    );
    expect(() => decodeProtobufBody(envelope('v1', 'Namespace', field(9, 'x')))).toThrow(
      /field 9 in Namespace \(k8s\.io\.api\.core\.v1\.Namespace\)/,
    );
    expect(() =>
      decodeProtobufBody(Buffer.concat([envelope('v1', 'Namespace', field(1, field(1, 'abc'))).subarray(0, -2)])),
    ).toThrow(/malformed: a length-delimited field runs past the end/);
    expect(() => decodeProtobufBody(envelope('', '', Buffer.alloc(0)))).toThrow(/names no kind/);
    // A label key that would swap the labels object's prototype, as in JSON bodies.
    const polluting = field(
      1,
      Buffer.concat([field(1, 'a'), field(11, Buffer.concat([field(1, '__proto__'), field(2, 'x')]))]),
    );
    expect(() => decodeProtobufBody(envelope('v1', 'Namespace', polluting))).toThrow(
      /field named "__proto__" \(at Namespace.metadata.labels\)/,
    );
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  it('maps kinds to their messages, and has a table for every message a table refers to', () => {
    expect(messageOf('v1', 'Namespace')).toBe('k8s.io.api.core.v1.Namespace');
    expect(messageOf('apps/v1', 'Deployment')).toBe('k8s.io.api.apps.v1.Deployment');
    expect(messageOf('policy/v1', 'Eviction')).toBe('k8s.io.api.policy.v1.Eviction');
    expect(messageOf('resource.k8s.io/v1', 'ResourceClaim')).toBe('k8s.io.api.resource.v1.ResourceClaim');
    expect(messageOf('meta.k8s.io/v1', 'DeleteOptions')).toBe('k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions');
    const referenced = Object.values(PROTOBUF_MESSAGES)
      .flatMap((spec) =>
        (spec ? spec.split('|') : []).flatMap((f) =>
          f
            .split(' ')[2]!
            .replace(/[*?^]$/, '')
            .replace(/^map<[^,]+,(.+)>$/, '$1'),
        ),
      )
      .filter((t) => t.includes('.'));
    expect(referenced.filter((t) => PROTOBUF_MESSAGES[t] === undefined)).toEqual([]);
  });
});
