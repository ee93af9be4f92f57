// What the controller benchmark puts into the simulated cluster: the guide's EC2NodeClass, NodePools, and pods
// as the API server stores them. Pods are written in-process (the API's own create, not 100,000 HTTP requests)
// and marked PodScheduled=False/Unschedulable as kube-scheduler would, with a scheduler name the simulated
// kube-scheduler leaves alone: the benchmark's binder (binder.ts) places them instead, which keeps the
// simulated scheduler's work (every pending pod against every node) out of the parent's event loop.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseDocuments } from '../../engine/index.ts';
import type { Api, KObject } from '../../sim/apiserver/index.ts';
import { CPUS, MEMS } from '../scenarios/generic.ts';
import { mulberry32, pick } from '../scenarios/random.ts';

export const NAMESPACE = 'default';
export const BENCH_SCHEDULER = 'controller-bench';
const UNSCHEDULABLE_MESSAGE = 'no nodes available to schedule pods';

const guideFile = (name: string): string => fileURLToPath(new URL(`../../examples/guide/${name}`, import.meta.url));

function guideObject(name: string, kind: string): KObject {
  for (const doc of parseDocuments(readFileSync(guideFile(name), 'utf8'))) {
    const o = doc.value as KObject | null;
    if (o && o.kind === kind) return o;
  }
  throw new Error(`controller bench: no ${kind} in examples/guide/${name}`);
}

/** The guide's EC2NodeClass `default` (guide-03). */
export const guideNodeClass = (): KObject => guideObject('guide-03.yaml', 'EC2NodeClass');

/** The guide's NodePool `default` (guide-01) without its limits, so that 10,000 pods can be placed. */
export function guideNodePool(): KObject {
  const o = structuredClone(guideObject('guide-01.yaml', 'NodePool'));
  delete (o.spec as Record<string, unknown>)['limits'];
  return o;
}

/** Requests of a uniform pod that packs exactly 20 to an m5.2xlarge (allocatable 7,910m CPU). */
export const SMALL = { cpu: '390m', memory: '1Gi' } as const;
/** Requests that take most of an m5.2xlarge: every such pod needs a new node. */
export const LARGE = { cpu: '6', memory: '8Gi' } as const;

/**
 * One instance type (m5.2xlarge, on-demand, amd64), so that 100,000 SMALL pods make exactly 5,000 nodes.
 * Consolidation is off (`consolidateAfter: Never`) until the consolidation phase turns it on.
 */
export function uniformNodePool(): KObject {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'uniform' },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.2xlarge'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          expireAfter: 'Never',
        },
      },
      disruption: {
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: 'Never',
        budgets: [{ nodes: '10%' }],
      },
    },
  };
}

export interface PodShape {
  readonly cpu: string;
  readonly memory: string;
}

/** A pod as a user would submit it, for the benchmark's scheduler. */
function podObject(name: string, shape: PodShape, app: string): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app } },
    spec: {
      schedulerName: BENCH_SCHEDULER,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: shape.cpu, memory: shape.memory } },
        },
      ],
    },
  };
}

/** The solver suite's generic mix (bench/scenarios/generic.ts: CPU 100m-1500m, memory 100Mi-4Gi, seeded). */
export function genericShapes(n: number, seed = 42): PodShape[] {
  const rng = mulberry32(seed);
  return Array.from({ length: n }, () => ({ cpu: pick(rng, CPUS), memory: pick(rng, MEMS) }));
}

const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Creates pending pods in-process, then marks each Unschedulable (two writes, as a pod and kube-scheduler's
 * verdict make on a real cluster), `chunk` at a time with a turn of the event loop between chunks so the API
 * server streams the watch events meanwhile.
 */
export async function createPendingPods(
  api: Api,
  pods: ReadonlyArray<{ name: string; shape: PodShape; app: string }>,
  chunk = 500,
): Promise<void> {
  for (let i = 0; i < pods.length; i += chunk) {
    for (const p of pods.slice(i, i + chunk)) {
      api.create('pods', NAMESPACE, podObject(p.name, p.shape, p.app));
      api.patchStatus('pods', NAMESPACE, p.name, {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: UNSCHEDULABLE_MESSAGE,
            lastProbeTime: null,
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      });
    }
    await yieldTurn();
  }
}

/** Deletes pods in-process (grace period 0), `chunk` at a time. Pods already gone are skipped. */
export async function deletePods(api: Api, names: readonly string[], chunk = 500): Promise<void> {
  for (let i = 0; i < names.length; i += chunk) {
    for (const name of names.slice(i, i + chunk)) {
      if (api.find('pods', NAMESPACE, name)) api.delete('pods', NAMESPACE, name, { gracePeriodSeconds: 0 });
    }
    await yieldTurn();
  }
}
