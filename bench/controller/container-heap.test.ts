// The controller bench's container emulation (BENCH_CONTROLLER_MEMORY_LIMIT_MIB): the Node flags it passes must give
// every thread the heap limit Node gives a thread in a memory cgroup of that size (524 MiB at 1 GiB, measured in
// such a cgroup: docs/controller-benchmark.md, "The heap's growing factor").
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { containerHeapFlags } from './harness.ts';

/** heap_size_limit (MiB) of the main thread and of a worker in a Node process started with `flags`. */
function limits(flags: readonly string[]): number[] {
  const script = `
    const { getHeapStatistics } = require('node:v8');
    const { Worker } = require('node:worker_threads');
    const mib = () => getHeapStatistics().heap_size_limit / 1048576;
    const w = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit / 1048576)", { eval: true });
    w.once('message', (m) => { console.log(JSON.stringify([mib(), m])); w.terminate(); });`;
  const r = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as number[];
}

describe('containerHeapFlags', () => {
  it('gives every thread the heap limit of a 1 GiB container', () => {
    expect(containerHeapFlags('1024')).toEqual(['--max-old-space-size=512', '--max-semi-space-size=4']);
    expect(limits(containerHeapFlags('1024'))).toEqual([524, 524]);
  });

  it('scales with the limit and caps the semi-space at V8 default maximum', () => {
    expect(limits(containerHeapFlags('2048'))).toEqual([1048, 1048]);
    expect(containerHeapFlags('8192')).toEqual(['--max-old-space-size=4096', '--max-semi-space-size=16']);
  });

  it('passes nothing when unset and names the variable on bad input', () => {
    expect(containerHeapFlags(undefined)).toEqual([]);
    expect(containerHeapFlags('')).toEqual([]);
    expect(() => containerHeapFlags('1Gi')).toThrow(/BENCH_CONTROLLER_MEMORY_LIMIT_MIB: "1Gi"/);
    expect(() => containerHeapFlags('100')).toThrow(/>= 256/);
  });
});
