// `node --import tsx test/perf/encode-ab.ts /path/to/other/tree [pods] [rounds]`: encodeProvision of the
// karpenter suite's diverse mix, this tree against another checkout, interleaved in one process. Prints
// median wall ms per encode for each (process CPU time is not per phase here: background GC threads count).
import type { ProvisionInput } from '../../engine/index.ts';
import { DEFAULT_ENGINE_OPTIONS, withExtraWellKnown } from '../../engine/index.ts';
import { FAKE_WELL_KNOWN_LABELS } from '../fixtures/instancetypes.ts';
import { diversePods, karpenterInstanceTypes, karpenterNodePool } from '../../bench/scenarios/karpenter.ts';

type Encode = (input: ProvisionInput, opts: { improve: boolean }) => { block: Uint8Array };
const other = process.argv[2]!;
const n = Number(process.argv[3] ?? 20000);
const rounds = Number(process.argv[4] ?? 15);
const here: Encode = (await import('../../engine/abi/encode.ts')).encodeProvision;
const there: Encode = (await import(`${other}/engine/abi/encode.ts`)).encodeProvision;
const pool = karpenterNodePool();
const input: ProvisionInput = {
  nodePools: [pool],
  instanceTypes: new Map([[pool.name, karpenterInstanceTypes()]]),
  nodes: [],
  daemonSets: [],
  options: DEFAULT_ENGINE_OPTIONS,
  wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS),
  pods: diversePods(n),
};
const t = { other: [] as number[], here: [] as number[] };
let same = true;
for (let r = 0; r <= rounds; r++) {
  const blocks: Uint8Array[] = [];
  for (const [k, enc] of [
    ['other', there],
    ['here', here],
  ] as const) {
    const t0 = performance.now();
    blocks.push(enc(input, { improve: false }).block);
    if (r > 0) t[k].push(performance.now() - t0);
  }
  if (r === 0) same = Buffer.from(blocks[0]!).equals(Buffer.from(blocks[1]!));
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!.toFixed(1);
process.stdout.write(
  `encode diverse-${n}, ${rounds} rounds: other tree ${med(t.other)} ms, this tree ${med(t.here)} ms (median wall per encode); blocks ${same ? 'identical' : 'differ'}\n`,
);
