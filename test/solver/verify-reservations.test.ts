// The verifier's reservation checks (engine/verify/verify.ts): a plan that holds a reservation more often than it
// has instances, or lets a NodeClaim launch into reserved capacity without holding it, is rejected; the solvers'
// own plans for the same problem pass.
import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../../engine/domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../engine/domain/types.ts';
import { solveReference } from '../../engine/solver/reference/scheduler.ts';
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan } from '../../engine/model/types.ts';
import { WasmSolver } from '../../engine/solver/wasm.ts';
import { verifyPlan } from '../../engine/verify/verify.ts';
import { nodePool, pods } from '../fixtures/builders.ts';
import { fakeDefaultOfferings, fakeInstanceType, fakeOffering } from '../fixtures/instancetypes.ts';

const RID = 'karpenter.k8s.aws/capacity-reservation-id';
const CT = 'karpenter.sh/capacity-type';

function problem(capacity: number): ProvisionInput {
  const small: InstanceType = fakeInstanceType({
    name: 'small',
    resources: { cpu: 2000 },
    offerings: [
      ...fakeDefaultOfferings(0.2),
      fakeOffering({
        zone: 'test-zone-1',
        capacityType: 'reserved',
        price: 0.00002,
        reservationId: 'r-1',
        reservationCapacity: capacity,
      }),
    ],
  });
  const pool = nodePool({ requirements: [{ key: CT, operator: 'In', values: ['spot', 'on-demand', 'reserved'] }] });
  return {
    nodePools: [pool],
    instanceTypes: new Map([[pool.name, [small]]]),
    nodes: [],
    pods: pods(3, { cpu: '1500m' }),
    daemonSets: [],
    options: { ...DEFAULT_ENGINE_OPTIONS, maxInstanceTypes: 60 },
  };
}

const kinds = (input: ProvisionInput, plan: ProvisionPlan) =>
  verifyPlan(input, plan)
    .filter((x) => x.kind === 'reservation')
    .map((x) => x.message);

describe('verifier: reserved capacity', () => {
  it("passes the solvers' plans, which hold each reservation at most as often as it has instances", () => {
    for (const cap of [0, 1, 2, 3]) {
      const input = problem(cap);
      expect(verifyPlan(input, solveReference(input))).toEqual([]);
      expect(verifyPlan(input, new WasmSolver({ improve: false }).solve(input))).toEqual([]);
      expect(verifyPlan(input, new WasmSolver({ improve: true }).solve(input))).toEqual([]);
    }
  });

  it('rejects a plan holding a reservation more often than its capacity', () => {
    const input = problem(1);
    const plan = solveReference({ ...input, reservedOfferingMode: 'Fallback' });
    const holder = plan.newNodeClaims.find((c) => c.requirements.some((r) => r.key === RID))!;
    expect(holder).toBeDefined();
    const forged: ProvisionPlan = {
      ...plan,
      newNodeClaims: plan.newNodeClaims.map((c) => ({
        ...c,
        requirements: holder.requirements,
        instanceTypes: holder.instanceTypes,
        price: holder.price,
      })),
    };
    expect(kinds(input, forged)).toContainEqual(
      expect.stringContaining('reservation r-1 is held by 3 NodeClaims but has 1 instance(s)'),
    );
  });

  it('rejects, in Strict mode, a NodeClaim that may launch into a reservation it does not hold', () => {
    const input = problem(1);
    const plan = solveReference(input);
    const strip = (c: NewNodeClaimPlan): NewNodeClaimPlan => ({
      ...c,
      requirements: [
        ...c.requirements.filter((r) => r.key !== RID && r.key !== CT),
        { key: CT, operator: 'In', values: ['on-demand', 'reserved', 'spot'] },
      ],
    });
    const forged: ProvisionPlan = { ...plan, newNodeClaims: plan.newNodeClaims.map(strip) };
    expect(
      kinds(input, forged).some(
        (m) => m.includes('may launch into reservation r-1') && m.includes('without holding it'),
      ),
    ).toBe(true);
  });

  it('rejects a NodeClaim holding a reservation that may launch as on-demand', () => {
    const input = problem(1);
    const plan = solveReference(input);
    const loosen = (c: NewNodeClaimPlan): NewNodeClaimPlan => ({
      ...c,
      requirements: c.requirements.map((r) => (r.key === CT ? { ...r, values: ['on-demand', 'reserved'] } : r)),
    });
    const forged: ProvisionPlan = { ...plan, newNodeClaims: plan.newNodeClaims.map(loosen) };
    expect(
      kinds(input, forged).some((m) =>
        m.includes('holds reservations r-1 but may launch as other than capacity-type reserved'),
      ),
    ).toBe(true);
  });

  it('judges a NodeClaim that allows reserved capacity but is offered none by the spot and on-demand rule', () => {
    // The NodePool allows reserved, spot and on-demand; its type has spot offerings cheaper than on-demand and no
    // reservation: the launch takes spot, so a NodeClaim named at the on-demand price is caught.
    const it1: InstanceType = fakeInstanceType({
      name: 'plain',
      resources: { cpu: 2000 },
      offerings: [
        fakeOffering({ zone: 'test-zone-1', capacityType: 'spot', price: 0.05 }),
        fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 0.2 }),
      ],
    });
    const input: ProvisionInput = { ...problem(0), instanceTypes: new Map([['default', [it1]]]) };
    for (const improve of [false, true])
      expect(verifyPlan(input, new WasmSolver({ improve }).solve(input))).toEqual([]);
    const plan = new WasmSolver().solve(input);
    const asOnDemand: ProvisionPlan = {
      ...plan,
      newNodeClaims: plan.newNodeClaims.map((c) => ({
        ...c,
        // The NodePool's capacity types, reserved among them, as the NodeClaim's requirement.
        requirements: [
          ...c.requirements.filter((r) => r.key !== CT),
          { key: CT, operator: 'In' as const, values: ['reserved', 'spot', 'on-demand'] },
        ],
        instanceTypes: [{ name: 'plain', price: 0.2 }],
        price: 0.2,
      })),
    };
    const launch = verifyPlan(input, asOnDemand).filter((x) => x.kind === 'launch');
    expect(launch.map((x) => x.message)).toContainEqual(
      expect.stringContaining('its launch would pick spot at 0.05/h'),
    );
  });
});
