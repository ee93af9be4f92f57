// Shared pieces of the CapacityBuffer acceptance tests: the operator in the simulator with the gate
// CapacityBuffer on, a NodePool, and readers of a buffer's status.
import type { KObject } from '../../../sim/apiserver/index.ts';
import { guide, simulation, type Simulation } from '../../support/environment.ts';

export const POOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ['m5.large', 'm5.xlarge', 'm5.2xlarge']
        - key: karpenter.sh/capacity-type
          operator: In
          values: ['on-demand']
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
`;

export async function start(
  o: { gates?: string; pool?: string; options?: Record<string, string> } = {},
): Promise<Simulation> {
  const sim = await simulation({
    options: { 'feature-gates': o.gates ?? 'CapacityBuffer=true', ...(o.options ?? {}) },
  });
  await sim.apply(guide('guide-03.yaml'));
  await sim.apply(o.pool ?? POOL);
  await sim.settle();
  return sim;
}

export function podTemplate(name: string, o: { cpu?: string; memory?: string; spec?: Record<string, unknown> } = {}) {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'PodTemplate',
    metadata: { name, namespace: 'default' },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [
          { name: 'c', image: 'pause', resources: { requests: { cpu: o.cpu ?? '1', memory: o.memory ?? '1Gi' } } },
        ],
        ...(o.spec ?? {}),
      },
    },
  });
}

export function buffer(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'autoscaling.x-k8s.io/v1beta1',
    kind: 'CapacityBuffer',
    metadata: { name, namespace: 'default' },
    spec,
  });
}

const bufferObj = (s: Simulation, name: string): KObject | undefined =>
  s.cluster.api.find('capacitybuffers.autoscaling.x-k8s.io', 'default', name);

export const bufferStatus = (s: Simulation, name: string) =>
  (bufferObj(s, name)?.status ?? {}) as {
    replicas?: number;
    podTemplateRef?: { name: string };
    podTemplateGeneration?: number;
    provisioningStrategy?: string;
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };

export const bufferCondition = (s: Simulation, name: string, type: string) =>
  (bufferStatus(s, name).conditions ?? []).find((c) => c.type === type);

/** Lets the simulation run `ms` of clock time (the buffer controller looks again every 30 s). */
export async function run(s: Simulation, ms: number): Promise<void> {
  await s.clock.advance(ms);
  await s.settle();
}
