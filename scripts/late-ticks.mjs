// Notes every late tick of a process's main event loop, for scripts/late-ticks-report.mjs to charge to a CPU profile.
// Load it into the process with `--import=<this file>` and name the output with LATE_TICKS_FILE, e.g. for the
// controller benchmark:
//   LATE_TICKS_FILE=/tmp/ticks.json BENCH_CONTROLLER_NODE_ARGS="--import=$PWD/scripts/late-ticks.mjs --cpu-prof \
//     --cpu-prof-dir=/tmp/prof" npm run bench -- controller --sizes=1000
// A 10 ms timer notes each tick that came more than LATE_TICKS_MIN_MS (20) late: when it fired (process.hrtime's
// monotonic clock, microseconds, the clock a .cpuprofile's timestamps use) and how late. The file is written when the
// process exits, with the count of all ticks, so the share of late ones is known.
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.LATE_TICKS_FILE;
const threshold = Number(process.env.LATE_TICKS_MIN_MS ?? 20);
const RESOLUTION_MS = 10;

if (file && isMainThread) {
  const startedAt = Number(process.hrtime.bigint() / 1000n);
  const late = [];
  let ticks = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const delay = now - last - RESOLUTION_MS;
    last = now;
    ticks += 1;
    if (delay > threshold) late.push([Number(process.hrtime.bigint() / 1000n), Math.round(delay * 10) / 10]);
  }, RESOLUTION_MS);
  timer.unref();
  process.on('exit', () => {
    writeFileSync(
      `${file}.${process.pid}`,
      JSON.stringify({ pid: process.pid, startedAt, resolutionMs: RESOLUTION_MS, ticks, late }),
    );
  });
}
