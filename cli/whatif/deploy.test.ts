// deploy/whatif-job.yaml: an Indexed Job whose pods each run one shard, and a merge Job; the commands in it
// parse with this CLI's options.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseWhatIfArgs } from './args.ts';

const docs = parseAllDocuments(
  readFileSync(fileURLToPath(new URL('../../deploy/whatif-job.yaml', import.meta.url)), 'utf8'),
).map((d) => d.toJS());
type Job = {
  kind: string;
  metadata: { name: string };
  spec: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    template: { spec: { containers: { args: string[] }[] } };
  };
};
const [shards, merge] = docs as [Job, Job];

/** The karpenter-ts arguments of a container's shell line, with the shard index filled in. */
function whatifArgs(line: string, index: number): string[] {
  const cmd = line
    .split(';')[0]!
    .replace(/\$\{JOB_COMPLETION_INDEX\}/g, String(index))
    .replace(/"/g, '')
    .replace(/>\s*\S+/, '');
  return cmd.trim().split(/\s+/).slice(3);
}

describe('deploy/whatif-job.yaml', () => {
  it('is an Indexed Job with one shard per completion index', () => {
    expect(shards).toMatchObject({ kind: 'Job', spec: { completionMode: 'Indexed' } });
    const line = shards.spec.template.spec.containers[0]!.args[0]!;
    const n = shards.spec.completions!;
    expect(shards.spec.parallelism).toBe(n);
    for (let i = 0; i < n; i++) {
      const a = parseWhatIfArgs(whatifArgs(line, i).map((x) => (x === '/snapshots/*' ? 'snap.yaml' : x)));
      expect(a.shard).toEqual({ index: i, count: n });
      expect(a.json).toBe(true);
    }
  });

  it('has a merge step over the shard files', () => {
    expect(merge.kind).toBe('Job');
    const a = parseWhatIfArgs(whatifArgs(merge.spec.template.spec.containers[0]!.args[0]!, 0));
    expect(a.merge).toBe(true);
    expect(a.inputs).toEqual(['/results/shard-*.json']);
  });
});
