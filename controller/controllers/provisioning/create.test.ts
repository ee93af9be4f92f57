// Creating a plan's NodeClaims (create.ts): several creates in flight at once but never more than the bound,
// started in plan order; NodePool limits checked in plan order against what the plan already reserved; a
// failed create gives its reservation back and fails the batch only after the others settled.
import { describe, expect, it } from 'vitest';
import { parseNodePool, type NewNodeClaimPlan, type Pod, type ProvisionPlan } from '../../../engine/index.ts';
import { snapshot } from '../../../test/fixtures/builders.ts';
import { fakeInstanceType } from '../../../test/fixtures/instancetypes.ts';
import type { KubeObject } from '../../operator/kube.ts';
import type { ControllerContext } from '../context.ts';
import { CONCURRENCY, createNodeClaims } from './create.ts';

const big = fakeInstanceType({ name: 'big', resources: { cpu: 8_000, memory: 16 * 2 ** 30 } });

function poolEntry(limits?: Record<string, string>) {
  const obj: KubeObject = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default', uid: 'pool-uid' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        },
      },
      ...(limits ? { limits } : {}),
    },
  };
  const r = parseNodePool(obj);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return { obj, pool: r.value, errors: [] };
}

const claim = (i: number): NewNodeClaimPlan => ({
  nodePool: 'default',
  pods: [`pod-${i}`],
  requirements: [],
  instanceTypes: [{ name: 'big', price: 1 }],
  requests: { cpu: 1_000, pods: 1 },
  labels: {},
  taints: [],
  startupTaints: [],
  price: 1,
});

const planOf = (n: number): ProvisionPlan => ({
  existing: new Map(),
  newNodeClaims: Array.from({ length: n }, (_, i) => claim(i)),
  unschedulable: [],
  ignored: [],
  costPerHour: n,
});

/** A context whose API server answers each create when the test says so; `fail` names pods whose NodeClaim is refused. */
function fakeContext(entry: ReturnType<typeof poolEntry>, fail: ReadonlySet<string> = new Set()) {
  const started: string[] = [];
  const applied: string[] = [];
  const events: Array<{ reason: string; message: string }> = [];
  let inFlight = 0;
  let most = 0;
  let n = 0;
  const ctx = {
    kube: {
      async create(_kind: string, o: KubeObject) {
        const pod = String((o.metadata.annotations ?? {})['test/pod'] ?? '');
        started.push(pod);
        // A refusal comes back at once, before any other create settles.
        if (fail.has(pod)) throw new Error(`refused ${pod}`);
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        return { ...o, metadata: { ...o.metadata, name: `default-${++n}` } };
      },
    },
    cluster: {
      nodePool: () => entry,
      stateNodes: () => [],
      applyNodeClaim: (o: KubeObject) => applied.push(o.metadata.name!),
    },
    metrics: { nodeClaimsCreated: { inc: () => {} } },
    log: { info: () => {}, error: () => {} },
    events: { publish: (...es: Array<{ reason: string; message: string }>) => events.push(...es) },
  };
  return { ctx: ctx as unknown as ControllerContext, started, applied, events, most: () => most };
}

const pods = (n: number): Map<string, Pod> =>
  new Map(
    Array.from({ length: n }, (_, i) => [
      `pod-${i}`,
      { uid: `pod-${i}`, name: `p${i}`, namespace: 'default' } as unknown as Pod,
    ]),
  );

/** Tags each NodeClaim with its plan's first pod, so the fake API server can tell them apart. */
function tagged(plan: ProvisionPlan): ProvisionPlan {
  return {
    ...plan,
    newNodeClaims: plan.newNodeClaims.map((nc) => ({ ...nc, annotations: { 'test/pod': nc.pods[0]! } })),
  };
}

describe('creating a plan’s NodeClaims', () => {
  it('has several creates in flight, never more than the bound, started in plan order', async () => {
    const f = fakeContext(poolEntry());
    const plan = tagged(planOf(CONCURRENCY * 3 + 2));
    await createNodeClaims(f.ctx, snapshot({ instanceTypes: [big] }), plan, pods(plan.newNodeClaims.length));
    expect(f.started).toEqual(plan.newNodeClaims.map((nc) => nc.pods[0]));
    expect(f.applied).toHaveLength(plan.newNodeClaims.length);
    expect(f.most()).toBe(CONCURRENCY);
  });

  it('stops the NodeClaims past a limit, in plan order', async () => {
    const f = fakeContext(poolEntry({ nodes: '3' }));
    const plan = tagged(planOf(6));
    await createNodeClaims(f.ctx, snapshot({ instanceTypes: [big] }), plan, pods(6));
    expect(f.started).toEqual(['pod-0', 'pod-1', 'pod-2']);
    const failed = f.events.filter((e) => e.reason === 'FailedScheduling');
    expect(failed).toHaveLength(3);
    expect(failed[0]!.message).toContain('nodes limit 3 would be exceeded');
  });

  it('gives a failed create’s reservation back, and fails the batch once the others settled', async () => {
    // Room for as many nodes as creates in flight; one of them fails, so one more NodeClaim fits after it.
    const f = fakeContext(poolEntry({ nodes: String(CONCURRENCY) }), new Set(['pod-1']));
    const n = CONCURRENCY + 2;
    const plan = tagged(planOf(n));
    await expect(createNodeClaims(f.ctx, snapshot({ instanceTypes: [big] }), plan, pods(n))).rejects.toThrow(
      'creating 1 nodeclaim(s)',
    );
    expect(f.started).toHaveLength(CONCURRENCY + 1);
    expect(f.applied).toHaveLength(CONCURRENCY);
    expect(f.events.filter((e) => e.reason === 'FailedScheduling').map((e) => e.message)).toEqual([
      expect.stringContaining(`nodes limit ${CONCURRENCY} would be exceeded`),
    ]);
  });
});
