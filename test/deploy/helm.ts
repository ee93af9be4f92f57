// The real helm binary for chart tests. Found as $HELM_BIN, else `helm` on PATH, else taken out of the
// devDependency @aws-cdk/asset-kubectl-v20 (an npm package whose lib/layer.zip carries a linux-x64 helm 3 build)
// into node_modules/.cache. Undefined when none of these works here (tests then skip).
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';

const ROOT = new URL('../..', import.meta.url).pathname;
const LAYER = join(ROOT, 'node_modules', '@aws-cdk', 'asset-kubectl-v20', 'lib', 'layer.zip');
const CACHE = join(ROOT, 'node_modules', '.cache', 'karpenter-ts-helm');

const works = (bin: string): boolean => {
  try {
    return /^v3\./.test(
      execFileSync(bin, ['version', '--short'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 30_000,
      }),
    );
  } catch {
    return false;
  }
};

/** One stored or deflated entry of a zip archive, found through its central directory. */
function zipEntry(zip: Buffer, name: string): Buffer | undefined {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) return undefined;
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (zip.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      return method === 0 ? data : method === 8 ? inflateRawSync(data) : undefined;
    }
    at += 46 + nameLength + extra;
  }
  return undefined;
}

function fromLayer(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64' || !existsSync(LAYER)) return undefined;
  const bin = join(CACHE, 'helm');
  if (!existsSync(bin)) {
    const helm = zipEntry(readFileSync(LAYER), 'helm/helm');
    if (!helm) return undefined;
    mkdirSync(CACHE, { recursive: true });
    // Written aside and renamed, so test files racing here never run a half-written binary.
    const dir = mkdtempSync(join(CACHE, 'tmp-'));
    writeFileSync(join(dir, 'helm'), helm);
    chmodSync(join(dir, 'helm'), 0o755);
    renameSync(join(dir, 'helm'), bin);
    rmSync(dir, { recursive: true, force: true });
  }
  return bin;
}

let found: string | undefined | null = null;

export function helmBinary(): string | undefined {
  if (found !== null) return found;
  const candidates = [process.env.HELM_BIN, 'helm'].filter((c): c is string => !!c);
  found = candidates.find(works);
  if (!found) {
    const bin = fromLayer();
    found = bin && works(bin) ? bin : undefined;
  }
  return found;
}

export interface TemplateOptions {
  readonly release?: string;
  readonly namespace?: string;
  /** API versions the cluster serves, beside helm's defaults (e.g. monitoring.coreos.com/v1). */
  readonly apiVersions?: readonly string[];
  /** The cluster's Kubernetes version (default 1.32.0). */
  readonly kubeVersion?: string;
}

/** `helm template` of a chart with the given values (written as a values file); the YAML it prints. */
export function helmTemplate(chartDir: string, values: unknown, options: TemplateOptions = {}): string {
  const helm = helmBinary();
  if (!helm) throw new Error('helm is not available here');
  const dir = mkdtempSync(join(CACHE, 'values-'));
  try {
    const file = join(dir, 'values.json');
    writeFileSync(file, JSON.stringify(values));
    // helm's own default cluster version is older than the chart's kubeVersion floor.
    const args = [
      'template',
      options.release ?? 'karpenter-ts',
      chartDir,
      '--namespace',
      options.namespace ?? 'karpenter',
      '--kube-version',
      options.kubeVersion ?? '1.32.0',
      '-f',
      file,
    ];
    for (const v of options.apiVersions ?? []) args.push('--api-versions', v);
    return execFileSync(helm, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
