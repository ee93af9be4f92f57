import { describe, expect, it } from 'vitest';
import { isNegative, milliValue, parseQuantity, QuantityError, unitValue } from './quantity.ts';
import { parseResources, resourceValue } from './resources.ts';

describe('parseQuantity', () => {
  it.each([
    ['1Ki', 1024],
    ['1Mi', 1024 ** 2],
    ['1Gi', 1024 ** 3],
    ['1Ti', 1024 ** 4],
    ['1Pi', 1024 ** 5],
    ['2Ei', 2 * 1024 ** 6],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['0.5Ki', 512],
  ])('reads the binary suffix in %s', (s, bytes) => {
    expect(unitValue(parseQuantity(s))).toBe(bytes);
  });

  it.each([
    ['1k', 1e3],
    ['1M', 1e6],
    ['1G', 1e9],
    ['1T', 1e12],
    ['1P', 1e15],
    ['3E', 3e18],
    ['7', 7],
    ['2.5k', 2500],
  ])('reads the decimal suffix in %s', (s, v) => {
    expect(unitValue(parseQuantity(s))).toBe(v);
  });

  it.each([
    ['500m', 500],
    ['1', 1000],
    ['0.1', 100],
    ['1.5', 1500],
    ['2500u', 3],
    ['1n', 1],
    ['100u', 1],
    ['.5', 500],
  ])('converts %s to millicores (rounding up)', (s, m) => {
    expect(milliValue(parseQuantity(s))).toBe(m);
  });

  it.each([
    ['1e3', 1000],
    ['1E3', 1000],
    ['2e-3', 1],
    ['1.5e2', 150],
    ['5e+1', 50],
    ['12E0', 12],
  ])('reads the exponent form %s', (s, v) => {
    expect(unitValue(parseQuantity(s))).toBe(v);
  });

  it('rounds fractional units up, as Value() does', () => {
    expect(unitValue(parseQuantity('1.1'))).toBe(2);
    expect(unitValue(parseQuantity('100m'))).toBe(1);
    expect(unitValue(parseQuantity('1.0001k'))).toBe(1001);
    expect(resourceValue('memory', '0.5')).toBe(1);
    expect(resourceValue('cpu', '0.0001')).toBe(1);
  });

  it('keeps negatives negative and does not round them away from zero', () => {
    const q = parseQuantity('-1.5');
    expect(isNegative(q)).toBe(true);
    expect(milliValue(q)).toBe(-1500);
    expect(unitValue(parseQuantity('-1.5'))).toBe(-1);
    expect(unitValue(parseQuantity('-2Gi'))).toBe(-2 * 1024 ** 3);
    expect(isNegative(parseQuantity('+3'))).toBe(false);
  });

  it('accepts numbers as YAML decodes them', () => {
    expect(milliValue(parseQuantity(2))).toBe(2000);
    expect(milliValue(parseQuantity(0.25))).toBe(250);
    expect(unitValue(parseQuantity(1e21))).toBe(1e21);
    // A YAML 9e30 once read as 9e+3 (its exponent's zero trimmed as if it were a decimal's).
    expect(unitValue(parseQuantity(9e30))).toBe(9e30);
    expect(milliValue(parseQuantity(1.5e-7))).toBe(1);
  });

  it.each(['', 'abc', '1.2.3', '5 Gi', '1Gb', '1KiB', 'Gi', '--1', '1e', '1e3Gi', '0x10', '1,5'])(
    'rejects %j with a QuantityError naming the text',
    (s) => {
      expect(() => parseQuantity(s)).toThrow(QuantityError);
      expect(() => parseQuantity(s)).toThrow(
        s === '' ? /is not a valid quantity/ : new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
      );
    },
  );

  it('rejects non-finite numbers and huge exponents', () => {
    expect(() => parseQuantity(Number.NaN)).toThrow(QuantityError);
    expect(() => parseQuantity(Number.POSITIVE_INFINITY)).toThrow(QuantityError);
    expect(() => parseQuantity('1e999')).toThrow(/exponent out of range/);
  });

  it('parses a resource list into integer units and names the bad key', () => {
    expect(parseResources({ cpu: '1500m', memory: '1Gi', pods: 10, 'nvidia.com/gpu': '1' })).toEqual({
      cpu: 1500,
      memory: 1024 ** 3,
      pods: 10,
      'nvidia.com/gpu': 1,
    });
    expect(() => parseResources({ cpu: '1', memory: 'lots' })).toThrow(/^memory: /);
  });
});

describe('resourceValue refuses what no request, limit or capacity can be', () => {
  it.each([
    ['cpu', '-1', '"-1" is negative: cpu must be 0 or more'],
    ['memory', -512, '-512 is negative: memory must be 0 or more'],
    ['memory', '9e30', '"9e30" is too large: memory must be at most 9007199254740991 units'],
    ['cpu', 1e13, 'is too large: cpu must be at most 9007199254740991 millicores'],
    ['cpu', Number.NaN, 'NaN is not a quantity'],
    ['cpu', Number.POSITIVE_INFINITY, 'too large to be a quantity (it reads as infinity, as 1e400 does)'],
    ['cpu', '1e400', 'has an exponent out of range'],
  ])('%s %j', (name, v, message) => {
    expect(() => resourceValue(name, v)).toThrow(QuantityError);
    expect(() => resourceValue(name, v)).toThrow(message);
  });

  it('takes zero and the largest exact amount', () => {
    expect(resourceValue('cpu', '0')).toBe(0);
    expect(resourceValue('memory', String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  });
});
