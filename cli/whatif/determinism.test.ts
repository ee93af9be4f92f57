// The same snapshots give the same reports on a quiet machine and a loaded one (issue: "the same snapshot gives
// the same report on any machine and load"). The planner's searches are bounded by work, not wall-clock time,
// so neither CPU contention nor the batch's concurrency may change a report: only its `timing` may differ.
// The load is real: a busy thread spinning while a two-job batch runs (besides whatever else the machine runs;
// one thread, so the test does not starve the suite's other files).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/snapshots/inflate.msgpack', import.meta.url));
const GUIDE = fileURLToPath(new URL('../../examples/guide/', import.meta.url));
const NOW = ['--now', '2026-11-30T11:30:00Z'];
const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-whatif-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fragmented 40-node cluster of the guide's NodePool: mixed types and zones, each node about half full. */
function fragmented(): string {
  const types: readonly [string, number, number][] = [
    ['m6i.xlarge', 3920, 14],
    ['c6i.2xlarge', 7910, 13],
    ['r6i.xlarge', 3920, 29],
    ['m6i.2xlarge', 7910, 29],
  ];
  const docs = [readFileSync(join(GUIDE, 'guide-01.yaml'), 'utf8'), readFileSync(join(GUIDE, 'guide-03.yaml'), 'utf8')];
  for (let i = 0; i < 40; i++) {
    const [type, cpu, mem] = types[(i * 7) % types.length]!;
    const zone = `ap-northeast-2${'abc'[i % 3]}`;
    const name = `ip-10-2-0-${i}.ap-northeast-2.compute.internal`;
    docs.push(`apiVersion: v1
kind: Node
metadata: {name: ${name}, labels: {node.kubernetes.io/instance-type: ${type}, topology.kubernetes.io/zone: ${zone}, karpenter.sh/nodepool: default, karpenter.sh/capacity-type: ${i % 4 === 0 ? 'spot' : 'on-demand'}}}
spec: {providerID: "aws:///${zone}/i-${i}"}
status: {allocatable: {cpu: ${cpu}m, memory: ${mem}Gi, pods: "58"}, conditions: [{type: Ready, status: "True"}]}`);
    for (let j = 0, used = 0; used < cpu * 0.45; j++) {
      const c = [100, 250, 500, 1000][(i + j) % 4]!;
      used += c;
      docs.push(`apiVersion: v1
kind: Pod
metadata: {name: app-${i}-${j}, namespace: default, labels: {app: app-${j % 5}}}
spec: {nodeName: ${name}, containers: [{name: c, resources: {requests: {cpu: ${c}m, memory: ${[256, 512, 1024][j % 3]}Mi}}}]}
status: {phase: Running}`);
    }
  }
  return docs.join('\n---\n');
}

async function whatif(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await main(['whatif', ...args], io);
  return { code, out: io.stdout, err: io.stderr };
}

/** A thread spinning until stopped. */
function loadACore(): () => Promise<void> {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const spin =
    'const { workerData } = require("node:worker_threads"); let x = 0; while (Atomics.load(workerData, 0) === 0) x++;';
  const worker = new Worker(spin, { eval: true, workerData: stop });
  return async () => {
    Atomics.store(stop, 0, 1);
    await worker.terminate();
  };
}

const withoutTiming = (text: string): unknown => {
  const { timing: _t, ...rest } = JSON.parse(text) as Record<string, unknown>;
  return rest;
};

describe('karpenter-ts whatif: the same report alone and under load', () => {
  it('a two-job batch under load gives each cluster the report it gets alone', async () => {
    writeFileSync(join(dir, 'fragmented.yaml'), fragmented());
    const quiet = [];
    for (const input of [EXAMPLE, 'fragmented.yaml']) {
      const r = await whatif(input, '--mode', 'consolidate', '--json', ...NOW);
      expect(r.code, r.err).toBe(0);
      quiet.push(withoutTiming(r.out));
    }
    // The plan must be worth comparing: the fragmented cluster consolidates in many steps.
    expect((quiet[1] as { moves: unknown[] }).moves.length).toBeGreaterThan(3);
    const stop = loadACore();
    let batch;
    try {
      batch = await whatif(
        EXAMPLE,
        'fragmented.yaml',
        '--mode',
        'consolidate',
        '--jobs',
        '2',
        '--out',
        'loaded',
        ...NOW,
      );
    } finally {
      await stop();
    }
    expect(batch.code, batch.err).toBe(0);
    expect(withoutTiming(readFileSync(join(dir, 'loaded/0-inflate.json'), 'utf8'))).toEqual(quiet[0]);
    expect(withoutTiming(readFileSync(join(dir, 'loaded/1-fragmented.json'), 'utf8'))).toEqual(quiet[1]);
  }, 600_000);
});
