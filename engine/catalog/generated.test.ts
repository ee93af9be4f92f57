// The committed generated files must be exactly what scripts/gen-catalog.ts produces from the committed AWS
// data (test/fixtures/data/aws, or $KARPENTER_TS_AWS_DATA), so nobody edits them by hand. Without the data
// folder these tests are reported as skipped, with the path in their name.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG_PATH, defaultDataDir, generateCatalog, VECTORS_PATH } from '../../scripts/gen-catalog.ts';
import { regionPrices } from './catalog.ts';

const dataDir = defaultDataDir();
const haveData = existsSync(join(dataDir, 'instance-types.json'));

describe.skipIf(!haveData)(`generated catalog (from ${dataDir})`, () => {
  const generated = haveData ? generateCatalog(dataDir) : { catalog: '', vectors: '' };

  it('the committed zz_generated.catalog.json equals the generator output', () => {
    expect(
      readFileSync(CATALOG_PATH, 'utf8') === generated.catalog,
      'regenerate: node --import tsx scripts/gen-catalog.ts',
    ).toBe(true);
  });

  it('the committed docs vectors equal the generator output', () => {
    expect(
      readFileSync(VECTORS_PATH, 'utf8') === generated.vectors,
      'regenerate: node --import tsx scripts/gen-catalog.ts',
    ).toBe(true);
  });

  it('is deterministic', () => {
    const again = generateCatalog(dataDir);
    expect(again.catalog === generated.catalog && again.vectors === generated.vectors).toBe(true);
  });

  it('spot estimates follow the Spot Advisor savings of the data', () => {
    const spot = JSON.parse(readFileSync(join(dataDir, 'spot-prices.sample.json'), 'utf8')) as {
      spotAdvisor: { regions: Record<string, { Linux: Record<string, { s: number }> }> };
    };
    for (const [region, name] of [
      ['us-east-1', 'm5.large'],
      ['us-west-2', 'c6g.large'],
      ['ap-northeast-2', 'c5.large'],
    ] as const) {
      const s = spot.spotAdvisor.regions[region]!.Linux[name]!.s;
      const p = regionPrices(region);
      expect(p.spot.get(name)).toBe(p.onDemand.get(name)!.price * (1 - s / 100));
    }
  });

  it('is compact: well under the 2.4 MB of the raw data', () => {
    expect(generated.catalog.length).toBeLessThan(400_000);
  });
});
