// Everything a controller is built from (ControllerContext), with fakes: the in-memory API (kube.ts), cluster
// state fed straight from its store, the recording cloud (cloudprovider.ts), a manual clock, real metrics and
// a real event recorder. A controller under test is made with its own factory and driven by calling
// reconcile(), or by run() below, which plays the runtime's part on the manual clock.
import { DEFAULT_ENGINE_OPTIONS } from '../../engine/index.ts';
import type { CloudProvider } from '../../controller/cloudprovider/types.ts';
import type { ControllerContext } from '../../controller/controllers/context.ts';
import { engineOptionsOf } from '../../controller/main.ts';
import { Activity } from '../../controller/operator/activity.ts';
import { Recorder } from '../../controller/operator/events.ts';
import type { KubeObject } from '../../controller/operator/kube.ts';
import { newLogger } from '../../controller/operator/logger.ts';
import { Metrics } from '../../controller/operator/metrics.ts';
import { resolveOptions } from '../../controller/operator/options.ts';
import { Runtime, type Controller } from '../../controller/operator/runtime.ts';
import { Cluster } from '../../controller/state/cluster.ts';
import { installAdmission } from '../../sim/admission.ts';
import type { KObject, StoreEvent } from '../../sim/apiserver/index.ts';
import { manualClock, type SimClock } from '../../sim/clock.ts';
import { simulationEngine } from '../../sim/engine.ts';
import { applyToApi } from '../support/apply.ts';
import { RecordingCloudProvider } from './cloudprovider.ts';
import { fakeKube, type FakeKube } from './kube.ts';

export interface FakeControllerEnv extends FakeKube {
  readonly clock: SimClock;
  readonly ctx: ControllerContext;
  readonly cluster: Cluster;
  readonly cloud: RecordingCloudProvider;
  readonly metrics: Metrics;
  /** Creates objects in-process (as a user or another controller would), returning the stored copies. */
  add(resource: string, ...objects: KObject[]): KObject[];
  /** The stored object (throws when absent). */
  get(resource: string, name: string, namespace?: string): KObject;
  /**
   * Creates or merge-patches (spec, labels, annotations) every object of a YAML text in-process, as a user's
   * kubectl apply would, then settles.
   */
  apply(yaml: string): Promise<KObject[]>;
  /** Runs controllers as the operator's runtime does (their watches, queues and requeues on the manual clock). */
  run(...controllers: Controller[]): Runtime;
  /** Lets queued reconciles, event writes and requests finish (the manual clock stands still meanwhile). */
  settle(): Promise<void>;
}

/** Store resource -> how cluster state takes it (what state/feed.ts wires informers to). */
function feed(cluster: Cluster): Record<string, { apply: (o: KubeObject) => void; remove: (o: KubeObject) => void }> {
  const w = cluster.workloads;
  const dra = w.dra;
  return {
    nodes: { apply: (o) => cluster.applyNode(o), remove: (o) => cluster.removeNode(o) },
    'nodeclaims.karpenter.sh': { apply: (o) => cluster.applyNodeClaim(o), remove: (o) => cluster.removeNodeClaim(o) },
    'nodepools.karpenter.sh': { apply: (o) => cluster.applyNodePool(o), remove: (o) => cluster.removeNodePool(o) },
    'ec2nodeclasses.karpenter.k8s.aws': {
      apply: (o) => cluster.applyNodeClass(o),
      remove: (o) => cluster.removeNodeClass(o),
    },
    'daemonsets.apps': { apply: (o) => w.applyDaemonSet(o), remove: (o) => w.removeDaemonSet(o) },
    pods: { apply: (o) => w.applyPod(o), remove: (o) => w.removePod(o) },
    'poddisruptionbudgets.policy': { apply: (o) => w.applyPdb(o), remove: (o) => w.removePdb(o) },
    'resourceslices.resource.k8s.io': {
      apply: (o) => dra.apply('ResourceSlice', o),
      remove: (o) => dra.remove('ResourceSlice', o),
    },
    'resourceclaims.resource.k8s.io': {
      apply: (o) => dra.apply('ResourceClaim', o),
      remove: (o) => dra.remove('ResourceClaim', o),
    },
    'resourceclaimtemplates.resource.k8s.io': {
      apply: (o) => dra.apply('ResourceClaimTemplate', o),
      remove: (o) => dra.remove('ResourceClaimTemplate', o),
    },
    'deviceclasses.resource.k8s.io': {
      apply: (o) => dra.apply('DeviceClass', o),
      remove: (o) => dra.remove('DeviceClass', o),
    },
    'capacitybuffers.autoscaling.x-k8s.io': {
      apply: (o) => w.buffers.applyBuffer(o),
      remove: (o) => w.buffers.removeBuffer(o),
    },
    podtemplates: {
      apply: (o) => w.buffers.podTemplateChanged(o, 'upsert'),
      remove: (o) => w.buffers.podTemplateChanged(o, 'delete'),
    },
  };
}

const copy = (o: KObject): KubeObject => JSON.parse(JSON.stringify(o)) as KubeObject;

interface FakeControllerOptions {
  /** Controller option overrides by flag name. */
  readonly options?: Readonly<Record<string, string>>;
  /** Another cloud instead of the recording one (it is still returned as `cloud` for its instances). */
  readonly cloudProvider?: (cloud: RecordingCloudProvider) => CloudProvider;
  /** LOG_LEVEL=debug shows the controller's logs. */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent';
}

let envs = 0;

export function fakeControllerEnv(o: FakeControllerOptions = {}): FakeControllerEnv {
  const clock = manualClock();
  const fake = fakeKube({ clock });
  installAdmission(fake.api);
  const level = o.logLevel ?? (process.env['LOG_LEVEL'] as FakeControllerOptions['logLevel']) ?? 'silent';
  const log = newLogger({ level, now: () => clock.now() });
  const cluster = new Cluster({ clock, log, listed: () => true });
  const sinks = feed(cluster);
  for (const [resource, sink] of Object.entries(sinks))
    for (const obj of fake.api.store.list(resource)) sink.apply(copy(obj));
  fake.api.store.subscribe((e: StoreEvent) => {
    const sink = sinks[e.resource];
    if (!sink) return;
    if (e.type === 'DELETED') sink.remove(copy(e.object));
    else sink.apply(copy(e.object));
  });
  const cloud = new RecordingCloudProvider({ clock });
  const activity = new Activity();
  const metrics = new Metrics();
  metrics.podTimes.keepIn((namespace, name, uid) => cluster.workloads.timesOf(namespace, name, uid));
  const options = resolveOptions([], {}, { 'cluster-name': 'my-cluster', ...(o.options ?? {}) });
  const ctx: ControllerContext = {
    clock,
    kube: fake.kube,
    cluster,
    cloudProvider: o.cloudProvider ? o.cloudProvider(cloud) : cloud,
    events: new Recorder({ kube: fake.kube, clock, log, activity }),
    metrics,
    log,
    options,
    engineOptions: { ...DEFAULT_ENGINE_OPTIONS, ...engineOptionsOf(options) },
    activity,
    // The process's shared engine (its workers start once), a warm model of this env's cluster on it.
    engine: simulationEngine().cluster(`fake-controller-${++envs}`),
  };
  const runtimes: Runtime[] = [];
  const settle = async (): Promise<void> => {
    for (let idle = 0, turns = 0; idle < 3; turns++) {
      await new Promise((r) => setImmediate(r));
      idle = activity.busy() || runtimes.some((r) => r.busy()) ? 0 : idle + 1;
      if (turns > 100_000)
        throw new Error(
          `controllers did not settle (busy: ${runtimes.flatMap((r) => r.busyNames()).join(', ') || 'requests'})`,
        );
    }
  };
  clock.addSettler(settle);
  const env: FakeControllerEnv = {
    ...fake,
    clock,
    ctx,
    cluster,
    cloud,
    metrics,
    add: (resource, ...objects) => objects.map((obj) => fake.api.create(resource, obj.metadata.namespace, obj)),
    get: (resource, name, namespace) => fake.api.get(resource, namespace, name),
    apply: async (yaml) => {
      const out = applyToApi(fake.api, RESOURCE_OF, yaml);
      await settle();
      return out;
    },
    run(...controllers) {
      const runtime = new Runtime({ clock, log }, controllers);
      runtime.start();
      runtimes.push(runtime);
      return runtime;
    },
    settle,
  };
  return env;
}

/** Store resource names of the kinds tests apply. */
const RESOURCE_OF: Readonly<Record<string, string>> = {
  NodePool: 'nodepools.karpenter.sh',
  NodeClaim: 'nodeclaims.karpenter.sh',
  EC2NodeClass: 'ec2nodeclasses.karpenter.k8s.aws',
  Node: 'nodes',
  Pod: 'pods',
  DaemonSet: 'daemonsets.apps',
  Deployment: 'deployments.apps',
  PodDisruptionBudget: 'poddisruptionbudgets.policy',
};
