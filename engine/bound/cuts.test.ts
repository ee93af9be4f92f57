import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CutMaster } from './cuts.ts';

interface Cut {
  readonly c: number;
  readonly g: readonly number[];
}

/** min_j c_j + g_j·π */
const least = (cuts: readonly Cut[], pi: ArrayLike<number>): number =>
  Math.min(...cuts.map((k) => k.c + k.g.reduce((t, x, i) => t + x * pi[i]!, 0)));

/** Solves A·x = b (square) by Gaussian elimination; undefined if singular. */
function solve(a: number[][], b: number[]): number[] | undefined {
  const n = b.length;
  const m = a.map((row, r) => [...row, b[r]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    if (Math.abs(m[p]![c]!) < 1e-12) return undefined;
    [m[c], m[p]] = [m[p]!, m[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, r) => row[n]! / row[r]!);
}

/**
 * The maximum of min_j c_j + g_j·π over the box |π_i| <= box, by enumerating the vertices: every choice of m + 1 of
 * the planes t = c_j + g_j·π and the faces π_i = ±box, solved for (t, π), kept where feasible.
 */
function vertexMax(cuts: readonly Cut[], m: number, box: number): number {
  const planes: Array<{ row: number[]; rhs: number }> = [
    ...cuts.map((k) => ({ row: [1, ...k.g.map((x) => -x)], rhs: k.c })),
    ...Array.from({ length: 2 * m }, (_, f) => ({
      row: [0, ...Array.from({ length: m }, (_, i) => (i === f >> 1 ? 1 : 0))],
      rhs: f % 2 ? -box : box,
    })),
  ];
  let best = -Infinity;
  const pick = (from: number, chosen: number[]): void => {
    if (chosen.length === m + 1) {
      const x = solve(
        chosen.map((j) => planes[j]!.row),
        chosen.map((j) => planes[j]!.rhs),
      );
      if (!x) return;
      const pi = x.slice(1);
      if (pi.some((p) => Math.abs(p) > box + 1e-9)) return;
      best = Math.max(best, Math.min(x[0]!, least(cuts, pi)));
      return;
    }
    for (let j = from; j < planes.length; j++) pick(j + 1, [...chosen, j]);
  };
  pick(0, []);
  return best;
}

const problemArb = fc.integer({ min: 1, max: 3 }).chain((m) =>
  fc.record({
    m: fc.constant(m),
    cuts: fc.array(
      fc.record({
        c: fc.integer({ min: 0, max: 1000 }).map((x) => x / 100),
        g: fc.array(fc.integer({ min: -4, max: 4 }), { minLength: m, maxLength: m }),
      }),
      { minLength: 1, maxLength: 7 },
    ),
  }),
);

describe("Kelley's cutting-plane master", () => {
  it('finds the largest least cut within the box, as cuts are added one at a time', () => {
    const box = 5;
    for (const x of fc.sample(problemArb, { numRuns: 150, seed: 7 })) {
      const master = new CutMaster(x.m, box);
      x.cuts.forEach((cut, j) => {
        master.add(cut.c, cut.g);
        const point = master.solve();
        const cuts = x.cuts.slice(0, j + 1);
        expect(point).toBeDefined();
        const want = vertexMax(cuts, x.m, box);
        expect(point!.upper).toBeCloseTo(want, 7);
        // The point it returns is where that value is reached, inside the box.
        expect(point!.pi.every((p) => Math.abs(p) <= box + 1e-9)).toBe(true);
        expect(least(cuts, point!.pi)).toBeCloseTo(want, 7);
      });
    }
  });

  it('has nothing to say before the first cut', () => {
    expect(new CutMaster(2, 1).solve()).toBeUndefined();
  });
});
