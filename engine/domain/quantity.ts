// Kubernetes resource quantities, parsed exactly.
//
// Grammar (k8s.io/apimachinery resource.Quantity): <sign><digits>[.<digits>][<suffix>], where the suffix is
// a binary SI one (Ki Mi Gi Ti Pi Ei), a decimal SI one (n u m "" k M G T P E) or a decimal exponent
// (e3, E-2, ...). The value is kept as an exact rational (bigint numerator over a power-of-ten
// denominator) and converted to integers the way Kubernetes does: MilliValue() and Value() round up.

const BINARY: Readonly<Record<string, bigint>> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL_EXP: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** An exact quantity: num / 10^scale. */
export interface Quantity {
  readonly num: bigint;
  readonly scale: number;
}

export class QuantityError extends Error {
  override name = 'QuantityError';
}

const RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/** Parses a quantity string or number. Throws QuantityError with the offending text. */
export function parseQuantity(input: string | number): Quantity {
  if (typeof input === 'number') {
    if (Number.isNaN(input)) throw new QuantityError('NaN is not a quantity');
    // YAML and JSON read 1e400 as infinity: the text is gone, say what it must have been.
    if (!Number.isFinite(input))
      throw new QuantityError(
        `the number is ${input > 0 ? '' : 'negatively '}too large to be a quantity (it reads as ${input > 0 ? '' : '-'}infinity, as 1e400 does)`,
      );
    // String() writes large and tiny numbers with an exponent (9e+30, 1e-7), which the grammar reads exactly.
    return parseQuantity(String(input));
  }
  const s = input.trim();
  const m = RE.exec(s);
  if (!m)
    throw new QuantityError(
      `"${input}" is not a valid quantity (expected a number with an optional suffix such as 500m, 2Gi, 1.5, 1e3)`,
    );
  const [, sign, digits, suffix, exp] = m as unknown as [
    string,
    string,
    string,
    string | undefined,
    string | undefined,
  ];
  const [intPart, fracPart = ''] = digits.split('.');
  let num = BigInt((intPart || '0') + fracPart);
  let scale = fracPart.length;
  if (sign === '-') num = -num;
  if (suffix !== undefined && suffix in BINARY) {
    num *= BINARY[suffix]!;
  } else {
    const e = suffix !== undefined ? DECIMAL_EXP[suffix]! : exp !== undefined ? Number(exp) : 0;
    if (Math.abs(e) > 60) throw new QuantityError(`"${input}" has an exponent out of range`);
    scale -= e;
  }
  if (scale < 0) {
    num *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { num, scale };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a > 0n ? q + 1n : q;
}

/** The value in milli-units, rounded up (MilliValue). */
export function milliValue(q: Quantity): number {
  return Number(ceilDiv(q.num * 1000n, 10n ** BigInt(q.scale)));
}

/** The value in whole units, rounded up (Value). */
export function unitValue(q: Quantity): number {
  return Number(ceilDiv(q.num, 10n ** BigInt(q.scale)));
}

export function isNegative(q: Quantity): boolean {
  return q.num < 0n;
}

/** Formats bytes the way people read them ("1.5Gi", "512Mi", "100"). */
export function formatBytes(bytes: number): string {
  const units: Array<[string, number]> = [
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ];
  for (const [u, v] of units) {
    if (Math.abs(bytes) >= v) {
      const x = bytes / v;
      return `${Number.isInteger(x) ? x : x.toFixed(x >= 100 ? 0 : 1)}${u}`;
    }
  }
  return String(bytes);
}

/** Formats millicores as Kubernetes would print them ("1500m" -> "1.5", "250m"). */
export function formatMillicores(m: number): string {
  return m % 1000 === 0 ? String(m / 1000) : m >= 1000 ? (m / 1000).toFixed(2).replace(/0+$/, '') : `${m}m`;
}
