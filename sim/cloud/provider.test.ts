import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parseDocuments,
  parseEC2NodeClass,
  type EC2NodeClass,
  type InstanceType,
  type NodeSelectorRequirement,
} from '../../engine/index.ts';
import { GUIDE_EXAMPLES_DIR } from '../../test/fixtures/guide.ts';
import { manualClock } from '../clock.ts';
import {
  isInsufficientCapacity,
  isNodeClaimNotFound,
  isNodeClassNotReady,
  type LaunchRequest,
} from '../../controller/cloudprovider/types.ts';
import { SimCloudProvider, type SimKubeletPort } from './provider.ts';

function nodeClass(ready = true): EC2NodeClass {
  const obj = parseDocuments(readFileSync(join(GUIDE_EXAMPLES_DIR, 'guide-03.yaml'), 'utf8'))[0]!.value as Record<
    string,
    unknown
  >;
  obj['status'] = {
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2025-01-01T00:00:00Z' }],
    subnets: [{ id: 's-a', zone: 'ap-northeast-2a' }],
  };
  const r = parseEC2NodeClass(obj);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

function setup(ready = true) {
  const clock = manualClock();
  const registered: Parameters<SimKubeletPort['registerInstance']>[0][] = [];
  const terminated: string[] = [];
  const nc = nodeClass(ready);
  const cp = new SimCloudProvider({
    clock,
    kubelet: { registerInstance: (s) => registered.push(s), terminateInstance: (id) => terminated.push(id) },
    nodeClass: (n) => (n === 'default' ? nc : undefined),
    launchMs: 2_000,
    terminateMs: 5_000,
  });
  return { clock, cp, registered, terminated };
}

const req = (requirements: NodeSelectorRequirement[], cpu = 1_000): LaunchRequest => ({
  nodeClaimName: 'default-abc',
  nodePoolName: 'default',
  nodeClassName: 'default',
  requirements,
  requests: { cpu, memory: 2 ** 30, pods: 1 },
  labels: { team: 'a' },
  annotations: {},
  taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
  startupTaints: [],
});
const types = (...names: string[]): NodeSelectorRequirement => ({
  key: 'node.kubernetes.io/instance-type',
  operator: 'In',
  values: names,
});
const capacity = (...values: string[]): NodeSelectorRequirement => ({
  key: 'karpenter.sh/capacity-type',
  operator: 'In',
  values,
});
const zone = (...values: string[]): NodeSelectorRequirement => ({
  key: 'topology.kubernetes.io/zone',
  operator: 'In',
  values,
});

describe('SimCloudProvider', () => {
  it('launches the cheapest allowed on-demand offering and boots it through the kubelet after the launch delay', async () => {
    const { clock, cp, registered } = setup();
    const i = await cp.create(
      req([types('m5.large', 'c5.large', 'm5.xlarge'), capacity('on-demand'), zone('ap-northeast-2b')]),
    );
    expect(i).toMatchObject({
      instanceType: 'c5.large',
      zone: 'ap-northeast-2b',
      capacityType: 'on-demand',
      state: 'pending',
      nodePoolName: 'default',
    });
    // As on AWS, the launch does not tag the instance with its NodeClaim; the simulator keeps it for the drills.
    expect(i.nodeClaimName).toBeUndefined();
    expect(cp.all().map((x) => x.launchedFor)).toEqual(['default-abc']);
    expect(i.providerID).toMatch(/^aws:\/\/\/ap-northeast-2b\/i-0[0-9a-f]{16}$/);
    expect(i.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'c5.large',
      'karpenter.k8s.aws/instance-family': 'c5',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/region': 'ap-northeast-2',
    });
    expect(i.capacity['cpu']).toBe(2_000);
    expect(registered).toEqual([]);
    await clock.advance(2_000);
    expect(registered).toHaveLength(1);
    expect(registered[0]).toMatchObject({
      providerID: i.providerID,
      labels: { team: 'a', 'node.kubernetes.io/instance-type': 'c5.large' },
      taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
      capacity: { cpu: '2' },
    });
    expect((await cp.get(i.providerID)).state).toBe('running');
  });

  it('prefers spot when the request allows it, and drops spot offerings dearer than the cheapest on-demand one', async () => {
    const { cp } = setup();
    const spot = await cp.create(req([types('m5.large', 'c5.large'), capacity('spot', 'on-demand')]));
    expect(spot.capacityType).toBe('spot');
    expect(cp.priceOf(spot.providerID)).toBeLessThan(0.096);
  });

  it('launches a generic type rather than a metal or GPU one, unless nothing else fits', async () => {
    const { cp } = setup();
    const i = await cp.create(req([types('g4dn.xlarge', 'm5.metal', 'm5.2xlarge'), capacity('on-demand')]));
    expect(i.instanceType).toBe('m5.2xlarge');
    const gpu = await cp.create(req([types('g4dn.xlarge', 'm5.metal'), capacity('on-demand')]));
    expect(gpu.instanceType).toBe('g4dn.xlarge');
  });

  it('fails with InsufficientCapacityError when every allowed offering is out of capacity, and keeps them out for 3 minutes', async () => {
    const { clock, cp } = setup();
    cp.blockCapacity({ instanceType: 'c5.large', capacityType: 'on-demand' });
    const err = await cp.create(req([types('c5.large'), capacity('on-demand')])).catch((e: unknown) => e);
    expect(isInsufficientCapacity(err)).toBe(true);
    if (!isInsufficientCapacity(err)) return;
    expect(err.offerings.map((o) => o.zone).sort()).toEqual([
      'ap-northeast-2a',
      'ap-northeast-2b',
      'ap-northeast-2c',
      'ap-northeast-2d',
    ]);
    const pool = {
      template: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
    } as never;
    const c5 = (await cp.getInstanceTypes(pool)).find((t) => t.name === 'c5.large')!;
    expect(c5.offerings.filter((o) => o.capacityType === 'on-demand').every((o) => !o.available)).toBe(true);
    expect(c5.offerings.filter((o) => o.capacityType === 'spot').some((o) => o.available)).toBe(true);
    // With capacity back, the cache still keeps them out until the 3 minutes are over.
    cp.unblockCapacity();
    await expect(cp.create(req([types('c5.large'), capacity('on-demand')]))).rejects.toThrow(
      /no instance type satisfies/,
    );
    await clock.advance(3 * 60_000);
    await expect(cp.create(req([types('c5.large'), capacity('on-demand')]))).resolves.toMatchObject({
      instanceType: 'c5.large',
    });
  });

  it('refuses launches for a node class that is not ready', async () => {
    const { cp } = setup(false);
    expect(isNodeClassNotReady(await cp.create(req([types('c5.large')])).catch((e: unknown) => e))).toBe(true);
  });

  it('terminates: the instance shuts down, then is gone, and delete says so', async () => {
    const { clock, cp, terminated } = setup();
    const i = await cp.create(req([types('c5.large')]));
    await cp.delete(i.providerID);
    expect(terminated).toEqual([i.providerID]);
    expect((await cp.get(i.providerID)).state).toBe('shutting-down');
    await clock.advance(5_000);
    expect(isNodeClaimNotFound(await cp.get(i.providerID).catch((e: unknown) => e))).toBe(true);
    expect(isNodeClaimNotFound(await cp.delete(i.providerID).catch((e: unknown) => e))).toBe(true);
    expect(await cp.list()).toEqual([]);
  });

  it('sends a spot interruption, marks the offering unavailable when told, and reclaims the instance after 2 minutes', async () => {
    const { clock, cp, terminated } = setup();
    const i = await cp.create(req([types('c5.large'), capacity('spot')]));
    await clock.advance(2_000);
    const event = cp.interrupt(i.providerID);
    expect(event).toMatchObject({ kind: 'spotInterruption', instanceIds: [i.providerID.split('/').pop()] });
    const ac = new AbortController();
    expect(await cp.interruptions.receive(ac.signal)).toEqual([{ event, handle: expect.any(String) }]);
    // The controller, handling the message, reports what the NodeClaim ran on.
    expect(cp.ice.isUnavailable('spot', 'c5.large', i.zone)).toBe(false);
    cp.interruptions.markUnavailable(event, { instanceType: 'c5.large', zone: i.zone, capacityType: 'spot' });
    expect(cp.ice.isUnavailable('spot', 'c5.large', i.zone)).toBe(true);
    await clock.advance(119_000);
    expect(terminated).toEqual([]);
    await clock.advance(1_000);
    expect(terminated).toEqual([i.providerID]);
  });

  it('terminates the instance a state-change notification reports', async () => {
    const { clock, cp, terminated } = setup();
    const i = await cp.create(req([types('c5.large')]));
    await clock.advance(2_000);
    const event = cp.interrupt(i.providerID, 'stateChange', { state: 'terminated' });
    expect(event).toMatchObject({ kind: 'stateChange', state: 'terminated' });
    expect(terminated).toEqual([i.providerID]);
    expect(await cp.list()).toEqual([]);
  });

  it('reports NodeClassDrift once the node class spec changes after launch', async () => {
    const { cp } = setup();
    const i = await cp.create(req([types('c5.large')]));
    const q = {
      nodeClaimName: 'x',
      providerID: i.providerID,
      nodeClassName: 'default',
      labels: {},
      annotations: i.annotations,
    };
    expect(await cp.isDrifted(q)).toBeUndefined();
    expect(
      await cp.isDrifted({ ...q, annotations: { ...i.annotations, 'karpenter.k8s.aws/ec2nodeclass-hash': '1' } }),
    ).toBe('NodeClassDrift');
  });

  it('refuses, naming it, a reserved offering whose reservation the network does not hold (no silent launch)', async () => {
    const { cp } = setup();
    const withBogusReservation = (its: readonly InstanceType[]): InstanceType[] =>
      its.map((it) =>
        it.name !== 'm5.large'
          ? it
          : {
              ...it,
              offerings: [
                ...it.offerings,
                {
                  capacityType: 'reserved',
                  zone: 'ap-northeast-2a',
                  price: 0.001,
                  available: true,
                  reservationId: 'cr-0missing',
                  reservationCapacity: 1,
                },
              ],
            },
      );
    await expect(cp.create({ ...req([types('m5.large')]), overlay: withBogusReservation })).rejects.toThrow(
      /m5\.large's reserved offering in ap-northeast-2a names capacity reservation cr-0missing .*does not hold/,
    );
    expect(cp.all()).toEqual([]);
  });
});
