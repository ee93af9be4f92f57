import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/aws.ts';
import { offeringKey, UnavailableOfferings } from './ice-cache.ts';

describe('UnavailableOfferings', () => {
  it('keys offerings capacityType:instanceType:zone', () => {
    expect(offeringKey('spot', 'm5.large', 'us-west-2a')).toBe('spot:m5.large:us-west-2a');
  });

  it('marks one offering for exactly three minutes', () => {
    const clock = new FakeClock();
    const ice = new UnavailableOfferings(clock);
    ice.markUnavailable('spot', 'm5.large', 'us-west-2a', 'InsufficientInstanceCapacity');
    expect(ice.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(true);
    expect(ice.reason('spot', 'm5.large', 'us-west-2a')).toBe('InsufficientInstanceCapacity');
    expect(ice.isUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(false);
    expect(ice.isUnavailable('spot', 'm5.large', 'us-west-2b')).toBe(false);
    expect(ice.isUnavailable('spot', 'm5.xlarge', 'us-west-2a')).toBe(false);
    clock.step(3 * 60_000 - 1);
    expect(ice.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(true);
    clock.step(1);
    expect(ice.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(false);
  });

  it('a capacity-type mark covers every offering of that capacity type', () => {
    const clock = new FakeClock();
    const ice = new UnavailableOfferings(clock);
    ice.markCapacityTypeUnavailable('spot', 'AuthFailure.ServiceLinkedRoleCreationNotPermitted');
    expect(ice.isUnavailable('spot', 'c6g.large', 'z')).toBe(true);
    expect(ice.isUnavailable('on-demand', 'c6g.large', 'z')).toBe(false);
    clock.step(180_000);
    expect(ice.isUnavailable('spot', 'c6g.large', 'z')).toBe(false);
  });

  it('tracks subnets out of addresses separately', () => {
    const clock = new FakeClock();
    const ice = new UnavailableOfferings(clock);
    ice.markSubnetUnavailable('subnet-a', 'InsufficientFreeAddressesInSubnet');
    expect(ice.isSubnetUnavailable('subnet-a')).toBe(true);
    expect(ice.isSubnetUnavailable('subnet-b')).toBe(false);
    clock.step(180_000);
    expect(ice.isSubnetUnavailable('subnet-a')).toBe(false);
  });

  it('changes its fingerprint on marks and on expiry, so memoized offerings are rebuilt', () => {
    const clock = new FakeClock();
    const ice = new UnavailableOfferings(clock);
    const f0 = ice.fingerprint();
    ice.markUnavailable('spot', 'm5.large', 'a', 'x');
    const f1 = ice.fingerprint();
    expect(f1).not.toBe(f0);
    expect(ice.fingerprint()).toBe(f1);
    clock.step(180_000);
    expect(ice.fingerprint()).not.toBe(f1);
  });
});
