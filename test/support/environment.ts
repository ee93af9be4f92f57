// Test helpers over the simulator (sim/): a simulation on a manual clock, the guide's
// examples by name, and short readers of the simulated API server's store.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulation, type Simulation, type SimulationOptions } from '../../sim/environment.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import { GUIDE_EXAMPLES_DIR } from '../fixtures/guide.ts';

export type { Simulation };

/** A simulation on a manual clock with quiet logs (LOG_LEVEL=debug shows them). */
export function simulation(opts: SimulationOptions = {}): Promise<Simulation> {
  const level = process.env['LOG_LEVEL'] as 'debug' | 'info' | 'warn' | 'error' | undefined;
  return startSimulation({ logLevel: level ?? 'silent', ...opts });
}

/** The text of a guide example (guide-07.yaml ...). */
export const guide = (file: string): string => readFileSync(join(GUIDE_EXAMPLES_DIR, file), 'utf8');

/** The guide's EC2NodeClass `default` (guide-03) renamed, for NodePools that reference other classes. */
export const nodeClassNamed = (name: string): string =>
  guide('guide-03.yaml').replace(/^ {2}name: default$/m, `  name: ${name}`);

/** A Deployment of `replicas` pods requesting cpu/memory each. */
export function deployment(
  name: string,
  replicas: number,
  o: {
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    nodeSelector?: Record<string, string>;
    annotations?: Record<string, string>;
    tolerations?: unknown[];
    onePerNode?: boolean;
  } = {},
): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: {
          labels: { app: name, ...(o.labels ?? {}) },
          ...(o.annotations ? { annotations: o.annotations } : {}),
        },
        spec: {
          ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
          ...(o.tolerations ? { tolerations: o.tolerations } : {}),
          // Each pod on its own node (required hostname anti-affinity against its siblings).
          ...(o.onePerNode
            ? {
                affinity: {
                  podAntiAffinity: {
                    requiredDuringSchedulingIgnoredDuringExecution: [
                      { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: name } } },
                    ],
                  },
                },
              }
            : {}),
          containers: [
            { name: 'app', image: 'pause', resources: { requests: { cpu: o.cpu ?? '1', memory: o.memory ?? '1Gi' } } },
          ],
        },
      },
    },
  });
}

export const nodes = (sim: Simulation): KObject[] => sim.cluster.store.list('nodes');
export const nodeClaims = (sim: Simulation): KObject[] => sim.cluster.store.list('nodeclaims.karpenter.sh');
export const pods = (sim: Simulation, app?: string): KObject[] =>
  sim.cluster.store.list('pods', { namespace: 'default' }).filter((p) => !app || p.metadata.labels?.['app'] === app);
const phase = (p: KObject): string | undefined => (p.status as { phase?: string } | undefined)?.phase;
export const running = (sim: Simulation, app?: string): number =>
  pods(sim, app).filter((p) => phase(p) === 'Running' && !p.metadata.deletionTimestamp).length;
export const events = (sim: Simulation, reason?: string): KObject[] =>
  sim.cluster.store.list('events').filter((e) => !reason || e['reason'] === reason);
export const label = (o: KObject, key: string): string | undefined => o.metadata.labels?.[key];
export const condition = (
  o: KObject,
  type: string,
): { status?: string; reason?: string; message?: string } | undefined =>
  (
    (
      o.status as
        | { conditions?: Array<{ type: string; status?: string; reason?: string; message?: string }> }
        | undefined
    )?.conditions ?? []
  ).find((c) => c.type === type);
export const taints = (o: KObject): Array<{ key: string; effect: string; value?: string }> =>
  (o.spec as { taints?: Array<{ key: string; effect: string }> } | undefined)?.taints ?? [];

/** Scales a Deployment through the API. */
export async function scale(sim: Simulation, name: string, replicas: number): Promise<void> {
  await sim.kube.patch('Deployment', name, { spec: { replicas } }, { namespace: 'default' });
}
