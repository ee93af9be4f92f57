// Progress of a what-if run on stderr, whatever stderr is: a bar with an ETA redrawn in place on a terminal,
// a line every few seconds otherwise (CI logs, Kubernetes Jobs). Nothing is shown for runs that finish within
// QUIET_MS. Jobs report fractions (provisioning, the consolidation plan's steps, the bound); the whole run's
// fraction is (jobs done + the fractions of jobs in flight) / jobs.
import type { Io } from '../io.ts';
import { duration } from './numbers.ts';

/** Runs shorter than this show nothing. */
export const QUIET_MS = 2000;
/** Without a terminal, one line at most this often. */
export const LINE_EVERY_MS = 5000;
const REDRAW_MS = 200;

interface Progress {
  /** Job `index` is `fraction` done (0..1). */
  update(index: number, fraction: number, stage?: string): void;
  done(index: number): void;
  /** Ends the bar (a final line when anything was shown). */
  finish(): void;
}

interface ProgressOptions {
  readonly total: number;
  /** What one unit is called: "job" for batches, "" for a single report. */
  readonly unit: string;
  readonly now?: () => number;
}

export function progress(io: Io, o: ProgressOptions): Progress {
  const now = o.now ?? (() => performance.now());
  const start = now();
  const inFlight = new Map<number, number>();
  let done = 0;
  let stage = '';
  let shown = false;
  let last = -Infinity;
  const fraction = () => Math.min(1, (done + [...inFlight.values()].reduce((a, f) => a + f, 0)) / Math.max(1, o.total));
  const text = () => {
    const f = fraction();
    const elapsed = now() - start;
    const eta = f > 0.02 && f < 1 ? `, about ${duration((elapsed * (1 - f)) / f)} left` : '';
    const jobs = o.unit ? `${done}/${o.total} ${o.unit}${o.total === 1 ? '' : 's'}, ` : '';
    return { f, line: `${jobs}${(f * 100).toFixed(0)}%${eta}${stage ? ` (${stage})` : ''}` };
  };
  const draw = (force = false) => {
    const t = now();
    if (t - start < QUIET_MS && !force) return;
    if (!force && t - last < (io.errIsTTY ? REDRAW_MS : LINE_EVERY_MS)) return;
    last = t;
    shown = true;
    const { f, line } = text();
    if (io.errIsTTY) {
      const width = 30,
        full = Math.round(f * width);
      io.err(`\r\x1b[K[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${line}`);
    } else {
      io.err(`karpenter-ts whatif: ${line}\n`);
    }
  };
  const timer = setInterval(() => draw(), io.errIsTTY ? REDRAW_MS : 1000);
  timer.unref();
  return {
    update(index, f, s) {
      inFlight.set(index, Math.max(0, Math.min(0.99, f)));
      if (s) stage = s;
      draw();
    },
    done(index) {
      inFlight.delete(index);
      done++;
      draw();
    },
    finish() {
      clearInterval(timer);
      if (!shown) return;
      stage = '';
      const elapsed = duration(now() - start);
      if (io.errIsTTY) io.err(`\r\x1b[K[${'#'.repeat(30)}] ${text().line}, took ${elapsed}\n`);
      else io.err(`karpenter-ts whatif: done in ${elapsed}\n`);
    },
  };
}
