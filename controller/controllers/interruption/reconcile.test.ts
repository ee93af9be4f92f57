// The interruption controller against the simulator: what each message kind does to the NodeClaim and
// Node it names (events, deletion, metrics), and that nothing a feed delivers stops the loop.
import { afterEach, describe, expect, it } from 'vitest';
import { wrapCloud } from '../../../test/support/drills.ts';
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
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: n,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } },
              ],
            },
          },
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

const claimObj = (s: Simulation, name: string): KObject | undefined =>
  s.cluster.store.get('nodeclaims.karpenter.sh', '', name);
const eventsOn = (s: Simulation, reason: string, name: string): KObject[] =>
  events(s, reason).filter((e) => (e['involvedObject'] as { name: string }).name === name);
const metric = (s: Simulation, name: string, labels: Record<string, string> = {}) =>
  s.operator.metrics.value(name, labels);

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
      [reserved, 'CapacityReservationInstanceInterrupted', 'capacity_reservation_interrupted'],
    ];
    for (const [c, reason, kind] of expectations) {
      expect(eventsOn(sim, reason, c.name), `${reason} on ${c.name}`).toHaveLength(1);
      expect(eventsOn(sim, reason, c.node), `${reason} on ${c.node}`).toHaveLength(1);
      expect(eventsOn(sim, 'TerminatingOnInterruption', c.name)[0]?.['message']).toBe(
        'Interruption triggered termination for the NodeClaim',
      );
      expect(eventsOn(sim, 'TerminatingOnInterruption', c.node)[0]?.['message']).toBe(
        'Interruption triggered termination for the Node',
      );
      // Deleting, or already gone (an instance that is already terminated is released without a drain).
      const left = claimObj(sim, c.name);
      expect(left === undefined || left.metadata.deletionTimestamp !== undefined, c.name).toBe(true);
      expect(await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: kind })).toBe(1);
      expect(await metric(sim, 'karpenter_nodeclaims_disrupted_total', { reason: kind })).toBe(1);
    }
    // A rebalance recommendation is a Normal event on both objects, and nothing else.
    const rb = eventsOn(sim, 'SpotRebalanceRecommendation', rebalance.name);
    expect(rb.map((e) => [e['type'], e['message']])).toEqual([
      ['Normal', 'Spot rebalance recommendation was triggered'],
    ]);
    expect(eventsOn(sim, 'SpotRebalanceRecommendation', rebalance.node)).toHaveLength(1);
    expect(claimObj(sim, rebalance.name)?.metadata.deletionTimestamp).toBeUndefined();
    expect(eventsOn(sim, 'TerminatingOnInterruption', rebalance.name)).toHaveLength(0);

    expect(await metric(sim, 'karpenter_interruption_actions_performed_total', { action_type: 'CordonAndDrain' })).toBe(
      4,
    );
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
    expect(eventsOn(sim, 'SpotInterrupted', pod.metadata.name!)[0]?.['message']).toBe(
      'Spot interruption warning was triggered',
    );
    expect(sim.provider.interruptions.marked.map((m) => m.capacity)).toEqual([
      {
        instanceType: obj.metadata.labels!['node.kubernetes.io/instance-type'],
        zone: obj.metadata.labels!['topology.kubernetes.io/zone'],
        capacityType: 'spot',
      },
    ]);
    expect(
      sim.provider.ice.isUnavailable(
        'spot',
        obj.metadata.labels!['node.kubernetes.io/instance-type']!,
        obj.metadata.labels!['topology.kubernetes.io/zone']!,
      ),
    ).toBe(true);
    expect(claimObj(sim, c.name)?.metadata.deletionTimestamp).toBeDefined();
    expect(
      await metric(sim, 'karpenter_nodeclaims_disrupted_total', {
        reason: 'spot_interrupted',
        capacity_type: 'spot',
        nodepool: 'spot-diverse',
      }),
    ).toBe(1);
  });

  it('counts and acknowledges no-ops, unknown kinds and messages for instances it does not manage, and keeps going', async () => {
    const r = await cluster(1);
    sim = r.sim;
    const feed = sim.provider.interruptions;
    const now = sim.clock.now();
    feed.push({ kind: 'noop', id: 'n-1', detail: 'no handler for aws.ec2 "EC2 Fleet Error"', time: now - 30_000 });
    feed.push({
      kind: 'stateChange',
      id: 'n-2',
      instanceIds: [r.claims[0]!.providerID.split('/').pop()!],
      state: 'running',
      time: now,
    });
    feed.push({ kind: 'spotInterruption', id: 'n-3', instanceIds: ['i-0000000000000dead'], time: now });
    feed.push({ kind: 'someFutureKind', id: 'n-4', time: now } as never);
    feed.push({ kind: 'scheduledChange', id: 'n-5', time: now } as never);
    await sim.settle();
    expect(feed.acknowledged).toHaveLength(5);
    expect(await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: 'no_op' })).toBe(3);
    expect(
      await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: 'spot_interrupted' }),
    ).toBe(1);
    expect(
      await metric(sim, 'karpenter_interruption_received_messages_total', { message_type: 'scheduled_change' }),
    ).toBe(1);
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

describe('interruption messages the controller cannot act on yet, and redeliveries', () => {
  /** Turns of the event loop until `done()` (bounded: a test that hangs here fails instead). */
  async function turnsUntil(done: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 10_000 && !done(); i++) await new Promise((r) => setImmediate(r));
    if (!done()) throw new Error(`${what} did not happen`);
  }

  it('leaves a message for an instance whose NodeClaim has not recorded it yet in the queue, and handles it when it comes back', async () => {
    let seenAtFirstDelivery: { acknowledged: number; received: number } | undefined;
    let interrupted: string | undefined;
    const s = await simulation({
      cloud: (cp) =>
        wrapCloud(cp, {
          // The warning arrives while the launch is still in flight: the instance exists, the NodeClaim does not name it yet.
          create: async (req) => {
            const inst = await cp.create(req);
            if (interrupted) return inst;
            interrupted = sim!.provider.interrupt(inst.providerID, 'spotInterruption').id;
            const feed = sim!.provider.interruptions;
            const interruption = () => sim!.operator.runtime.queue('interruption');
            await turnsUntil(
              () => feed.receiveCounts().get(interrupted!) === 1 && interruption()?.busy() === false,
              'the first delivery handled',
            );
            seenAtFirstDelivery = {
              acknowledged: feed.acknowledged.length,
              received: (await metric(sim!, 'karpenter_interruption_received_messages_total')) ?? 0,
            };
            return inst;
          },
        }),
    });
    sim = s;
    await s.apply(guide('guide-03.yaml'));
    await s.apply(guide('guide-05.yaml'));
    await s.apply(spread(1));
    await s.clock.advanceUntil(() => seenAtFirstDelivery !== undefined, 60_000, 'the launch');
    // Delivered once and not deleted: no visible NodeClaim named the instance, and a launch was in flight.
    expect(seenAtFirstDelivery).toEqual({ acknowledged: 0, received: 1 });
    const [claim] = nodeClaims(s);
    expect(claim!.metadata.deletionTimestamp).toBeUndefined();
    // SQS makes it visible again after its 20 s visibility timeout; by then the NodeClaim names the instance.
    await s.clock.advance(20_000);
    expect(s.provider.interruptions.deleted.map((e) => e.id)).toEqual([interrupted]);
    expect(await metric(s, 'karpenter_interruption_received_messages_total')).toBe(2);
    expect(await metric(s, 'karpenter_nodeclaims_disrupted_total', { reason: 'spot_interrupted' })).toBe(1);
    expect(claimObj(s, claim!.metadata.name!)?.metadata.deletionTimestamp).toBeDefined();
  });

  it('a message SQS delivers again while it is being handled is acted on once and deleted with its latest handle', async () => {
    const r = await cluster(1);
    sim = r.sim;
    const feed = sim.provider.interruptions;
    const mark = feed.markUnavailable.bind(feed);
    // Handling is under way (the offering is marked, the NodeClaim delete is in flight and slow) when the
    // visibility timeout runs out and the queue delivers the message again.
    sim.cluster.server.faults.addLatency(200, { resource: 'nodeclaims', verbs: ['delete'] });
    feed.markUnavailable = (e, c) => {
      mark(e, c);
      feed.expireVisibility();
    };
    const event = sim.provider.interrupt(r.claims[0]!.providerID, 'spotInterruption');
    await sim.settle();
    sim.cluster.server.faults.reset();

    expect(sim.cluster.requests.find({ verb: 'delete', resource: 'nodeclaims.karpenter.sh' })).toHaveLength(1);
    expect(await metric(sim, 'karpenter_interruption_actions_performed_total', { action_type: 'CordonAndDrain' })).toBe(
      1,
    );
    expect(eventsOn(sim, 'TerminatingOnInterruption', r.claims[0]!.name)).toHaveLength(1);
    expect(feed.marked).toHaveLength(1);
    // Deleted once, with the handle of the second delivery (the first one no longer deletes it).
    expect(feed.acknowledged).toEqual(['sim-2']);
    expect(feed.deleted.map((e) => e.id)).toEqual([event.id]);
    await sim.clock.advance(60_000);
    expect(feed.pending()).toBe(0);
    expect(await metric(sim, 'karpenter_interruption_deleted_messages_total')).toBe(1);
  });

  it('a failed delete of a handled message is retried without acting again', async () => {
    const r = await cluster(1);
    sim = r.sim;
    const feed = sim.provider.interruptions;
    const ack = feed.acknowledge.bind(feed);
    let failures = 1;
    feed.acknowledge = async (handle) => {
      if (failures-- > 0) throw new Error('queue unreachable');
      return ack(handle);
    };
    sim.provider.interrupt(r.claims[0]!.providerID, 'scheduledChange');
    await sim.settle();
    expect(feed.deleted).toHaveLength(0);
    await sim.clock.advance(1_000);
    expect(feed.deleted).toHaveLength(1);
    expect(await metric(sim, 'karpenter_interruption_actions_performed_total', { action_type: 'CordonAndDrain' })).toBe(
      1,
    );
    expect(eventsOn(sim, 'InstanceUnhealthy', r.claims[0]!.name)).toHaveLength(1);
  });
});
