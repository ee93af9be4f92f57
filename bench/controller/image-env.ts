// The environment the image gives the controller (deploy/Dockerfile, the runtime stage's ENV lines) that changes how
// the process holds memory: glibc's malloc settings (MALLOC_*). The benchmark's controller process runs with them so
// its memory is the image's; BENCH_CONTROLLER_IMAGE_ENV=0 leaves them out (to compare).
import { readFileSync } from 'node:fs';

const DOCKERFILE = new URL('../../deploy/Dockerfile', import.meta.url);

/** The MALLOC_* variables the runtime stage (after the last FROM) sets with `ENV NAME=value` lines. */
export function imageMallocEnv(dockerfile: string = readFileSync(DOCKERFILE, 'utf8')): Record<string, string> {
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const line of runtime.split('\n')) {
    const m = /^ENV\s+(MALLOC_\w+)=(\S+)\s*$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

/** What the benchmark adds to the controller process's environment. */
export function benchImageEnv(
  setting: string | undefined = process.env['BENCH_CONTROLLER_IMAGE_ENV'],
): Record<string, string> {
  if (setting === undefined || setting === '' || setting === '1') return imageMallocEnv();
  if (setting === '0') return {};
  throw new Error(`BENCH_CONTROLLER_IMAGE_ENV must be 0 or 1, got "${setting}"`);
}
