import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../test/fakes/aws.ts';
import type { InterruptionEvent, InterruptionSource } from '../../types.ts';
import { ReservationCapacity } from '../capacityreservation.ts';
import { UnavailableOfferings } from '../ice-cache.ts';
import { markingSpotInterruptions } from './ice.ts';

const event = (kind: 'spotInterruption' | 'capacityReservationInterruption'): InterruptionEvent => ({
  kind,
  id: 'e-1',
  instanceIds: ['i-1'],
  time: 0,
});

describe('markingSpotInterruptions', () => {
  it('marks the spot offering on a spot warning, and the reservation on a reservation interruption', async () => {
    const batch = [{ event: event('spotInterruption'), handle: 'h-1' }];
    const source: InterruptionSource = { receive: async () => batch, acknowledge: async () => undefined };
    const ice = new UnavailableOfferings(new FakeClock());
    const reservations = new ReservationCapacity();
    reservations.refresh('cr-1', 3);
    const marking = markingSpotInterruptions(
      source,
      ice,
      () => ({ instanceType: 'm5.large', zone: 'test-zone-1a' }),
      reservations,
    );
    await marking.receive(new AbortController().signal);
    expect(ice.isUnavailable('spot', 'm5.large', 'test-zone-1a')).toBe(true);
    marking.markUnavailable?.(event('spotInterruption'), { reservationId: 'cr-1' });
    expect(reservations.available('cr-1')).toBe(3);
    marking.markUnavailable?.(event('capacityReservationInterruption'), {
      instanceType: 'm5.large',
      zone: 'test-zone-1a',
      capacityType: 'reserved',
      reservationId: 'cr-1',
    });
    expect(reservations.available('cr-1')).toBe(0);
    expect(ice.isUnavailable('reserved', 'm5.large', 'test-zone-1a')).toBe(false);
  });
});
