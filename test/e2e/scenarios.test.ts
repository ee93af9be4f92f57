// The feature scenarios under scenarios/, each run as `karpenter-ts sim --scenario FILE --speed 0` would run
// it (event to event on the simulated clock), with the lines that show the feature at work.
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../cli/io.ts';
import { run } from '../../cli/commands/sim.ts';

async function scenario(file: string): Promise<string> {
  const io = memoryIo();
  const path = new URL(`../../scenarios/${file}`, import.meta.url).pathname;
  const code = await run(['--scenario', path, '--speed', '0'], io);
  expect(io.stdout, io.stdout).toMatch(/PASSED: scenario/);
  expect(code).toBe(0);
  return io.stdout;
}

describe('feature scenarios', () => {
  it('node-repair: a NotReady node is replaced after the 30-minute toleration and its pods run again', async () => {
    const out = await scenario('node-repair.yaml');
    expect(out).toMatch(/\[00:4\d\] node \S+: condition Ready=False/);
    expect(out).toMatch(/\[30:4\d\] nodeclaim \S+ is being deleted/);
    expect(out).toMatch(
      /reached: nodes=1 \(want 1\), readyNodes=1 \(want 1\), nodeClaims=1 \(want 1\), runningPods=3 \(want 3\)/,
    );
  });

  it('static-nodepool: replicas kept through scaling (under limits.nodes), idleness and drift', async () => {
    const out = await scenario('static-nodepool.yaml');
    expect(out).toMatch(/reached: readyNodes=2 \(want 2\), nodeClaims=2 \(want 2\)/);
    expect(out).toMatch(/expected and found: nodes=4 \(want 4\), nodeClaims=4 \(want 4\)/);
    expect(out).toMatch(
      /expected and found: nodes=2 \(want 2\), nodeClaims=2 \(want 2\), driftedNodeClaims=0 \(want 0\)/,
    );
    expect(out.match(/is being disrupted \(Drifted\)/g)).toHaveLength(2);
    expect(out).not.toMatch(/being disrupted \((Underutilized|Empty)\)/);
  });

  it('node-overlay: an overlaid price makes consolidation replace a node the catalog alone would keep', async () => {
    const out = await scenario('node-overlay.yaml');
    expect(out).toMatch(/launched: m5\.xlarge in \S+, on-demand/);
    expect(out).toMatch(/Consolidation candidate: replace: \[\S+\] -> \[1 replacement\] \(savings: \$0\.70\)/);
    expect(out).toMatch(/launched: r5\.xlarge in \S+, on-demand/);
    expect(out).toMatch(/reached: runningPods=1 \(want 1\)/);
    expect(out).not.toMatch(/InsufficientCapacity/);
    expect(out).toMatch(/PASSED: scenario node-overlay/);
  });

  it('capacity-buffer: the buffer launches room with no pod, keeps it through consolidation, the pods use it at once and it refills', async () => {
    const out = await scenario('capacity-buffer.yaml');
    expect(out).toMatch(
      /expected and found: nodes=1 \(want 1\), nodeClaims=1 \(want 1\), events DisruptionTerminating=0 \(want 0\)/,
    );
    // Scaled at 30:4x, the three pods run within seconds on the room: no node is launched for them.
    expect(out).toMatch(/\[30:4\d\] scale deployment\/inflate to 3 replicas/);
    expect(out).toMatch(/\[30:4\d\] reached: runningPods=3 \(want 3\)/);
    expect(out).toMatch(/nodeclaim \S+ created \(nodepool default; requests cpu 3, memory 3Gi, 3 pods;/);
    expect(out).toMatch(/reached: readyNodes=2 \(want 2\), nodeClaims=2 \(want 2\)/);
    expect(out).toMatch(/is being disrupted \(Empty\)/);
  });

  it('default-spread: the default zone constraint from SCHEDULER_CONFIG spreads a Deployment over three zones', async () => {
    const out = await scenario('default-spread.yaml');
    expect(out).toMatch(
      /expected and found: nodes=3 \(want 3\), pendingPods=0 \(want 0\), zones of running pods=3 \(want 3\)/,
    );
    expect(
      out
        .match(/launched: \S+ in ap-northeast-2([abc])/g)
        ?.slice(0, 3)
        .map((l) => l.slice(-1))
        .sort(),
    ).toEqual(['a', 'b', 'c']);
  });
});
