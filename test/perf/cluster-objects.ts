// The big benchmark scenario's objects for test/perf scripts (mainmem.ts, feed-ab.ts): one NodeClaim, its Node and the
// pods bound there, taken from a small simulation (2 nodes) as the simulated API server serves them
// (bench/controller/scenarios.ts: the uniform NodePool, m5.2xlarge, bare pods of the SMALL shape bound by the
// benchmark's binder), as JSON texts that make the i-th copy with names, uids and instance ids made unique.
import { pathToFileURL } from 'node:url';
import { Binder } from '../../bench/controller/binder.ts';
import { createPendingPods, guideNodeClass, SMALL, uniformNodePool } from '../../bench/controller/workload.ts';
import type { KubeObject } from '../../controller/operator/kube.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import { simulation } from '../support/environment.ts';

interface Templates {
  readonly claim: KObject;
  readonly node: KObject;
  readonly pods: readonly KObject[];
}

/** One NodeClaim, its Node and the pods bound there, as a 2-node slice of the big scenario leaves them. */
async function templates(PODS_PER_NODE: number): Promise<Templates> {
  const sim = await simulation();
  try {
    const api = sim.cluster.api;
    api.create('ec2nodeclasses.karpenter.k8s.aws', undefined, guideNodeClass());
    api.create('nodepools.karpenter.sh', undefined, uniformNodePool());
    const binder = new Binder(api);
    const names = Array.from({ length: 2 * PODS_PER_NODE }, (_, i) => `s-${i}`);
    await createPendingPods(
      api,
      names.map((name, i) => ({ name, shape: SMALL, app: `app-${i % 100}` })),
    );
    const running = (): number =>
      sim.cluster.store.list('pods').filter((p) => (p.status as { phase?: string } | undefined)?.phase === 'Running')
        .length;
    await sim.clock.advanceUntil(() => binder.pending === 0 && running() === names.length, 600_000, 'pods running');
    await sim.settle();
    const claim = sim.cluster.store.list('nodeclaims.karpenter.sh')[0]!;
    const node = sim.cluster.store
      .list('nodes')
      .find((n) => n.metadata.name === (claim.status as { nodeName: string }).nodeName)!;
    const pods = sim.cluster.store
      .list('pods')
      .filter((p) => (p.spec as { nodeName?: string }).nodeName === node.metadata.name);
    return structuredClone({ claim, node, pods });
  } finally {
    await sim.close();
  }
}

/** The template's text with each of `names` replaced by itself plus `-suffix` (an id made unique). */
function renamer(text: string, names: readonly string[]): (suffix: string) => string {
  const parts = names.filter(Boolean).sort((a, b) => b.length - a.length);
  const re = new RegExp(parts.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return (suffix) => text.replace(re, (m) => `${m}x${suffix}`);
}

/** The texts of the i-th NodeClaim and Node, and of the j-th pod on the i-th node. */
interface ClusterTexts {
  claim(i: number): string;
  node(i: number): string;
  pod(i: number, j: number): string;
}

/** The text with each RFC 3339 time (whole seconds) moved `seconds` later. */
function shiftTimes(text: string, seconds: number): string {
  return text.replace(/"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"/g, (_, t: string) =>
    JSON.stringify(new Date(Date.parse(t) + seconds * 1000).toISOString().replace('.000Z', 'Z')),
  );
}

/**
 * `uniqueTimes`: the i-th NodeClaim's and Node's times are moved i minutes later, so no two copies share a time (by
 * default every copy has the template's times, as NodeClaims launched together do).
 */
export async function clusterTexts(podsPerNode: number, uniqueTimes = false): Promise<ClusterTexts> {
  const t = await templates(podsPerNode);
  const pid = (t.claim.status as { providerID: string }).providerID;
  const instance = pid.slice(pid.lastIndexOf('/') + 1);
  const ids = [t.claim.metadata.name!, t.claim.metadata.uid!, t.node.metadata.name!, t.node.metadata.uid!, instance];
  const claimText = renamer(JSON.stringify(t.claim), ids);
  const nodeText = renamer(JSON.stringify(t.node), ids);
  // A pod's own name and uid get the pod's suffix, the names of its node the node's.
  const podTexts = t.pods.map((p) => {
    const own = renamer(JSON.stringify(p), [p.metadata.name!, p.metadata.uid!]);
    return (node: string, pod: string): string => renamer(own(pod), ids)(node);
  });
  return {
    claim: (i) => (uniqueTimes ? shiftTimes(claimText(String(i)), 60 * i) : claimText(String(i))),
    node: (i) => (uniqueTimes ? shiftTimes(nodeText(String(i)), 60 * i) : nodeText(String(i))),
    pod: (i, j) => podTexts[j % podTexts.length]!(String(i), `${i}-${j}`),
  };
}

type Strip = (o: KubeObject) => KubeObject;

/** What the scripts use of a checkout's modules: the informers' transforms (as its feed.ts has them), cluster state, the model mirror. */
export async function loadTree(dir: string) {
  const base = pathToFileURL(`${dir}/`);
  const load = (path: string): Promise<unknown> => import(new URL(path, base).href);
  const strip = (await load('controller/state/strip.ts')) as typeof import('../../controller/state/strip.ts');
  const { ModelMirror } = (await load('engine/cluster/delta.ts')) as typeof import('../../engine/cluster/delta.ts');
  const { DEFAULT_ENGINE_OPTIONS } = (await load(
    'engine/domain/types.ts',
  )) as typeof import('../../engine/domain/types.ts');
  const { newLogger } = (await load(
    'controller/operator/logger.ts',
  )) as typeof import('../../controller/operator/logger.ts');
  const { Cluster } = (await load('controller/state/cluster.ts')) as typeof import('../../controller/state/cluster.ts');
  // The NodeClaim informer's transform: stripNodeClaim where there is one, else stripMetadata (feed.ts of either tree).
  const stripClaim = (strip as { stripNodeClaim?: Strip }).stripNodeClaim ?? strip.stripMetadata;
  return {
    stripClaim,
    stripNode: strip.stripNode as Strip,
    stripPod: strip.stripPod as Strip,
    ModelMirror,
    DEFAULT_ENGINE_OPTIONS,
    newCluster: (now: number) =>
      new Cluster({ clock: { now: () => now } as never, log: newLogger({ level: 'silent' }), listed: () => true }),
  };
}
