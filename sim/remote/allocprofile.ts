// With BENCH_CONTROLLER_ALLOC_PROFILE=<dir>: a sampling heap profile of the controller's main thread over each
// measured phase, garbage included (the samples of objects collected since are kept), written to <dir> as a
// .heapprofile (Chrome DevTools' Memory tab reads it). It says where the phase allocates, which sets how far the
// heap grows past its live data and how often V8 collects (docs/controller-benchmark.md, "Where the steady state
// allocates"). The profiler adds work of its own: figures of a profiled run are not figures to compare.
import { Session } from 'node:inspector';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One sample per this many bytes allocated, on average. */
const SAMPLING_INTERVAL = 16 * 1024;

export class AllocationProfile {
  private session: Session | undefined;
  private phases = 0;

  constructor(private readonly dir: string | undefined = process.env['BENCH_CONTROLLER_ALLOC_PROFILE']) {}

  async start(): Promise<void> {
    if (!this.dir) return;
    if (!this.session) {
      this.session = new Session();
      this.session.connect();
      await this.post('HeapProfiler.enable');
    } else await this.post('HeapProfiler.stopSampling').catch(() => undefined);
    await this.post('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }

  /** Stops the phase's sampling and writes its profile; returns the file written, if any. */
  async end(): Promise<string | undefined> {
    if (!this.dir || !this.session) return undefined;
    const { profile } = (await this.post('HeapProfiler.stopSampling')) as { profile: unknown };
    const file = join(this.dir, `controller-${process.pid}-${++this.phases}.heapprofile`);
    await writeFile(file, JSON.stringify(profile));
    return file;
  }

  private post(method: string, params: object = {}): Promise<unknown> {
    const s = this.session!;
    return new Promise((resolve, reject) => s.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  }
}
