// A NodeOverlay that adds an extended resource (capacity) is seen by every step that decides where a pod goes:
// the plan, the launch (the cloud provider fits the NodeClaim against the overlaid types, as Karpenter's AWS
// provider applies the store in Create), and the what-if. Karpenter core pkg/controllers/nodeoverlay and
// aws pkg/cloudprovider/cloudprovider.go (Create), main after v1.14.1.
import { afterEach, describe, expect, it } from 'vitest';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  running,
  simulation,
  type Simulation,
} from '../../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const POOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ['m5.large', 'm5.xlarge']
        - key: karpenter.sh/capacity-type
          operator: In
          values: ['on-demand']
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
`;

const WIDGETS = JSON.stringify({
  apiVersion: 'karpenter.sh/v1alpha1',
  kind: 'NodeOverlay',
  metadata: { name: 'widgets' },
  spec: {
    requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }],
    capacity: { 'example.com/widget': '2' },
  },
});

const POD = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'widget-user', namespace: 'default', labels: { app: 'widget' } },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'pause',
        resources: {
          requests: { cpu: '500m', memory: '512Mi', 'example.com/widget': '1' },
          limits: { 'example.com/widget': '1' },
        },
      },
    ],
  },
});

describe('NodeOverlay capacity: plan and launch', () => {
  it('should launch a node for a pod requesting a resource only a capacity overlay adds', async () => {
    sim = await simulation({ options: { 'feature-gates': 'NodeOverlay=true' } });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(POOL);
    await sim.apply(WIDGETS);
    await sim.settle();
    await sim.apply(POD);
    const s = sim;
    await s.clock.advanceUntil(() => running(s, 'widget') === 1, 10 * 60_000, 'the widget pod running');
    const claims = nodeClaims(s);
    expect(claims).toHaveLength(1);
    const types = (claims[0]!.spec as { requirements: Array<{ key: string; values: string[] }> }).requirements.find(
      (r) => r.key === 'node.kubernetes.io/instance-type',
    )!.values;
    // Only the overlaid type offers the widget.
    expect(types).toEqual(['m5.xlarge']);
    expect(claims[0]!.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('m5.xlarge');
    expect(
      (claims[0]!.status as { capacity?: Record<string, string> } | undefined)?.capacity?.['example.com/widget'],
    ).toBe('2');
    expect(events(s, 'InsufficientCapacityError')).toHaveLength(0);
    expect(claims[0]!.metadata.annotations).toMatchObject({ 'karpenter.sh/capacity-overlay-applied': 'true' });
    expect(claims[0]!.metadata.annotations?.['karpenter.sh/price-overlay-applied']).toBeUndefined();
  });
});

// Karpenter core pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go (main after v1.14.1): a NodeClaim
// whose price-ordered instance types include one with an overlaid price, or overlaid capacity, says so.
describe('NodeOverlay annotations on the NodeClaims provisioning creates', () => {
  const price = (name: string, values: string[], spec: Record<string, unknown>) =>
    JSON.stringify({
      apiVersion: 'karpenter.sh/v1alpha1',
      kind: 'NodeOverlay',
      metadata: { name },
      spec: { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values }], ...spec },
    });

  async function claimFor(...overlays: string[]) {
    sim = await simulation({ options: { 'feature-gates': 'NodeOverlay=true' } });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(POOL);
    for (const o of overlays) await sim.apply(o);
    await sim.settle();
    await sim.apply(deployment('web', 1, { cpu: '500m' }));
    const s = sim;
    await s.clock.advanceUntil(() => running(s, 'web') === 1, 10 * 60_000, 'the web pod running');
    expect(nodeClaims(s)).toHaveLength(1);
    return nodeClaims(s)[0]!;
  }

  it('should annotate the nodeclaim with price-overlay-applied when an instance type it may launch is repriced', async () => {
    const claim = await claimFor(price('cheap-xlarge', ['m5.xlarge'], { priceAdjustment: '-5%' }));
    expect(claim.metadata.annotations).toMatchObject({ 'karpenter.sh/price-overlay-applied': 'true' });
    expect(claim.metadata.annotations?.['karpenter.sh/capacity-overlay-applied']).toBeUndefined();
  });

  it('should not annotate the nodeclaim when no overlay touches its instance types', async () => {
    const claim = await claimFor(price('c5-only', ['c5.large'], { price: '0.01', capacity: { 'example.com/x': '1' } }));
    expect(claim.metadata.annotations?.['karpenter.sh/price-overlay-applied']).toBeUndefined();
    expect(claim.metadata.annotations?.['karpenter.sh/capacity-overlay-applied']).toBeUndefined();
  });

  it('should carry both annotations when price and capacity overlays apply to its types', async () => {
    const claim = await claimFor(
      price('priced', ['m5.large'], { priceAdjustment: '+1%' }),
      price('widgets', ['m5.xlarge'], { capacity: { 'example.com/widget': '1' } }),
    );
    expect(claim.metadata.annotations).toMatchObject({
      'karpenter.sh/price-overlay-applied': 'true',
      'karpenter.sh/capacity-overlay-applied': 'true',
    });
  });
});
