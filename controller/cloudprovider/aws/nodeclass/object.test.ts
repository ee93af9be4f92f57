import { describe, expect, it } from 'vitest';
import { parseEC2NodeClass } from '../../../../engine/index.ts';
import { nodeClass, readyNodeClass } from '../../../../test/fakes/aws.ts';
import { buildConditions, isReady } from './conditions.ts';
import { mustParseNodeClass, observedGeneration, parseNodeClass, statusObject } from './object.ts';

const raw = (generation: number, readyFor: number) => ({
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'gpu', generation },
  spec: {
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'R',
    subnetSelectorTerms: [{ id: 'subnet-1' }],
    securityGroupSelectorTerms: [{ id: 'sg-1' }],
  },
  status: {
    conditions: [
      {
        type: 'SubnetsReady',
        status: 'True',
        reason: 'SubnetsReady',
        message: '',
        lastTransitionTime: '2026-08-21T11:00:00Z',
      },
      {
        type: 'Ready',
        status: 'True',
        reason: 'Ready',
        message: '',
        observedGeneration: readyFor,
        lastTransitionTime: '2026-08-21T11:00:00Z',
      },
    ],
  },
});

describe('parseNodeClass', () => {
  it("is the engine parser plus each condition's observedGeneration", () => {
    const r = parseNodeClass(raw(3, 2));
    const engine = parseEC2NodeClass(raw(3, 2));
    if (!r.ok || !engine.ok) throw new Error('parse failed');
    expect(r.value.spec).toEqual(engine.value.spec);
    expect(r.value.status.conditions.map((c) => [c.type, observedGeneration(c)])).toEqual([
      ['SubnetsReady', undefined],
      ['Ready', 2],
    ]);
  });

  it('makes Ready count only for the generation it was computed for', () => {
    const stale = mustParseNodeClass(raw(3, 2));
    const current = mustParseNodeClass(raw(3, 3));
    expect(isReady(stale.status.conditions, stale.generation)).toBe(false);
    expect(isReady(current.status.conditions, current.generation)).toBe(true);
    // Parsed by the engine alone, the generation is unknown and Ready=True is trusted.
    const engine = parseEC2NodeClass(raw(3, 2));
    expect(engine.ok && isReady(engine.value.status.conditions, engine.value.generation)).toBe(true);
  });

  it("returns the engine's field errors, and mustParseNodeClass throws them", () => {
    const bad = { ...raw(1, 1), spec: { ...raw(1, 1).spec, subnetSelectorTerms: [] } };
    const r = parseNodeClass(bad);
    expect(r.ok).toBe(false);
    expect(() => mustParseNodeClass(bad)).toThrow(/EC2NodeClass\/gpu: spec\.subnetSelectorTerms/);
  });
});

describe('statusObject', () => {
  it('renders conditions for the API server (RFC 3339, observedGeneration) and parses back to the same status', () => {
    const nc = readyNodeClass({}, 4);
    const conditions = buildConditions(
      [{ type: 'SubnetsReady', status: 'False', reason: 'SubnetsNotFound', message: 'none' }],
      nc.status.conditions,
      4,
      Date.parse('2026-08-21T12:34:56.789Z'),
    );
    const status = { ...nc.status, conditions };
    const wire = statusObject(status);
    expect(wire['conditions']).toContainEqual({
      type: 'SubnetsReady',
      status: 'False',
      observedGeneration: 4,
      lastTransitionTime: '2026-08-21T12:34:56Z',
      reason: 'SubnetsNotFound',
      message: 'none',
    });
    const back = nodeClass({}, { metadata: { generation: 4 }, status: wire });
    expect(back.status).toEqual(status);
  });

  it('writes empty lists and a null instance profile when the status has none, so a merge patch clears the old values', () => {
    const wire = statusObject(nodeClass().status);
    expect(wire).toEqual({
      subnets: [],
      securityGroups: [],
      amis: [],
      capacityReservations: [],
      instanceProfile: null,
      conditions: [],
    });
    // A null reads back as "no instance profile", as the API server stores it (the field removed).
    expect(nodeClass({}, { status: wire }).status.instanceProfile).toBeUndefined();
  });
});
