// Seeded randomness for scenarios: the engine's mulberry32, plus picking from a list.
import { mulberry32, type Rng } from '../../engine/index.ts';

export { mulberry32, type Rng };

export function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[Math.floor(rng() * xs.length)]!;
}
