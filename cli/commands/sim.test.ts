// `karpenter-ts sim` end to end on the event-to-event clock (--speed 0): no wall-clock waiting.
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../io.ts';
import { GUIDE_EXAMPLES_DIR } from '../../test/fixtures/guide.ts';
import { run } from './sim.ts';

const KUBECTL = '/usr/bin/kubectl';

async function scenario(steps: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sim-test-'));
  const file = join(dir, 's.yaml');
  await writeFile(
    file,
    `name: test\nsteps:\n  - apply: ${join(GUIDE_EXAMPLES_DIR, 'guide-03.yaml')}\n  - apply: ${join(GUIDE_EXAMPLES_DIR, 'guide-05.yaml')}\n  - apply: ${join(GUIDE_EXAMPLES_DIR, 'guide-08.yaml')}\n${steps}`,
  );
  return file;
}

describe('karpenter-ts sim', () => {
  it('runs a scenario and prints the timeline, the node table and the verdict', async () => {
    const io = memoryIo();
    const file = await scenario(
      '  - scale: { deployment: inflate, replicas: 2 }\n  - waitFor: { runningPods: 2, timeout: 5m }\n  - expect: { nodes: 1, spotNodes: 1 }\n',
    );
    expect(await run(['--scenario', file, '--speed', '0'], io)).toBe(0);
    const out = io.stdout;
    expect(out).toContain('clock event to event');
    expect(out).toMatch(
      /\[00:0\d\] nodeclaim spot-diverse-\w+ created \(nodepool spot-diverse; requests cpu 2, memory 2Gi, 2 pods;/,
    );
    expect(out).toMatch(/nodeclaim spot-diverse-\w+ launched: \S+ in ap-northeast-2[abc], spot, \$0\.\d{4}\/h/);
    expect(out).toMatch(/node ip-10-0-0-1\.ap-northeast-2\.compute\.internal is Ready/);
    expect(out).toContain('NAME');
    expect(out).toMatch(/CPU REQ\/ALLOC/);
    expect(out).toMatch(/cluster: 1 node\(s\), \$0\.\d{4}\/h/);
    expect(out).toMatch(/PASSED: scenario test in 00:\d\d of simulated time/);
  });

  it('runs the capacity-reservation scenario: one reserved node, then one on-demand', async () => {
    const io = memoryIo();
    const file = new URL('../../scenarios/capacity-reservation.yaml', import.meta.url).pathname;
    expect(await run(['--scenario', file, '--speed', '0'], io)).toBe(0);
    expect(io.stdout).toMatch(/nodeclaim reserved-\w+ launched: m7i\.large in ap-northeast-2a, reserved/);
    expect(io.stdout).toMatch(/PASSED: scenario capacity-reservation/);
  });

  it('exits 1 and lists the failed expectation', async () => {
    const io = memoryIo();
    const file = await scenario(
      '  - scale: { deployment: inflate, replicas: 1 }\n  - waitFor: { runningPods: 1, timeout: 5m }\n  - expect: { onDemandNodes: 1 }\n',
    );
    expect(await run(['--scenario', file, '--speed=0'], io)).toBe(1);
    expect(io.stdout).toContain('EXPECTATION FAILED: onDemandNodes=0 (want 1)');
    expect(io.stdout).toContain('FAILED: scenario test');
  });

  it('exits 2 on a scenario that does not parse, before starting anything', async () => {
    const io = memoryIo();
    const dir = await mkdtemp(join(tmpdir(), 'sim-test-'));
    await writeFile(join(dir, 'bad.yaml'), 'name: bad\nsteps:\n  - scale: { deployment: web }\n');
    expect(await run(['--scenario', join(dir, 'bad.yaml')], io)).toBe(2);
    expect(io.stderr).toContain('steps[0].scale.replicas: must be a whole number >= 0');
    expect(await run(['--speed', 'fast'], io)).toBe(2);
    expect(io.stderr).toContain('--speed must be a number >= 0');
  });

  it('exits 2 with one line, not a stack trace, for a region the catalog does not have', async () => {
    const io = memoryIo();
    const file = await scenario('');
    expect(await run(['--scenario', file, '--region', 'xx-nowhere-1'], io)).toBe(2);
    expect(io.stderr).toMatch(
      /^karpenter-ts sim: region xx-nowhere-1 is not in the EC2 catalog \(known: [a-z0-9-, ]+\)\n$/,
    );
  });
});

describe('karpenter-ts sim --serve', () => {
  it('leaves an https API server up that takes the token of the kubeconfig it prints (mode 0600), and no request without it', async () => {
    const io = memoryIo();
    const file = await scenario('  - expect: { nodes: 0 }\n');
    let stop = (): void => {};
    const done = run(['--scenario', file, '--speed', '0', '--serve'], io, new Promise<void>((r) => (stop = r)));
    for (let i = 0; i < 600 && !io.stdout.includes('export KUBECONFIG='); i++)
      await new Promise((r) => setTimeout(r, 50));
    const path = /export KUBECONFIG=(\S+)/.exec(io.stdout)![1]!;
    expect(io.stdout).toMatch(
      /The simulated API server is up at https:\/\/127\.0\.0\.1:\d+ \(.*the kubeconfig holds its token\)/,
    );
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(path);
    const namespaces = await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('kube-system');
    // The same server without the token: 401.
    const anonymous = new k8s.KubeConfig();
    anonymous.loadFromOptions({
      ...JSON.parse(JSON.stringify({ clusters: kc.clusters, contexts: kc.contexts })),
      users: [{ name: kc.getCurrentUser()!.name }],
      currentContext: kc.currentContext,
    });
    await expect(anonymous.makeApiClient(k8s.CoreV1Api).listNamespace()).rejects.toMatchObject({ code: 401 });
    if (existsSync(KUBECTL)) {
      const { stdout } = await promisify(execFile)(
        KUBECTL,
        [`--kubeconfig=${path}`, 'get', 'namespaces', '-o', 'name'],
        { env: { ...process.env, HOME: dirname(path) }, timeout: 30_000 },
      );
      expect(stdout).toContain('namespace/kube-system');
    }
    stop();
    expect(await done).toBe(0);
    expect(existsSync(path)).toBe(false);
  });
});
