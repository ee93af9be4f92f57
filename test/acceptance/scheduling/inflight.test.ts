// Karpenter scheduling acceptance: In-Flight Nodes (docs/karpenter/test-cases.md §11.8). A NodeClaim planned in one
// pass is an uninitialized node in the next (harness.ts); pods bound to it count against its capacity.
import { describe, expect, it } from 'vitest';
import type { Pod, StateNode, Taint } from '../../../engine/domain/types.ts';
import { daemonSet, pod, pods, stateNode } from '../../fixtures/builders.ts';
import { defaultFakeInstanceTypes, fakeInstanceType } from '../../fixtures/instancetypes.ts';
import {
  ARCH,
  CAPACITY_TYPE,
  Cluster,
  counts,
  eachSolver,
  HOSTNAME,
  INSTANCE_TYPE,
  NOT_READY,
  req,
  suitePool,
  ZONE,
} from './harness.ts';

const foo = { foo: 'bar' };
const spread = (key: string) => [
  { maxSkew: 1, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: foo } },
];
const dsPodOn = (
  ds: ReturnType<typeof daemonSet>,
  node: string,
  o: { cpu: string; memory: string; nodeSelector?: Record<string, string> },
): Pod => pod({ ...o, namespace: ds.namespace, owner: { kind: 'DaemonSet', name: ds.name }, nodeName: node });

eachSolver((s) => {
  const cluster = (o: ConstructorParameters<typeof Cluster>[1] = {}) => new Cluster(s, o);
  /** Provisions two pods in two passes and returns whether they share a node. */
  const samePlace = (c: Cluster, first: Pod, second: Pod, between?: (n: StateNode) => void) => {
    c.provision([first]);
    const n1 = c.scheduledNode(first);
    between?.(n1);
    c.provision([second]);
    return c.scheduledNode(second).name === n1.name;
  };

  it('should not launch a second node if there is an in-flight node that can support the pod', () => {
    expect(samePlace(cluster(), pod({ cpu: '10m' }), pod({ cpu: '10m' }))).toBe(true);
  });
  it('should not launch a second node if there is an in-flight node that can support the pod (node selectors)', () => {
    const c = cluster();
    const zones = (...z: string[]) => pod({ cpu: '10m', required: [[req(ZONE, 'In', ...z)]] });
    expect(samePlace(c, zones('test-zone-2'), zones('test-zone-1', 'test-zone-2'))).toBe(true);
    const third = zones('test-zone-1', 'test-zone-3');
    c.provision([third]);
    expect(c.scheduledNode(third).name).not.toBe(c.nodes[0]!.name);
  });
  it("should launch a second node if a pod won't fit on the existingNodes node", () => {
    expect(samePlace(cluster(), pod({ cpu: '1001m' }), pod({ cpu: '1' }))).toBe(false);
  });
  it("should launch a second node if a pod isn't compatible with the existingNodes node (node selector)", () => {
    expect(samePlace(cluster(), pod({ cpu: '10m' }), pod({ nodeSelector: { [ARCH]: 'arm64' } }))).toBe(false);
  });
  it('should launch a second node if an in-flight node is terminating', () => {
    const c = cluster();
    expect(
      samePlace(c, pod({ cpu: '10m' }), pod({ cpu: '10m' }), (n) =>
        c.update(n.name, (x) => ({ ...x, deleting: true })),
      ),
    ).toBe(false);
  });

  describe('Topology', () => {
    it('should balance pods across zones with in-flight nodes', () => {
      const c = cluster();
      c.provision(pods(4, { labels: foo, spread: spread(ZONE) }));
      expect(c.skew(ZONE, { matchLabels: foo })).toEqual(counts(1, 1, 2));
      const firstRound = c.nodes.length;
      c.provision(pods(5, { labels: foo, spread: spread(ZONE) }));
      expect(c.skew(ZONE, { matchLabels: foo })).toEqual(counts(3, 3, 3));
      expect(c.nodes).toHaveLength(firstRound);
    });
    it('should balance pods across hostnames with in-flight nodes', () => {
      const c = cluster();
      c.provision(pods(4, { labels: foo, spread: spread(HOSTNAME) }));
      expect(c.skew(HOSTNAME, { matchLabels: foo })).toEqual(counts(1, 1, 1, 1));
      c.provision(pods(5, { labels: foo, spread: spread(HOSTNAME) }));
      expect(c.skew(HOSTNAME, { matchLabels: foo })).toEqual(Array(9).fill(1));
    });
  });

  describe('Taints', () => {
    it('should assume pod will schedule to a tainted node with no taints', () => {
      const c = cluster();
      const first = pod({ cpu: '8' });
      expect(
        samePlace(c, first, pod(), (n) => {
          c.deletePod(first);
          c.update(n.name, (x) => ({ ...x, taints: [] }));
        }),
      ).toBe(true);
    });
    it('should not assume pod will schedule to a tainted node', () => {
      const c = cluster();
      const first = pod({ cpu: '8' });
      expect(
        samePlace(c, first, pod(), (n) => {
          c.deletePod(first);
          c.launch(n.name);
          c.update(n.name, (x) => ({
            ...x,
            taints: [...x.taints, { key: 'foo.com/taint', value: 'tainted', effect: 'NoSchedule' }],
          }));
        }),
      ).toBe(false);
    });
    it('should assume pod will schedule to a tainted node with a custom startup taint', () => {
      const startup: Taint = { key: 'foo.com/taint', value: 'tainted', effect: 'NoSchedule' };
      const c = cluster({ nodePools: [suitePool({ startupTaints: [startup] })] });
      const first = pod({ cpu: '8' });
      expect(
        samePlace(c, first, pod(), (n) => {
          c.deletePod(first);
          // startup taint + node not ready taint = 2
          expect(c.node(n.name)!.taints).toEqual([startup, NOT_READY]);
        }),
      ).toBe(true);
    });
    it('should not assume pod will schedule to a node with startup taints after initialization', () => {
      const startup: Taint = { key: 'ignore-me', value: 'nothing-to-see-here', effect: 'NoSchedule' };
      const c = cluster({ nodePools: [suitePool({ startupTaints: [startup] })] });
      const first = pod();
      expect(
        samePlace(c, first, pod(), (n) => {
          c.deletePod(first);
          c.launch(n.name);
          c.update(n.name, (x) => ({ ...x, taints: [startup], capacity: { pods: 10 } }));
        }),
      ).toBe(false);
    });
    it('should consider a tainted NotReady node as in-flight even if initialized', () => {
      const c = cluster();
      // Only the Node's label says initialized; its NodeClaim is not, so cluster state keeps it in flight.
      expect(
        samePlace(c, pod({ cpu: '10m' }), pod({ cpu: '10m' }), (n) =>
          c.update(n.name, (x) => ({
            ...x,
            labels: { ...x.labels, 'karpenter.sh/initialized': 'true' },
            taints: [
              { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
              { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
              { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' },
            ],
          })),
        ),
      ).toBe(true);
    });
  });

  describe('Daemonsets', () => {
    it('should track daemonset usage separately so we know how many DS resources are remaining to be scheduled', () => {
      const ds = daemonSet('ds', { cpu: '1', memory: '1Gi' });
      const c = cluster({ daemonSets: [ds] });
      const first = pod({ cpu: '8' });
      c.provision([first]);
      const n1 = c.scheduledNode(first);
      expect(n1.labels[INSTANCE_TYPE]).toBe('arm-instance-type');
      c.deletePod(first);
      c.provision([dsPodOn(ds, n1.name, { cpu: '1', memory: '2Gi' })]);
      // The daemonset pod is bound: 16 CPU − 100m overhead − 1 CPU leaves 14.9 CPU for the next pod.
      const second = pod({ cpu: '14.9' });
      c.provision([second]);
      expect(c.scheduledNode(second).name).toBe(n1.name);
    });
    it('should handle unexpected daemonset pods binding to the node', () => {
      const ds1 = daemonSet('ds1', { cpu: '1', memory: '1Gi', nodeSelector: { 'my-node-label': 'value' } });
      const ds2 = daemonSet('ds2', { cpu: '1m' });
      const c = cluster({ daemonSets: [ds1, ds2] });
      const first = pod({ cpu: '8' });
      c.provision([first]);
      const n1 = c.scheduledNode(first);
      c.update(n1.name, (x) => ({ ...x, labels: { ...x.labels, 'my-node-label': 'value' } }));
      c.deletePod(first);
      c.provision([dsPodOn(ds1, n1.name, { cpu: '1', memory: '2Gi', nodeSelector: { 'my-node-label': 'value' } })]);
      const second = pod({ cpu: '15.5' });
      c.provision([second]);
      expect(c.scheduledNode(second).name).not.toBe(n1.name);
    });
    it('should count daemonsets selecting the registered and initialized labels, without putting them on the NodeClaim', () => {
      const on = (key: string) => [[req(key, 'In', 'true')]];
      const a = daemonSet('ds-initialized', { cpu: '1', required: on('karpenter.sh/initialized') });
      const b = daemonSet('ds-registered', { cpu: '1', required: on('karpenter.sh/registered') });
      const c = cluster({ daemonSets: [a, b] });
      const first = pod({ cpu: '3' });
      const { plan } = c.provision([first]);
      // 3 CPU alone fits the 4-CPU type; with both daemonsets (2 CPU) only the 16-CPU type does.
      const n1 = c.scheduledNode(first);
      expect(n1.labels[INSTANCE_TYPE]).toBe('arm-instance-type');
      const claim = plan.newNodeClaims[0]!;
      for (const k of ['karpenter.sh/initialized', 'karpenter.sh/registered']) {
        expect(claim.requirements.map((r) => r.key)).not.toContain(k);
        expect(claim.labels).not.toHaveProperty(k);
      }
      c.deletePod(first);
      c.provision([dsPodOn(a, n1.name, { cpu: '1', memory: '0' }), dsPodOn(b, n1.name, { cpu: '1', memory: '0' })]);
      const second = pod({ cpu: '13.9' });
      c.provision([second]);
      expect(c.scheduledNode(second).name).toBe(n1.name);
    });
  });

  it('should pack in-flight nodes before launching new nodes', () => {
    const medium = fakeInstanceType({ name: 'medium', resources: { cpu: 4250, pods: 4 } });
    const c = cluster({ instanceTypes: [medium] });
    // Karpenter draws each batch size at random from [0, 10); any sequence must pack.
    for (const n of [3, 7, 0, 9, 4, 1, 8, 2, 6, 5]) c.provision(pods(n, { cpu: '1' }));
    const free = c.nodes.map(
      (n) => n.allocatable['cpu']! - n.pods.reduce((acc, p) => acc + (p.requests['cpu'] ?? 0), 0),
    );
    expect(c.pending).toHaveLength(0);
    expect(free.filter((f) => f >= 1000).length).toBeLessThanOrEqual(1);
  });
  it('should not launch a second node if there is an in-flight node that can support the pod (#2011)', () => {
    const c = cluster();
    const p = pod({ cpu: '10m' });
    c.provision([p], { bind: false });
    expect(c.nodes).toHaveLength(1);
    c.provision([p], { bind: false });
    expect(c.nodes).toHaveLength(1);
  });
  it('should order initialized nodes for scheduling uninitialized nodes when all other nodes are inflight', () => {
    const type = defaultFakeInstanceTypes()[0]!;
    const nodes = Array.from({ length: 100 }, (_, i) =>
      stateNode({
        name: `claim-${String(i).padStart(3, '0')}`,
        instanceType: type,
        zone: 'test-zone-1',
        capacityType: 'spot',
        initialized: i === 42,
        hasNode: i === 42,
      }),
    );
    const c = cluster({ nodes });
    const p = pod();
    c.provision([p]);
    expect(c.scheduledNode(p).name).toBe('claim-042');
  });
  it('should launch separate nodes for pods using the same host port', () => {
    const c = cluster();
    const ps = pods(2, { hostPorts: [8080] });
    c.provision(ps);
    expect(c.scheduledNode(ps[0]!).name).not.toBe(c.scheduledNode(ps[1]!).name);
  });
  it('should keep the capacity type of the cheapest option on the launched node', () => {
    // Harness check: the launched node carries the labels of one allowed offering of its cheapest option.
    const c = cluster();
    const p = pod({ nodeSelector: { [CAPACITY_TYPE]: 'on-demand', [ZONE]: 'test-zone-3' } });
    c.provision([p]);
    expect(c.scheduledNode(p).labels).toMatchObject({
      [CAPACITY_TYPE]: 'on-demand',
      [ZONE]: 'test-zone-3',
      [INSTANCE_TYPE]: 'small-instance-type',
    });
  });
});
