import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../domain/types.ts';
import { PodInterner } from './intern.ts';

const INTERN_TS = fileURLToPath(new URL('./intern.ts', import.meta.url));

/**
 * How many string objects with the node name three interned pods hold, counted in a heap snapshot of a process of
 * its own: a snapshot of the test runner's heap (every test file's objects) takes minutes. Each pod's node name is
 * built at run time, as a decoder makes them (a string object of its own).
 */
function nodeNameCopies(): number {
  const script = `
    const { getHeapSnapshot } = await import('node:v8');
    const { PodInterner } = await import(${JSON.stringify(INTERN_TS)});
    const i = new PodInterner();
    const node = () => ['ip-10-0-0-1.', 'interned-test-', 'zone.compute.internal'].join('');
    const pod = (name) => ({ uid: 'u-' + name, namespace: 'default', name, labels: { app: 'web' }, annotations: {},
      requests: { cpu: 390 }, nodeSelector: {}, tolerations: [], topologySpreadConstraints: [], hostPorts: [],
      creationTimestamp: 1, phase: 'Running', nodeName: node() });
    const held = [1, 2, 3].map((n) => i.intern(pod('p' + n)));
    if (held.some((p) => p.nodeName !== node())) throw new Error('interning changed a node name');
    let json = '';
    for await (const chunk of getHeapSnapshot()) json += chunk;
    const snap = JSON.parse(json);
    const fields = snap.snapshot.meta.node_fields;
    const [type, name] = [fields.indexOf('type'), fields.indexOf('name')];
    const kinds = snap.snapshot.meta.node_types[0];
    // Counted with the held string itself (a string made to ask with would be one more copy).
    const content = held[0].nodeName;
    let n = 0;
    for (let k = 0; k < snap.nodes.length; k += fields.length)
      if (kinds[snap.nodes[k + type]] === 'string' && snap.strings[snap.nodes[k + name]] === content) n++;
    process.stdout.write(String(n));`;
  return Number(
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

const pod = (name: string, app: string, extra: Partial<Record<keyof Pod, unknown>> = {}): Pod =>
  ({
    uid: `u-${name}`,
    namespace: 'default',
    name,
    labels: { app },
    annotations: {},
    requests: { cpu: 390, memory: 2 ** 30, pods: 1 },
    nodeSelector: {},
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
    topologySpreadConstraints: [],
    hostPorts: [],
    creationTimestamp: 1,
    phase: 'Running',
    ...extra,
  }) as unknown as Pod;

describe('PodInterner', () => {
  it('gives pods with equal parts the same part objects, and keeps each pod its own fields', () => {
    const i = new PodInterner();
    const a = i.intern(pod('a', 'web'));
    const b = i.intern(pod('b', 'web'));
    const c = i.intern(pod('c', 'db'));
    expect(b).toEqual(pod('b', 'web'));
    expect(b.labels).toBe(a.labels);
    expect(b.requests).toBe(a.requests);
    expect(b.tolerations).toBe(a.tolerations);
    expect(c.labels).not.toBe(a.labels);
    expect(c.labels).toEqual({ app: 'db' });
    expect(c.requests).toBe(a.requests);
    expect([a.name, b.name, c.name]).toEqual(['a', 'b', 'c']);
  });

  it('interns a pod the caller owns in place: the same object, with the shared parts and strings, fields in order', () => {
    const i = new PodInterner();
    const a = i.intern(pod('a', 'web'));
    const b = pod('b', 'web', { nodeName: ['ip-1', '.internal'].join('') });
    const keys = Object.keys(b);
    expect(i.intern(b, true)).toBe(b);
    expect(b.labels).toBe(a.labels);
    expect(b.tolerations).toBe(a.tolerations);
    expect(Object.keys(b)).toEqual(keys);
    // Not owned: the pod given is left as it was.
    const c = pod('c', 'web');
    const labels = c.labels;
    expect(i.intern(c)).not.toBe(c);
    expect(c.labels).toBe(labels);
  });

  it('never shares a part whose JSON would not say all of it (undefined fields, Maps, Sets)', () => {
    const i = new PodInterner();
    const a = i.intern(pod('a', 'web', { nodeSelector: { zone: undefined } }));
    const b = i.intern(pod('b', 'web', { nodeSelector: {} }));
    expect(b.nodeSelector).not.toBe(a.nodeSelector);
    const m = i.intern(pod('m', 'web', { affinity: { sets: new Set(['x']) } }));
    const n = i.intern(pod('n', 'web', { affinity: { sets: new Set(['y']) } }));
    expect(n.affinity).not.toBe(m.affinity);
  });

  it('keeps one copy of each repeated string (namespace, phase, node name) and leaves the values as they were', () => {
    const i = new PodInterner();
    // Strings built at run time, so that each pod's are copies of their own.
    const node = (n: number) => ['ip-10-0-0-', String(n), '.compute.internal'].join('');
    const a = i.intern(pod('a', 'web', { nodeName: node(1), phase: ['Run', 'ning'].join('') }));
    const held = i.size;
    const b = i.intern(pod('b', 'web', { nodeName: node(1), phase: ['Run', 'ning'].join('') }));
    expect(i.size).toBe(held);
    expect([a.nodeName, b.nodeName, b.phase, b.namespace]).toEqual([node(1), node(1), 'Running', 'default']);
    i.intern(pod('c', 'web', { nodeName: node(2) }));
    expect(i.size).toBe(held + 1);
  });

  it("shares a patch's repeated strings and keeps its other fields as they are", () => {
    const i = new PodInterner();
    const node = (n: number) => ['ip-10-0-0-', String(n), '.compute.internal'].join('');
    const a = i.intern(pod('a', 'web', { nodeName: node(1) }));
    const fields = { nodeName: node(1), phase: ['Run', 'ning'].join(''), unschedulable: false, priority: 3 };
    const patched = i.patch(fields);
    expect(patched).toEqual(fields);
    expect(patched.nodeName).toBe(a.nodeName);
    const held = i.size;
    expect(i.patch({ nodeName: node(1), priority: 3 })).toEqual({ nodeName: node(1), priority: 3 });
    expect(i.size).toBe(held);
    const alone = { priority: 1 };
    expect(i.patch(alone)).toBe(alone);
  });

  it('forgets its parts on clear: later pods share new copies', () => {
    const i = new PodInterner();
    const a = i.intern(pod('a', 'web'));
    expect(i.size).toBeGreaterThan(0);
    i.clear();
    expect(i.size).toBe(0);
    const b = i.intern(pod('b', 'web'));
    expect(b.labels).toEqual(a.labels);
    expect(b.labels).not.toBe(a.labels);
  });

  it('holds one string for a value many pods repeat, where each decoded pod brought a copy of its own', () => {
    expect(nodeNameCopies()).toBe(1);
  });
});
