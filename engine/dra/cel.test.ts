import { describe, expect, it } from 'vitest';
import type { Device } from '../domain/dra.ts';
import { evalSelector, parseSelector } from './cel.ts';

const dev: Device = {
  name: 'gpu-0',
  attributes: {
    'gpu.example.com/model': { kind: 'string', value: 'A100' },
    'gpu.example.com/index': { kind: 'int', value: 3 },
    'gpu.example.com/mig': { kind: 'bool', value: false },
    'gpu.example.com/driverVersion': { kind: 'version', value: '1.2.3' },
  },
  capacity: { 'gpu.example.com/memory': 40 * 2 ** 30 },
  allowMultipleAllocations: false,
  consumesCounters: [],
};
const ev = (e: string) => evalSelector(parseSelector(e), 'gpu.example.com', dev);

describe('the supported CEL subset', () => {
  it('evaluates driver, attribute and capacity predicates joined by &&', () => {
    expect(ev('device.driver == "gpu.example.com"')).toBe(true);
    expect(ev("device.driver != 'gpu.example.com'")).toBe(false);
    expect(ev('device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "A100"')).toBe(true);
    expect(
      ev('(device.attributes["gpu.example.com"].index >= 2) && device.attributes["gpu.example.com"].index < 4'),
    ).toBe(true);
    expect(ev('device.attributes["gpu.example.com"].index > 3')).toBe(false);
    expect(ev('device.attributes["gpu.example.com"].mig')).toBe(false);
    expect(ev('device.attributes["gpu.example.com"].mig == false')).toBe(true);
    expect(ev('device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) >= 0')).toBe(true);
    expect(ev('device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0')).toBe(false);
  });

  it('treats a missing attribute as an error, which a false conjunct still overrides (CEL &&)', () => {
    expect(ev('device.attributes["other.com"].x == "y"')).toEqual({
      error: 'device gpu-0 has no attribute other.com/x',
    });
    expect(ev('device.driver == "other.com" && device.attributes["other.com"].x == "y"')).toBe(false);
    expect(ev('device.attributes["gpu.example.com"].model > 3')).toEqual({
      error: 'no ordering between string and number',
    });
  });

  it('names what is outside the subset instead of guessing', () => {
    for (const [e, why] of [
      ['device.driver == "a" || device.driver == "b"', 'disjunction'],
      ['!(device.driver == "a")', 'negation (!)'],
      [
        'device.attributes["gpu.example.com"].model.startsWith("A")',
        'a method call on attribute gpu.example.com/model',
      ],
      ['"gpu.example.com/model" in device.attributes', 'at the start of a predicate'],
      ['device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))', 'method call'],
      ['device.capacity["gpu.example.com"].memory > 5', '">" where . was expected'],
      ['size(device.attributes) > 0', 'at the start of a predicate'],
      ['', 'an empty expression'],
    ] as const) {
      const s = parseSelector(e);
      expect(s.predicates, e).toBeUndefined();
      expect(s.unsupported, e).toContain(why);
      expect(s.unsupported, e).toContain('supported:');
    }
  });
});
