// The interruption controller against the simulator: what each message kind does to the NodeClaim and
// Node it names (events, deletion, metrics), and that nothing a feed delivers stops the loop.
import { afterEach, describe, expect, it } from 'vitest';
import { events, guide, nodeClaims, running, simulation, type Simulation } from '../../../test/support/environment.ts';
import type { KObject } from '../../../sim/apiserver/index.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** `n` pods that each need their own node (hostname anti-affinity) on the guide's spot-diverse pool. */
function spread(n: number): string {
  return JSON.stringify({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: n, selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } },
          containers: [{ name: 'app', image: 'pause', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
        },
      },
    },
  });
}

interface Claim {
  name: string;
  providerID: string;
  node: string;
}

async function cluster(n: number): Promise<{ sim: Simulation; claims: Claim[] }> {
  const s = await simulation();
  await s.apply(guide('guide-03.yaml'));
  await s.apply(guide('guide-05.yaml'));
  await s.apply(spread(n));
  await s.clock.advanceUntil(() => running(s, 'web') === n, 180_000, 'web running');
  const claims = nodeClaims(s).map((c) => {
    const st = c.status as { providerID: string; nodeName: string };
    return { name: c.metadata.name!, providerID: st.providerID, node: st.nodeName };
  });
  return { sim: s, claims };
}

const claimObj = (s: Simulation, name: string): KObject | undefined => s.cluster.store.get('nodeclaims.karpenter.sh', '', name);
const eventsOn = (s: Simulation, reason: string, name: string): KObject[] =>
  events(s, reason).filter((e) => (e['involvedObject'] as { name: string }).name === name);
const metric = (s: Simulation, name: string, labels: Record<string, string> = {}) => s.operator.metrics.value(name, labels);

describe('interruption', () => {
  it('deletes the NodeClaim for scheduled maintenance, a stopping or terminated instance and a reservation interruption; only records a rebalance recommendation', async () => {
    const r = await cluster(5);
    sim = r.sim;
    const [maint, stopping, terminated, reserved, rebalance] = r.claims as [Claim, Claim, Claim, Claim, Claim];
    sim.provider.interrupt(maint.providerID, 'scheduledChange');
    sim.provider.interrupt(stopping.providerID, 'stateChange', { state: 'stopping' });
    sim.provider.interrupt(terminated.providerID, 'stateChange', { state: 'terminated' });
    sim.provider.interrupt(reserved.providerID, 'capacityReservationInterruption');
    sim.provider.interrupt(rebalance.providerID, 'rebalanceRecommendation');
    await sim.settle();

    const expectations: Array<[Claim, string, string]> = [
      [maint, 'InstanceUnhealthy', 'scheduled_change'],
      [stopping, 'InstanceStopping', 'instance_stopped'],
      [terminated, 'InstanceTerminating', 'instance_terminated'],
      [reserved, 'CapacityReservationInterrupted', 'capacity_reservation_interrupted'],
    ];
    for (const [c, reason, kind] of expectations) {
      expect(eventsOn(sim, reason, c.name), `${reason} on ${c.name}`).toHaveLength(1);
      expect(eventsOn(sim, reason, c.node), `${reason} on ${c.node}`).toHaveLength(1);
      expect(eventsOn(sim, 'TerminatingOnInterruption', c.name)[0]?.['message']).toBe('Interruption triggered termination for the NodeClaim');
      expect(eventsOn(sim, 'TerminatingOnInterruption', c.node)[0]?.['message']).toBe('Interruption triggered termination for the Node');
      // Deleting, or already gone (an instance that is already terminated is released without a drain).
      const left = claimObj(sim, c.name);
      expect(left === undefined || left.metadata.deletionTimestamp !== undefined, c.name).toBe(true);
      expect(await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: kind })).toBe(1);
      expect(await metric(sim, 'karpenter_nodeclaims_disrupted_total', { reason: kind })).toBe(1);
    }
    // A rebalance recommendation is a Normal event on both objects, and nothing else.
    const rb = eventsOn(sim, 'SpotRebalanceRecommendation', rebalance.name);
    expect(rb.map((e) => [e['type'], e['message']])).toEqual([['Normal', 'Spot rebalance recommendation was triggered']]);
    expect(eventsOn(sim, 'SpotRebalanceRecommendation', rebalance.node)).toHaveLength(1);
    expect(claimObj(sim, rebalance.name)?.metadata.deletionTimestamp).toBeUndefined();
    expect(eventsOn(sim, 'TerminatingOnInterruption', rebalance.name)).toHaveLength(0);

    expect(await metric(sim, 'karpenter_interruption_actions_performed_total', { action_type: 'CordonAndDrain' })).toBe(4);
    expect(await metric(sim, 'karpenter_interruption_actions_performed_total', { action_type: 'NoAction' })).toBe(1);
    expect(await metric(sim, 'karpenter_interruption_deleted_messages_total')).toBe(5);
    expect(await metric(sim, 'karpenter_interruption_message_queue_duration_seconds')).toBe(5);
    expect(sim.provider.interruptions.acknowledged).toHaveLength(5);
    // Only the reservation interruption reports capacity to keep out of launches (the sim has no reservations).
    expect(sim.provider.interruptions.marked.map((m) => m.event.kind)).toEqual(['capacityReservationInterruption']);
  });

  it('on a spot interruption warns the NodeClaim, the Node and its pods, reports the spot offering as unavailable and deletes the NodeClaim', async () => {
    const r = await cluster(1);
    sim = r.sim;
    const c = r.claims[0]!;
    const obj = claimObj(sim, c.name)!;
    sim.provider.interrupt(c.providerID, 'spotInterruption');
    await sim.settle();
    expect(eventsOn(sim, 'SpotInterrupted', c.name).map((e) => e['type'])).toEqual(['Warning']);
    expect(eventsOn(sim, 'SpotInterrupted', c.node)).toHaveLength(1);
    const pod = sim.cluster.store.list('pods', { namespace: 'default' })[0]!;
    expect(eventsOn(sim, 'SpotInterrupted', pod.metadata.name!)[0]?.['message']).toBe('Spot interruption warning was triggered');
    expect(sim.provider.interruptions.marked.map((m) => m.capacity)).toEqual([{
      instanceType: obj.metadata.labels!['node.kubernetes.io/instance-type'], zone: obj.metadata.labels!['topology.kubernetes.io/zone'], capacityType: 'spot',
    }]);
    expect(sim.provider.ice.isUnavailable('spot', obj.metadata.labels!['node.kubernetes.io/instance-type']!, obj.metadata.labels!['topology.kubernetes.io/zone']!)).toBe(true);
    expect(claimObj(sim, c.name)?.metadata.deletionTimestamp).toBeDefined();
    expect(await metric(sim, 'karpenter_nodeclaims_disrupted_total', { reason: 'spot_interrupted', capacity_type: 'spot', nodepool: 'spot-diverse' })).toBe(1);
  });

  it('counts and acknowledges no-ops, unknown kinds and messages for instances it does not manage, and keeps going', async () => {
    const r = await cluster(1);
    sim = r.sim;
    const feed = sim.provider.interruptions;
    const now = sim.clock.now();
    feed.push({ kind: 'noop', id: 'n-1', detail: 'no handler for aws.ec2 "EC2 Fleet Error"', time: now - 30_000 });
    feed.push({ kind: 'stateChange', id: 'n-2', instanceIds: [r.claims[0]!.providerID.split('/').pop()!], state: 'running', time: now });
    feed.push({ kind: 'spotInterruption', id: 'n-3', instanceIds: ['i-0000000000000dead'], time: now });
    feed.push({ kind: 'someFutureKind', id: 'n-4', time: now } as never);
    feed.push({ kind: 'scheduledChange', id: 'n-5', time: now } as never);
    await sim.settle();
    expect(feed.acknowledged).toHaveLength(5);
    expect(await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: 'no_op' })).toBe(3);
    expect(await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: 'spot_interrupted' })).toBe(1);
    expect(await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: 'scheduled_change' })).toBe(1);
    expect(claimObj(sim, r.claims[0]!.name)?.metadata.deletionTimestamp).toBeUndefined();
    // The loop still works.
    sim.provider.interrupt(r.claims[0]!.providerID, 'scheduledChange');
    await sim.settle();
    expect(claimObj(sim, r.claims[0]!.name)?.metadata.deletionTimestamp).toBeDefined();
  });

  it('retries a message whose handling failed and acknowledges it once; a failed receive is retried after 10 s', async () => {
    const r = await cluster(1);
    sim = r.sim;
    const feed = sim.provider.interruptions;
    sim.cluster.server.faults.failNext({ resource: 'nodeclaims', verbs: ['delete'], code: 500, count: 2 });
    sim.provider.interrupt(r.claims[0]!.providerID, 'scheduledChange');
    await sim.settle();
    expect(feed.acknowledged).toHaveLength(0);
    expect(claimObj(sim, r.claims[0]!.name)?.metadata.deletionTimestamp).toBeUndefined();
    await sim.clock.advance(1_000);
    expect(sim.cluster.server.faults.pending()).toBe(0);
    expect(feed.acknowledged).toHaveLength(1);
    expect(claimObj(sim, r.claims[0]!.name)?.metadata.deletionTimestamp).toBeDefined();
    expect(await metric(sim, 'karpenter_interruption_received_messages_total')).toBe(1);
    expect(await metric(sim, 'karpenter_nodeclaims_disrupted_total', { reason: 'scheduled_change' })).toBe(1);

    // The feed fails once; the loop waits 10 s of clock time and polls again.
    const receive = feed.receive.bind(feed);
    let failures = 1;
    feed.receive = async (signal) => {
      if (failures-- > 0) throw new Error('queue unreachable');
      return receive(signal);
    };
    feed.push({ kind: 'noop', id: 'wake', detail: 'x', time: sim.clock.now() });
    await sim.settle();
    feed.push({ kind: 'noop', id: 'after', detail: 'x', time: sim.clock.now() });
    await sim.settle();
    expect(feed.acknowledged).toHaveLength(2);
    await sim.clock.advance(10_000);
    expect(feed.acknowledged).toHaveLength(3);
  });
});
