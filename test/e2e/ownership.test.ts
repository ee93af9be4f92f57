// Ownership before termination: an instance is terminated only for the NodeClaim that owns it (it records
// the instance's providerID, and the Node is the one it registered), and only if the cloud provider says it
// is this cluster's.
//
//   a second Node with a copied providerID   deleting it finalizes it at once with an InstanceNotOwned
//                                             warning: the victim's NodeClaim, node, pods and instance are
//                                             untouched, and the victim's own deletion still drains the
//                                             right node;
//   a Node no NodeClaim records               drained and released; its instance is left to garbage
//                                             collection, which terminates it as an orphan;
//   an instance that is not this cluster's   (the provider refuses it) the Node and NodeClaim are finalized
//                                             without terminating it, with InstanceNotOwned warnings;
//   a second NodeClaim with a copied status  cluster state lists the instance once, joined with the original
//                                             (the older), and warns naming both NodeClaims and the providerID.
import { afterEach, describe, expect, it } from 'vitest';
import { InstanceNotOwnedError, type CloudProvider } from '../../controller/cloudprovider/types.ts';
import { GC_PERIOD_MS } from '../../controller/controllers/nodeclaim/garbagecollection/reconcile.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import { watchDrill, wrapCloud } from '../support/drills.ts';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  nodes,
  running,
  simulation,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const PDB = JSON.stringify({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'web', namespace: 'default' },
  spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
});
const providerIdOf = (o: KObject): string => (o.status as { providerID: string }).providerID;
const stateOf = (s: Simulation, pid: string): string | undefined =>
  s.provider.all().find((i) => i.instance.providerID === pid)?.instance.state;
const evictions = (s: Simulation): number =>
  s.cluster.requests.all().filter((r) => r.subresource === 'eviction' && r.status > 0 && r.status < 300).length;
const eventsOn = (s: Simulation, reason: string, name: string): KObject[] =>
  events(s, reason).filter((e) => (e['involvedObject'] as { name: string }).name === name);

async function webCluster(cloud?: (cp: CloudProvider) => CloudProvider): Promise<Simulation> {
  const s = await simulation(cloud ? { cloud } : {});
  await s.apply(guide('guide-03.yaml'));
  await s.apply(guide('guide-05.yaml'));
  await s.apply(deployment('web', 3));
  await s.apply(PDB);
  await s.clock.advanceUntil(() => running(s, 'web') === 3, 180_000, 'web running');
  return s;
}

describe('ownership before termination', () => {
  it('a second Node with a copied providerID is finalized without touching the NodeClaim or the instance it names', async () => {
    sim = await webCluster();
    const [victim] = nodeClaims(sim);
    const pid = providerIdOf(victim!);
    const victimNode = (victim!.status as { nodeName: string }).nodeName;
    const drill = watchDrill(sim, { maxUnboundMs: 150_000 });
    await sim.kube.create('Node', {
      metadata: {
        name: 'impostor',
        finalizers: ['karpenter.sh/termination'],
        labels: { 'karpenter.sh/nodepool': 'spot-diverse' },
      },
      spec: { providerID: pid },
    });
    await sim.settle();
    await sim.kube.delete('Node', 'impostor');
    await sim.clock.advance(30_000);

    expect(sim.cluster.api.find('nodes', undefined, 'impostor')).toBeUndefined();
    expect(eventsOn(sim, 'InstanceNotOwned', 'impostor').map((e) => [e['type'], e['message']])).toEqual([
      [
        'Warning',
        `Not terminating an instance for node impostor: its providerID ${pid} is the instance of NodeClaim ${victim!.metadata.name}, whose node is ${victimNode}. The Node is finalized without it.`,
      ],
    ]);
    expect(
      sim.cluster.api.find('nodeclaims.karpenter.sh', undefined, victim!.metadata.name!)?.metadata.deletionTimestamp,
    ).toBeUndefined();
    expect(stateOf(sim, pid)).toBe('running');
    expect(evictions(sim)).toBe(0);
    expect(running(sim, 'web')).toBe(3);

    // The victim's own deletion still finds its real node: drained through evictions, then terminated.
    await sim.kube.delete('NodeClaim', victim!.metadata.name!);
    await sim.clock.advanceUntil(
      () => !sim!.cluster.api.find('nodes', undefined, victimNode) && running(sim!, 'web') === 3,
      300_000,
      'the victim drained and replaced',
    );
    expect(evictions(sim)).toBe(3);
    expect(['shutting-down', 'terminated']).toContain(stateOf(sim, pid));
    expect(drill.violations()).toEqual([]);
    drill.stop();
  });

  it('a second NodeClaim with a copied status: cluster state lists the instance once, joined with the original, and warns naming both', async () => {
    const lines: Array<Record<string, unknown>> = [];
    sim = await simulation({
      logLevel: 'warn',
      logDestination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
    });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web running');
    const [original] = nodeClaims(sim);
    const pid = providerIdOf(original!);
    const nodeName = (original!.status as { nodeName: string }).nodeName;
    // The copy gets the original's status in the same turn, so the controller never sees it without one.
    sim.cluster.api.create('nodeclaims.karpenter.sh', undefined, {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'copy', labels: original!.metadata.labels },
      spec: original!.spec,
    });
    sim.cluster.api.patchStatus('nodeclaims.karpenter.sh', undefined, 'copy', original!.status);
    await sim.clock.advance(30_000);

    const cluster = sim.operator.cluster;
    expect(cluster.nodeClaim('copy')?.info.providerId).toBe(pid);
    const listed = cluster.stateNodes().filter((n) => n.providerId === pid);
    expect(listed.map((n) => [n.name, n.nodeClaimName])).toEqual([[nodeName, original!.metadata.name]]);
    expect(listed[0]!.pods.length).toBeGreaterThan(0);
    expect(listed[0]!.pods.map((p) => p.uid)).toEqual(cluster.workloads.podsOn(nodeName).map((p) => p.uid));
    expect(
      lines.filter((l) => l['provider-id'] === pid && String(l['message']).startsWith('several NodeClaims')),
    ).toEqual([
      expect.objectContaining({
        level: 'WARN',
        NodeClaim: { name: 'copy' },
        nodeclaims: [original!.metadata.name, 'copy'].sort(),
        joined: original!.metadata.name,
      }),
    ]);
    expect(running(sim, 'web')).toBe(3);
  });

  it('a Node no NodeClaim records is drained and released without terminating its instance; garbage collection then takes the orphan', async () => {
    const deletes: Array<{ pid: string; at: number }> = [];
    sim = await webCluster((cp) =>
      wrapCloud(cp, {
        delete: (id) => {
          deletes.push({ pid: id, at: sim!.clock.now() });
          return cp.delete(id);
        },
      }),
    );
    // An instance no NodeClaim asked for (launched by hand), whose Node registered and got the finalizer.
    const orphan = await sim.provider.create({
      nodeClaimName: 'never-created',
      nodePoolName: 'spot-diverse',
      nodeClassName: 'default',
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5.large'] }],
      requests: {},
      labels: {},
      annotations: {},
      taints: [],
      startupTaints: [],
    });
    await sim.clock.advanceUntil(
      () => nodes(sim!).some((n) => (n.spec as { providerID?: string }).providerID === orphan.providerID),
      120_000,
      'the orphan registered',
    );
    const orphanNode = nodes(sim).find((n) => (n.spec as { providerID?: string }).providerID === orphan.providerID)!
      .metadata.name!;
    await sim.kube.patch('Node', orphanNode, { metadata: { finalizers: ['karpenter.sh/termination'] } });
    await sim.kube.delete('Node', orphanNode);
    await sim.clock.advanceUntil(
      () => !sim!.cluster.api.find('nodes', undefined, orphanNode),
      60_000,
      'the node released',
    );
    expect(deletes).toEqual([]);
    expect(stateOf(sim, orphan.providerID)).toBe('running');
    const released = sim.clock.now();
    await sim.clock.advanceUntil(() => deletes.length > 0, GC_PERIOD_MS + 10_000, 'garbage collection');
    expect(deletes.map((d) => d.pid)).toEqual([orphan.providerID]);
    expect(deletes[0]!.at).toBeGreaterThan(released);
    expect(running(sim, 'web')).toBe(3);
  });

  it("an instance the cloud provider says is not this cluster's: the Node is drained, then Node and NodeClaim are finalized without terminating it", async () => {
    let refused = 0;
    sim = await webCluster((cp) =>
      wrapCloud(cp, {
        delete: async (id) => {
          refused++;
          throw new InstanceNotOwnedError(`instance ${id} does not carry this cluster's tags`);
        },
      }),
    );
    const [claim] = nodeClaims(sim);
    const pid = providerIdOf(claim!);
    const nodeName = (claim!.status as { nodeName: string }).nodeName;
    const drill = watchDrill(sim, { maxUnboundMs: 150_000 });
    await sim.kube.delete('NodeClaim', claim!.metadata.name!);
    await sim.clock.advanceUntil(
      () =>
        !sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim!.metadata.name!) &&
        running(sim!, 'web') === 3,
      300_000,
      'NodeClaim finalized, web replaced',
    );
    expect(refused).toBe(2);
    expect(stateOf(sim, pid)).toBe('running');
    expect(evictions(sim)).toBe(3);
    expect(eventsOn(sim, 'InstanceNotOwned', nodeName)).toHaveLength(1);
    expect(eventsOn(sim, 'InstanceNotOwned', claim!.metadata.name!).map((e) => e['message'])).toEqual([
      `Not terminating the instance of NodeClaim ${claim!.metadata.name}: instance ${pid} does not carry this cluster's tags`,
    ]);
    expect(drill.violations()).toEqual([]);
    drill.stop();
  });
});
