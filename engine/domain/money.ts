// Prices are carried as US dollars per hour (floats, as the catalogs give them) and compared as integer
// micro-dollars, so the TypeScript reference solver and the WebAssembly solver (which stores prices as
// integers in linear memory) order offerings identically.

export function toMicros(pricePerHour: number): number {
  return Number.isFinite(pricePerHour) ? Math.round(pricePerHour * 1e6) : Number.MAX_SAFE_INTEGER;
}

export const HOURS_PER_MONTH = 730;

/** A report's figure to the micro-unit ($/h, ratios), with -0 as 0: what what-if prints. */
export function roundMicro(v: number): number {
  return Math.round(v * 1e6) / 1e6 + 0;
}
