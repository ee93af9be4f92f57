// Shared set-up for the static NodePool cases (Karpenter core pkg/controllers/static/{provisioning,
// deprovisioning}/suite_test.go, main after v1.14.1): a simulation whose operator runs only the node-class and
// NodePool status controllers, with the static controller under test built on the operator's parts and
// reconciled by the test itself, as upstream's ExpectObjectReconciled does.
import { engineOptionsOf } from '../../../controller/main.ts';
import { toKubeTime } from '../../../controller/operator/clock.ts';
import { resolveOptions } from '../../../controller/operator/options.ts';
import type { ReconcileResult } from '../../../controller/operator/result.ts';
import type { Controller } from '../../../controller/operator/runtime.ts';
import type { ControllerContext } from '../../../controller/controllers/context.ts';
import type { ClusterDecisions } from '../../../engine/index.ts';
import { simulationEngine } from '../../../sim/engine.ts';
import { guide, simulation, type Simulation } from '../../support/environment.ts';

export const MIN = 60_000;
const GATES = { 'feature-gates': 'StaticCapacity=true' };

export interface Static {
  readonly sim: Simulation;
  readonly controller: Controller;
  /** The engine decisions the controller asked for, in order (a static decision runs on the engine's workers). */
  readonly engineCalls: readonly string[];
  reconcile(pool?: string): Promise<ReconcileResult>;
}

/** `engine` with every call's name written to `calls`. */
function recorded(engine: ClusterDecisions, calls: string[]): ClusterDecisions {
  return new Proxy(engine, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** The operator's parts as a controller context (the one the controller list would hand it). */
function contextOf(sim: Simulation, calls: string[]): ControllerContext {
  const op = sim.operator;
  const options = resolveOptions([], {}, { 'cluster-name': 'my-cluster', ...GATES });
  return {
    clock: op.clock,
    kube: op.kube,
    cluster: op.cluster,
    events: op.events,
    metrics: op.metrics,
    activity: op.activity,
    log: op.log,
    options,
    engineOptions: engineOptionsOf(options),
    cloudProvider: op.cloudProvider,
    engine: recorded(simulationEngine().cluster('static-test'), calls),
  };
}

/** A simulation with the guide's EC2NodeClass resolved, and `make`'s controller ready to reconcile. */
export async function startStatic(make: (ctx: ControllerContext) => Controller): Promise<Static> {
  const sim = await simulation({ only: ['nodeclass.status', 'nodepool.readiness', 'nodepool.hash'], options: GATES });
  await sim.apply(guide('guide-03.yaml'));
  await sim.settle();
  const engineCalls: string[] = [];
  const controller = make(contextOf(sim, engineCalls));
  return {
    sim,
    controller,
    engineCalls,
    async reconcile(pool = 'static') {
      const r = await controller.reconcile(pool);
      await sim.settle();
      return r;
    },
  };
}

interface PoolSpec {
  readonly name?: string;
  readonly replicas?: number;
  readonly nodeLimit?: number;
  readonly labels?: Record<string, string>;
  readonly taints?: Array<{ key: string; value?: string; effect: string }>;
  readonly instanceTypes?: readonly string[];
}

/** A NodePool on the guide's node class (static when `replicas` is given), Ready once settled. */
export async function staticPool(sim: Simulation, o: PoolSpec = {}): Promise<void> {
  const spec: Record<string, unknown> = {
    template: {
      ...(o.labels ? { metadata: { labels: o.labels } } : {}),
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [
          {
            key: 'node.kubernetes.io/instance-type',
            operator: 'In',
            values: [...(o.instanceTypes ?? ['m5.large', 'm5.xlarge'])],
          },
        ],
        ...(o.taints ? { taints: o.taints } : {}),
      },
    },
    ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
    ...(o.nodeLimit !== undefined ? { limits: { nodes: String(o.nodeLimit) } } : {}),
  };
  await sim.kube.create('NodePool', {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: o.name ?? 'static' },
    spec,
  });
  await sim.settle();
}

let seq = 0;

interface ClaimSpec {
  readonly pool?: string;
  /** Launched: a providerID and a Node (default true). */
  readonly launched?: boolean;
  readonly deleting?: boolean;
  readonly pods?: ReadonlyArray<{
    readonly daemonSet?: boolean;
    readonly doNotDisrupt?: boolean;
    readonly deletionCost?: number;
  }>;
  readonly expireAfter?: string;
}

/** A NodeClaim of the pool (and its Node and pods when launched), written straight into the API server. */
export async function staticClaim(sim: Simulation, o: ClaimSpec = {}): Promise<string> {
  const n = ++seq;
  const name = `claim-${n}`;
  const pool = o.pool ?? 'static';
  const labels = { 'karpenter.sh/nodepool': pool };
  await sim.kube.create('NodeClaim', {
    metadata: { name, labels, finalizers: ['karpenter.sh/termination'] },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [],
      expireAfter: o.expireAfter ?? '720h',
    },
  });
  if (o.launched ?? true) await launch(sim, name, n, labels, o);
  if (o.deleting) await sim.kube.delete('NodeClaim', name);
  await sim.settle();
  return name;
}

async function launch(
  sim: Simulation,
  claim: string,
  n: number,
  labels: Record<string, string>,
  o: ClaimSpec,
): Promise<void> {
  const node = `node-${n}`;
  const pid = `aws:///ap-northeast-2a/i-${String(n).padStart(17, '0')}`;
  await sim.kube.patchStatus('NodeClaim', claim, { providerID: pid, nodeName: node, imageID: 'ami-0123' });
  sim.cluster.api.create('nodes', undefined, {
    metadata: {
      name: node,
      labels: { ...labels, 'karpenter.sh/capacity-type': 'on-demand', 'karpenter.sh/registered': 'true' },
    },
    spec: { providerID: pid },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: toKubeTime(sim.clock.now()) }] },
  });
  (o.pods ?? []).forEach((p, i) => {
    const annotations: Record<string, string> = {
      ...(p.doNotDisrupt ? { 'karpenter.sh/do-not-disrupt': 'true' } : {}),
      ...(p.deletionCost !== undefined ? { 'controller.kubernetes.io/pod-deletion-cost': String(p.deletionCost) } : {}),
    };
    sim.cluster.api.create('pods', 'default', {
      metadata: {
        name: `${node}-pod-${i}`,
        namespace: 'default',
        annotations,
        ...(p.daemonSet
          ? {
              ownerReferences: [
                { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'ds-uid', controller: true },
              ],
            }
          : {}),
      },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'pause' }] },
      status: { phase: 'Running' },
    });
  });
}

export const claims = (sim: Simulation, pool = 'static') =>
  sim.cluster.store
    .list('nodeclaims.karpenter.sh')
    .filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool);
export const live = (sim: Simulation, pool = 'static') =>
  claims(sim, pool)
    .filter((c) => !c.metadata.deletionTimestamp)
    .map((c) => c.metadata.name!);
export const deletingNames = (sim: Simulation, pool = 'static') =>
  claims(sim, pool)
    .filter((c) => c.metadata.deletionTimestamp)
    .map((c) => c.metadata.name!)
    .sort();
