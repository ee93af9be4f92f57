// Charges a process's late ticks (scripts/late-ticks.mjs) to the CPU profile of its main thread: which functions ran
// while the loop was held. `node scripts/late-ticks-report.mjs TICKS_FILE PROFILE_DIR [MIN_MS]`: TICKS_FILE is one
// `<LATE_TICKS_FILE>.<pid>`; the profile is that pid's main-thread .cpuprofile in PROFILE_DIR (Node names it
// CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile, thread 0 the main one). Only ticks at least MIN_MS late (50)
// are charged. The window charged to a tick is the time it was late: from when it was due to when it ran.
// `--from=S` and `--to=S` (seconds since the process loaded the recorder) charge only the ticks between, e.g. one
// benchmark phase: the report first prints when the late ticks came, per 10 s.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const flags = Object.fromEntries(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => a.slice(2).split('=')),
);
const [ticksFile, dir, minArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!ticksFile || !dir) {
  console.error('usage: node scripts/late-ticks-report.mjs TICKS_FILE PROFILE_DIR [MIN_MS]');
  process.exit(2);
}
const minMs = Number(minArg ?? 50);
const ticks = JSON.parse(readFileSync(ticksFile, 'utf8'));
const name = readdirSync(dir).find(
  (f) => f.endsWith('.cpuprofile') && f.split('.')[3] === String(ticks.pid) && f.split('.')[4] === '0',
);
if (!name) {
  console.error(`no main-thread profile of pid ${ticks.pid} in ${dir}`);
  process.exit(1);
}
const profile = JSON.parse(readFileSync(join(dir, name), 'utf8'));

/** Each sample's time (µs) and node id. */
function samples(p) {
  const out = [];
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    out.push([t, p.samples[i]]);
  }
  return out;
}

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const f = n.callFrame;
  const where = f.url
    ? `${f.url.replace(/^file:\/\/.*?\/(dist|controller|engine|sim|node_modules)\//, '$1/')}:${f.lineNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};
const ours = (n) =>
  /\/(dist|controller|engine|sim)\//.test(n.callFrame.url) && !n.callFrame.url.includes('node_modules');

const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
const since = (at) => (at - ticks.startedAt) / 1e6;
const from = Number(flags.from ?? 0);
const to = Number(flags.to ?? Number.POSITIVE_INFINITY);
const timeline = new Map();
for (const [at, d] of ticks.late) if (d >= minMs) add(timeline, Math.floor(since(at) / 10) * 10, 1);
const late = ticks.late.filter(([at, d]) => d >= minMs && since(at) >= from && since(at) <= to);
const all = samples(profile);
const self = new Map();
const inclusive = new Map();
let charged = 0;
let j = 0;
for (const [at, delay] of late) {
  const due = at - delay * 1000;
  while (j < all.length && all[j][0] < due) j++;
  for (let k = j; k < all.length && all[k][0] <= at; k++) {
    const dt = (all[k + 1]?.[0] ?? all[k][0]) - all[k][0];
    const leaf = nodes.get(all[k][1]);
    charged += dt;
    add(self, label(leaf), dt);
    const seen = new Set();
    for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
      const n = nodes.get(id);
      if (ours(n) && !seen.has(label(n))) {
        seen.add(label(n));
        add(inclusive, label(n), dt);
      }
    }
  }
}

const ms = (us) => (us / 1000).toFixed(1);
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k);
const buckets = [20, 50, 100, 200].map((b) => `${ticks.late.filter(([, d]) => d >= b).length} >= ${b} ms`);
console.log(
  `ticks >= ${minMs} ms late, per 10 s since start: ${[...timeline].map(([t, n]) => `${t}s:${n}`).join(' ')}`,
);
console.log(
  `pid ${ticks.pid}: ${ticks.ticks} ticks, late ${buckets.join(', ')}; charged ${late.length} ticks >= ${minMs} ms between ${from} and ${to} s, ${ms(charged)} ms of samples`,
);
console.log('\nself time in late windows (ms, share):');
for (const [k, v] of top(self, 15))
  console.log(`  ${ms(v).padStart(8)}  ${((100 * v) / charged).toFixed(1).padStart(5)}%  ${k}`);
console.log('\nproject functions on the stack in late windows (inclusive ms, share):');
for (const [k, v] of top(inclusive, 25))
  console.log(`  ${ms(v).padStart(8)}  ${((100 * v) / charged).toFixed(1).padStart(5)}%  ${k}`);
