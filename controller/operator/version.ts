// The version and commit the controller reports (`karpenter-ts --version`, karpenter_build_info, the
// `commit` field of every log line). The version is package.json's; the commit comes from the build
// (KARPENTER_TS_COMMIT, which the image sets), else it is empty.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** package.json's version, from the source tree or a compiled copy one level deeper (dist/). */
function packageVersion(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    try {
      const pkg = JSON.parse(readFileSync(join(here, up, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'karpenter-ts' && pkg.version) return pkg.version;
    } catch {
      // not there; try the next
    }
  }
  return 'unknown';
}

export const VERSION: string = packageVersion();
export const COMMIT: string = process.env['KARPENTER_TS_COMMIT'] ?? '';
