// Runs a scenario against a simulation, printing a timeline. On a manual clock waits jump straight to
// the next timer; on a scaled clock they poll while simulated time runs.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Kind } from '../../controller/operator/kube.ts';
import type { KObject } from '../apiserver/index.ts';
import type { Simulation } from '../environment.ts';
import { Timeline } from '../timeline.ts';
import { nodeTable } from '../view.ts';
import { evaluate } from './conditions.ts';
import type { Scenario, Step } from './format.ts';

interface RunOptions {
  /** Where relative `apply` paths start (the scenario file's folder). */
  readonly baseDir: string;
  readonly print: (line: string) => void;
  /** Print the node table after each wait (default true). */
  readonly tables?: boolean;
}

interface RunResult {
  readonly ok: boolean;
  readonly failures: readonly string[];
  /** Simulated time the scenario took. */
  readonly simMs: number;
}

const wall = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` or `maxMs` of simulated time; true when done. */
async function waitUntil(sim: Simulation, done: () => boolean, maxMs: number): Promise<boolean> {
  if (sim.clock.mode === 'manual') {
    try {
      await sim.clock.advanceUntil(done, maxMs);
      return true;
    } catch {
      return done();
    }
  }
  const deadline = sim.clock.now() + maxMs;
  while (!done()) {
    if (sim.clock.now() >= deadline) return false;
    await wall(20);
  }
  return true;
}

/** Capacity errors from now on (ice), or capacity back everywhere (clearIce). */
function cloudFault(sim: Simulation, s: Extract<Step, { kind: 'ice' | 'clearIce' }>, timeline: Timeline): boolean {
  if (s.kind === 'clearIce') {
    sim.provider.unblockCapacity();
    timeline.line('cloud: capacity is back everywhere');
    return true;
  }
  const rule = {
    ...(s.instanceType ? { instanceType: s.instanceType } : {}),
    ...(s.zone ? { zone: s.zone } : {}),
    ...(s.capacityType ? { capacityType: s.capacityType } : {}),
  };
  sim.provider.blockCapacity(rule);
  timeline.line(
    `cloud: no capacity from now on for ${[s.capacityType ?? 'any capacity type', s.instanceType ?? 'any type', s.zone ?? 'any zone'].join(' / ')}`,
  );
  return true;
}

/** The cloud sends the interruption event for the first running instance the step names. */
function interrupt(
  sim: Simulation,
  s: Extract<Step, { kind: 'interrupt' }>,
  timeline: Timeline,
  failures: string[],
): boolean {
  const claims = sim.cluster.store
    .list('nodeclaims.karpenter.sh')
    .filter(
      (c) =>
        !c.metadata.deletionTimestamp &&
        (!s.node || (c.status as { nodeName?: string } | undefined)?.nodeName === s.node) &&
        (!s.nodePool || c.metadata.labels?.['karpenter.sh/nodepool'] === s.nodePool),
    );
  const target = claims
    .map((c) => (c.status as { providerID?: string } | undefined)?.providerID)
    .find(
      (pid) => pid && sim.provider.all().some((i) => i.instance.providerID === pid && i.instance.state === 'running'),
    );
  if (!target) {
    failures.push(`interrupt: no running instance matches ${JSON.stringify({ node: s.node, nodePool: s.nodePool })}`);
    timeline.line(`interrupt: nothing to interrupt (${s.node ?? s.nodePool ?? 'any node'})`);
    return false;
  }
  sim.provider.interrupt(target, s.event, s.state ? { state: s.state } : {});
  timeline.line(`cloud: ${s.event}${s.state ? ` (${s.state})` : ''} for ${target}`);
  return true;
}

/** The first Ready node the step names (by name or NodePool) reports the condition. */
function setNodeCondition(
  sim: Simulation,
  s: Extract<Step, { kind: 'nodeCondition' }>,
  timeline: Timeline,
  failures: string[],
): boolean {
  const isReady = (n: KObject): boolean =>
    ((n.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
      (c) => c.type === 'Ready' && c.status === 'True',
    );
  const node = sim.cluster.store
    .list('nodes')
    .find(
      (n) =>
        !n.metadata.deletionTimestamp &&
        isReady(n) &&
        (!s.node || n.metadata.name === s.node) &&
        (!s.nodePool || n.metadata.labels?.['karpenter.sh/nodepool'] === s.nodePool),
    );
  if (
    !node ||
    !sim.cluster.kubelet.setNodeCondition(node.metadata.name!, {
      type: s.type,
      status: s.status,
      ...(s.reason ? { reason: s.reason } : {}),
    })
  ) {
    failures.push(`nodeCondition: no Ready node matches ${JSON.stringify({ node: s.node, nodePool: s.nodePool })}`);
    timeline.line(`nodeCondition: no node to change (${s.node ?? s.nodePool ?? 'any node'})`);
    return false;
  }
  timeline.line(`node ${node.metadata.name}: condition ${s.type}=${s.status}${s.reason ? ` (${s.reason})` : ''}`);
  return true;
}

export async function runScenario(sim: Simulation, scenario: Scenario, opts: RunOptions): Promise<RunResult> {
  const timeline = new Timeline(sim, opts.print);
  const failures: string[] = [];
  const table = (): void => {
    for (const l of nodeTable(sim)) opts.print(`        ${l}`);
  };
  const run = async (s: Step): Promise<boolean> => {
    switch (s.kind) {
      case 'say':
        timeline.line(`# ${s.text}`);
        return true;
      case 'apply': {
        const text = s.yaml ?? (await readFile(resolve(opts.baseDir, s.file!), 'utf8'));
        const objs = await sim.apply(text);
        timeline.line(
          `apply ${s.file ?? '(inline)'}: ${objs.map((o) => `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`).join(', ')}`,
        );
        return true;
      }
      case 'delete':
        timeline.line(`delete ${s.resource}/${s.name}`);
        await sim.kube.delete(s.resource as Kind, s.name, s.namespace ? { namespace: s.namespace } : {});
        return true;
      case 'scale':
        if ('nodePool' in s) {
          timeline.line(`scale nodepool/${s.nodePool} to ${s.replicas} replicas`);
          await sim.kube.patch('NodePool', s.nodePool, { spec: { replicas: s.replicas } });
          return true;
        }
        timeline.line(`scale deployment/${s.deployment} to ${s.replicas} replicas`);
        await sim.kube.patch(
          'Deployment',
          s.deployment,
          { spec: { replicas: s.replicas } },
          { namespace: s.namespace },
        );
        return true;
      case 'wait': {
        const until = sim.clock.now() + s.ms;
        await waitUntil(sim, () => sim.clock.now() >= until, s.ms + 1);
        if (opts.tables ?? true) table();
        return true;
      }
      case 'waitFor': {
        const ok = await waitUntil(sim, () => evaluate(sim, s.conditions).ok, s.timeoutMs);
        const { report } = evaluate(sim, s.conditions);
        timeline.line(ok ? `reached: ${report}` : `NOT reached within ${s.timeoutMs / 1000}s: ${report}`);
        if (!ok) failures.push(`waitFor: ${report}`);
        if (opts.tables ?? true) table();
        return ok;
      }
      case 'expect': {
        const { ok, report } = evaluate(sim, s.conditions);
        timeline.line(`${ok ? 'expected and found' : 'EXPECTATION FAILED'}: ${report}`);
        if (!ok) failures.push(`expect: ${report}`);
        return true;
      }
      case 'ice':
      case 'clearIce':
        return cloudFault(sim, s, timeline);
      case 'interrupt':
        return interrupt(sim, s, timeline, failures);
      case 'nodeCondition':
        return setNodeCondition(sim, s, timeline, failures);
      case 'table':
        table();
        return true;
    }
  };
  try {
    for (const s of scenario.steps) {
      if (!(await run(s))) break;
    }
  } finally {
    timeline.close();
  }
  return { ok: failures.length === 0, failures, simMs: timeline.elapsed() };
}
