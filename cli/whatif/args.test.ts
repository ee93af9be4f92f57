// The what-if command line as node:util's parseArgs reads it: both value forms, repeated options in order,
// and every mistake a usage error that names the option.
import { describe, expect, it } from 'vitest';
import { parseWhatIfArgs } from './args.ts';
import { UsageError } from './errors.ts';

const usage = (argv: string[]): string => {
  try {
    parseWhatIfArgs(argv);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
};

describe('whatif arguments', () => {
  it('takes --flag value and --flag=value alike, flags, -h and snapshots in any order', () => {
    const a = parseWhatIfArgs(['snap.yaml', '--mode', 'provision', '--region=us-east-1', '--json', 'b.yaml', '-h']);
    expect(a).toMatchObject({
      inputs: ['snap.yaml', 'b.yaml'],
      mode: 'provision',
      region: 'us-east-1',
      json: true,
      help: true,
      exact: false,
    });
    expect(parseWhatIfArgs(['-']).inputs).toEqual(['-']);
  });

  it('keeps repeated options in the order given', () => {
    const a = parseWhatIfArgs([
      's.yaml',
      '--grid',
      'exact=true,false',
      '--grid=mode=provision',
      '--map-nodepool',
      'a=b',
      '--map-nodepool=c=d',
    ]);
    expect(a.grid).toEqual([
      ['exact', ['true', 'false']],
      ['mode', ['provision']],
    ]);
    expect(a.mapNodePools).toEqual({ a: 'b', c: 'd' });
  });

  it('names the option in every mistake', () => {
    expect(usage(['s.yaml', '--bogus'])).toBe('unknown option "--bogus"');
    expect(usage(['s.yaml', '--json=yes'])).toBe('unknown option "--json=yes"');
    expect(usage(['s.yaml', '-x'])).toBe('unknown option "-x"');
    expect(usage(['s.yaml', '--mode'])).toBe('--mode needs a value');
    expect(usage(['s.yaml', '--mode', '--json'])).toBe('--mode needs a value');
    expect(usage(['s.yaml', '--mode=shrink'])).toBe('--mode: "shrink" is not provision or consolidate');
    expect(usage(['s.yaml', '--jobs', '0'])).toBe('--jobs: "0" is not a number from 1 to 64');
    expect(usage(['s.yaml', '--shard=2/2'])).toBe('--shard: "2/2" is not I/N with 0 <= I < N');
    expect(usage(['s.yaml', '--grid', 'exact=1,2', '--grid', 'colour=red'])).toBe(
      '--grid exact: "1" is not true or false',
    );
    expect(usage(['s.yaml', '--map-nodepool', 'a=b', '--map-nodepool', 'a=c'])).toBe(
      '--map-nodepool: a is mapped twice',
    );
    expect(usage([])).toBe('no snapshot given');
    expect(usage(['--merge'])).toBe('--merge needs the shard JSON files');
  });

  it('reads what follows -- as snapshots', () => {
    expect(parseWhatIfArgs(['--', '--odd-name.yaml']).inputs).toEqual(['--odd-name.yaml']);
  });
});
