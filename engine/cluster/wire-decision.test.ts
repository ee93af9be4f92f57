// A disruption result through the worker's wire form (toWire, then a structured clone, then fromWire): the same result.
import { describe, expect, it } from 'vitest';
import type { Command, DisruptResult, PodMove } from '../disruption/types.ts';
import { fromWire, toWire } from './wire-decision.ts';

const moves = (n: number, from: string): PodMove[] =>
  Array.from({ length: n }, (_, i) => ({
    uid: `uid-${from}-${i}`,
    pod: `default/p-${from}-${i}`,
    from,
    to: i % 2 ? 'replacement:0' : 'node-b',
  }));

const command = (podsMoved: PodMove[]): Command => ({
  kind: 'replace',
  reason: 'Underutilized',
  method: 'repack',
  candidates: [],
  replacements: [],
  savingsPerHour: 1,
  podsMoved,
  metricLabels: { decision: 'replace', reason: 'underutilized', consolidation_type: 'repack' },
});

const result = (c: Command, followUps?: Command[]): DisruptResult => ({
  decision: { ...c, explanations: [], ...(followUps ? { followUps } : {}) },
  state: { consolidated: {}, previouslyUnseenPools: [] },
  metrics: { eligibleNodes: {}, allowedDisruptions: [], timeouts: {} } as unknown as DisruptResult['metrics'],
});

const roundTrip = (r: DisruptResult) => fromWire(structuredClone(toWire(r)));

describe('disruption results across the worker boundary', () => {
  it('carry every command of a decision back the same, in the same key order', () => {
    const r = result(command(moves(5, 'node-a')), [command(moves(3, 'node-c')), command([])]);
    const back = roundTrip(r);
    expect(back).toEqual(r);
    expect(JSON.stringify(back)).toBe(JSON.stringify(r));
  });

  it('send the moves as columns, not one object per pod', () => {
    const wire = toWire(result(command(moves(4, 'node-a'))));
    expect(Array.isArray(wire.decision.kind !== 'noop' && wire.decision.podsMoved)).toBe(false);
  });

  it('keep moves whose strings hold the separator as objects, unchanged', () => {
    const odd = moves(3, 'node-a');
    odd[1] = { ...odd[1]!, uid: 'a\nb' };
    const r = result(command(odd));
    const wire = toWire(r);
    expect(wire.decision.kind !== 'noop' && wire.decision.podsMoved).toBe(odd);
    expect(roundTrip(r)).toEqual(r);
  });

  it('leave a noop as it is', () => {
    const noop: DisruptResult = { ...result(command([])), decision: { kind: 'noop', explanations: [] } };
    expect(toWire(noop)).toBe(noop);
    expect(roundTrip(noop)).toEqual(noop);
  });
});
