import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kindOf } from '../../../controllers/interruption/messages.ts';
import { parseMessage } from './registry.ts';

const dir = new URL('../testdata/interruption-events/', import.meta.url);
const sample = (name: string) => readFileSync(new URL(name, dir), 'utf8');

describe('interruption messages', () => {
  it('parses every EventBridge sample into its event kind', () => {
    const got = Object.fromEntries(
      readdirSync(dir)
        .filter((f) => f !== 'sqs-receive-message-envelope.json')
        .map((f) => {
          const e = parseMessage(sample(f));
          return [f, { kind: e.kind, type: kindOf(e), ids: 'instanceIds' in e ? e.instanceIds : [] }];
        }),
    );
    expect(got).toEqual({
      'capacity-reservation-interruption-warning.json': {
        kind: 'capacityReservationInterruption',
        type: 'capacity_reservation_interrupted',
        ids: ['i-0d4e5f60718293a4b'],
      },
      'ignored-instance-state-change-running.json': { kind: 'noop', type: 'no_op', ids: [] },
      'instance-state-change-stopping.json': {
        kind: 'stateChange',
        type: 'instance_stopped',
        ids: ['i-0a1b2c3d4e5f60718'],
      },
      'instance-state-change-terminated.json': {
        kind: 'stateChange',
        type: 'instance_terminated',
        ids: ['i-0a1b2c3d4e5f60718'],
      },
      'rebalance-recommendation.json': {
        kind: 'rebalanceRecommendation',
        type: 'rebalance_recommendation',
        ids: ['i-0b662ef9931388ba0'],
      },
      'scheduled-change-health-event.json': {
        kind: 'scheduledChange',
        type: 'scheduled_change',
        ids: ['i-0c3f2a1b4d5e6f708'],
      },
      'spot-interruption-warning.json': {
        kind: 'spotInterruption',
        type: 'spot_interrupted',
        ids: ['i-0b662ef9931388ba0'],
      },
    });
  });

  it('parses the Body of the SQS envelope sample and keeps the event id and time', () => {
    const envelope = JSON.parse(sample('sqs-receive-message-envelope.json')) as { Messages: { Body: string }[] };
    expect(parseMessage(envelope.Messages[0]!.Body)).toEqual({
      kind: 'spotInterruption',
      id: '1e5527d7-bb36-4607-3370-4164db56a40e',
      instanceIds: ['i-0b662ef9931388ba0'],
      time: Date.parse('2026-08-21T14:05:12Z'),
    });
  });

  it('keeps the state of an accepted state change', () => {
    const e = parseMessage(sample('instance-state-change-terminated.json'));
    expect(e.kind === 'stateChange' && e.state).toBe('shutting-down');
  });

  it('acts on health events only for EC2 scheduled changes', () => {
    const health = JSON.parse(sample('scheduled-change-health-event.json')) as { detail: Record<string, unknown> };
    expect(
      parseMessage(JSON.stringify({ ...health, detail: { ...health.detail, eventTypeCategory: 'issue' } })).kind,
    ).toBe('noop');
    expect(parseMessage(JSON.stringify({ ...health, detail: { ...health.detail, service: 'RDS' } })).kind).toBe('noop');
  });

  it('maps unknown (version, source, detail-type) to noop', () => {
    const e = parseMessage(
      JSON.stringify({
        version: '0',
        id: 'x',
        'detail-type': 'EC2 AMI State Change',
        source: 'aws.ec2',
        time: '2026-08-21T00:00:00Z',
        detail: {},
      }),
    );
    expect(e).toMatchObject({ kind: 'noop', detail: expect.stringContaining('EC2 AMI State Change') });
    expect(
      parseMessage(
        JSON.stringify({
          version: '1',
          id: 'x',
          'detail-type': 'EC2 Spot Instance Interruption Warning',
          source: 'aws.ec2',
          time: '2026-08-21T00:00:00Z',
        }),
      ).kind,
    ).toBe('noop');
  });

  it('throws UnparseableMessageError for bodies that are not events or lack what their kind needs', () => {
    const spot = JSON.parse(sample('spot-interruption-warning.json')) as Record<string, unknown>;
    for (const body of [
      'not json',
      '[]',
      JSON.stringify({ id: 'x' }),
      JSON.stringify({ ...spot, time: 'yesterday' }),
      JSON.stringify({ ...spot, detail: {} }),
    ]) {
      expect(() => parseMessage(body), body).toThrow(expect.objectContaining({ name: 'UnparseableMessageError' }));
    }
  });
});
