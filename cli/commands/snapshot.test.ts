// `karpenter-ts snapshot` against the simulated API server over HTTP (client-node, as against a real
// cluster), through the generator of the committed example, which must still produce the same objects.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../examples/snapshots/generate.ts';
import { manualClock } from '../../sim/clock.ts';
import { startSimCluster } from '../../sim/cluster/cluster.ts';
import { kubeConfigText } from '../../sim/kubeconfig.ts';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';
import { decodeSnapshot } from '../whatif/format.ts';

const COMMITTED = fileURLToPath(new URL('../../examples/snapshots/inflate.msgpack', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-snapshot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function snapshot(...args: string[]): Promise<{ code: number; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await main(['snapshot', ...args], io);
  return { code, err: io.stderr };
}

describe('karpenter-ts snapshot', () => {
  it('lists the simulated cluster into a msgpack file equal to the committed example', async () => {
    const out = join(dir, 'inflate.msgpack');
    const said = await generate(out);
    expect(said).toMatch(
      /^wrote .*inflate\.msgpack: 4 Node, 17 Pod, 1 NodePool, 4 NodeClaim, 1 EC2NodeClass, 1 DaemonSet, 0 PodDisruptionBudget from http:\/\/127\.0\.0\.1:\d+\n$/,
    );
    const fresh = decodeSnapshot(readFileSync(out), 'fresh');
    const committed = decodeSnapshot(readFileSync(COMMITTED), 'committed');
    expect(fresh.createdAt).toBe('2026-11-30T11:30:00.000Z');
    expect(fresh.source.server).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Everything but the ephemeral port matches: regenerate with examples/snapshots/generate.ts when it does not.
    expect(fresh.objects).toEqual(committed.objects);
    const pod = fresh.objects.Pod.find((p) => (p['metadata'] as { name: string }).name.startsWith('inflate-'))!;
    expect(pod).toMatchObject({
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { nodeName: expect.stringMatching(/^ip-10-0-/) },
    });
    expect(typeof (pod['metadata'] as { creationTimestamp: unknown }).creationTimestamp).toBe('string');
  });

  it('needs -o and a loadable kubeconfig (exit 2), and says when the cluster cannot be listed (exit 1)', async () => {
    expect((await snapshot()).code).toBe(2);
    const missing = await snapshot('-o', 'x.msgpack', '--kubeconfig', 'nope.yaml');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('cannot load the kubeconfig');
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    writeFileSync(
      join(dir, 'kc.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'c',
        clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      }),
    );
    const down = await snapshot('-o', 'x.msgpack', '--kubeconfig', 'kc.json');
    expect(down.code).toBe(1);
    expect(down.err).toContain(`karpenter-ts snapshot: listing http://127.0.0.1:${port} failed:`);
  });
});

describe('karpenter-ts snapshot carries no secrets', () => {
  it('leaves env values, command, args, secret items, userData and last-applied out, and writes the file 0600 (over a 0644 one too)', async () => {
    const cluster = await startSimCluster({ clock: manualClock() });
    try {
      cluster.api.create('pods', 'default', {
        metadata: {
          name: 'app',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"value":"hunter2"}' },
        },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app',
              args: ['--password=hunter2'],
              resources: { requests: { cpu: '1' } },
              env: [
                { name: 'DB_PASSWORD', value: 'hunter2' },
                { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'db', key: 'token' } } },
              ],
            },
          ],
          volumes: [{ name: 'creds', secret: { secretName: 'db', items: [{ key: 'hunter2-key', path: 'pw' }] } }],
        },
      });
      cluster.api.create('ec2nodeclasses', undefined, {
        metadata: { name: 'default' },
        spec: { role: 'r', amiSelectorTerms: [{ alias: 'al2023@latest' }], userData: 'echo hunter2' },
      });
      writeFileSync(join(dir, 'sim.kubeconfig'), kubeConfigText(cluster));
      const out = join(dir, 'secret.msgpack');
      writeFileSync(out, 'old');
      chmodSync(out, 0o644);
      const r = await snapshot('-o', 'secret.msgpack', '--kubeconfig', 'sim.kubeconfig');
      expect(r.code, r.err).toBe(0);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const bytes = readFileSync(out);
      expect(bytes.includes('hunter2')).toBe(false);
      expect(bytes.includes('last-applied-configuration')).toBe(false);
      const pod = decodeSnapshot(bytes, 'secret').objects.Pod[0] as {
        spec: { containers: { env: unknown[] }[]; volumes: unknown[] };
      };
      expect(pod.spec.containers[0]!.env).toEqual([
        { name: 'DB_PASSWORD' },
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'db', key: 'token' } } },
      ]);
      expect(pod.spec.volumes).toEqual([{ name: 'creds', secret: { secretName: 'db' } }]);
    } finally {
      await cluster.close();
    }
  });
});
