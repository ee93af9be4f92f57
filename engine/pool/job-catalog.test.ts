// A pool worker keeps its what-if jobs' NodePools, daemonsets and the templates made from them across jobs
// (job-catalog.ts). A job whose catalog, NodePool or daemonsets changed must get the report a fresh engine gives it,
// never one made from the kept objects; a job over the same catalog finds its templates made already.
import { afterAll, describe, expect, it } from 'vitest';
import { busyCluster, daemonSet, nodePool } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import type { DaemonSet, InstanceType, NodePool } from '../domain/types.ts';
import { createEngine } from '../engine.ts';
import type { Built } from '../whatif/build.ts';
import { inThreadEngine } from '../whatif/engines.ts';
import { runWhatIfJob, type WhatIfJob } from '../whatif/job.ts';
import { pack, unpack } from './codec.ts';
import type { WorkerMemory } from './engine.worker.ts';
import { JobCatalog } from './job-catalog.ts';

const its = defaultFakeInstanceTypes();

/** The same types with other prices: the odd ones a third of theirs, the even ones three times. */
function repriced(types: readonly InstanceType[]): InstanceType[] {
  return types.map((t, i) => ({
    ...t,
    offerings: t.offerings.map((o) => ({ ...o, price: i % 2 ? o.price / 3 : o.price * 3 })),
  }));
}

function job(
  o: { types?: readonly InstanceType[]; pool?: NodePool; daemonSets?: readonly DaemonSet[] } = {},
): WhatIfJob {
  const types = o.types ?? its;
  const base = busyCluster({ instanceTypes: types, nodes: 6, pending: 3, podsOnNode: (i) => 1 + (i % 3) });
  const pool = o.pool ?? base.nodePools[0]!;
  const built: Built = {
    snapshot: {
      ...base,
      nodePools: [pool],
      instanceTypes: new Map([[pool.name, types]]),
      daemonSets: o.daemonSets ?? [],
    },
    region: 'us-east-1',
    catalog: new Map(types.map((t) => [t.name, t])),
    warnings: [],
  };
  return { built, sources: ['job-catalog'], mode: 'consolidate', exact: true };
}

/** A report as a fresh in-thread engine makes it (nothing kept from another job). */
async function fresh(j: WhatIfJob): Promise<string> {
  return JSON.stringify(await runWhatIfJob(j, inThreadEngine({ improveWork: 1e6 })));
}

describe('JobCatalog', () => {
  it('hands a job the NodePools and daemonset list an earlier job brought when their content is the same', () => {
    const catalog = new JobCatalog();
    const a = job({ daemonSets: [daemonSet('agent', { cpu: '100m' })] }).built!;
    // As a worker gets them: unpacked per job, equal content in new objects.
    const b = unpack<Built>(pack(a));
    expect(b.snapshot.nodePools[0]).not.toBe(a.snapshot.nodePools[0]);
    const first = catalog.intern(a);
    const second = catalog.intern(b);
    expect(second.snapshot.nodePools[0]).toBe(first.snapshot.nodePools[0]);
    expect(second.snapshot.daemonSets).toBe(first.snapshot.daemonSets);

    const edited = nodePool({ consolidateAfter: 0, taints: [{ key: 'team', value: 'a', effect: 'NoSchedule' }] });
    const c = job({ pool: edited, daemonSets: [daemonSet('agent', { cpu: '200m' })] }).built!;
    const third = catalog.intern(c);
    expect(third.snapshot.nodePools[0]).toBe(c.snapshot.nodePools[0]);
    expect(third.snapshot.daemonSets).toBe(c.snapshot.daemonSets);
    expect(catalog.keptPools().get('default')).toBe(c.snapshot.nodePools[0]);
  });
});

describe('what-if jobs on a worker that keeps their catalog', () => {
  const engine = createEngine({ threads: 1 });
  afterAll(() => engine.close());
  const stats = async () => ((await engine.pool.memory()) as WorkerMemory[])[0]!.jobCatalog;

  it('reuses the templates of an unchanged catalog and reports a changed one as a fresh engine does', async () => {
    const first = job();
    expect(JSON.stringify(await engine.whatIf(first))).toBe(await fresh(first));
    const before = (await stats())['templates']!;
    // Same content, new objects (a job as the caller builds it again): the worker's templates are found.
    const again = job();
    expect(JSON.stringify(await engine.whatIf(again))).toBe(await fresh(again));
    const after = (await stats())['templates']!;
    expect(after.misses).toBe(before.misses);
    expect(after.hits).toBeGreaterThan(before.hits);

    // Each change between jobs, and the report of the job before it would be wrong for it.
    const changed: WhatIfJob[] = [
      job({ types: repriced(its) }),
      job({ types: its.slice(2) }),
      job({
        pool: nodePool({
          consolidateAfter: 0,
          requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['test-zone-2'] }],
        }),
      }),
      job({ daemonSets: [daemonSet('agent', { cpu: '900m' })] }),
      job(),
    ];
    let last = await fresh(first);
    for (const j of changed.slice(0, -1)) {
      const want = await fresh(j);
      expect(want).not.toBe(last);
      expect(JSON.stringify(await engine.whatIf(j))).toBe(want);
      last = want;
    }
    expect(JSON.stringify(await engine.whatIf(changed.at(-1)!))).toBe(await fresh(changed.at(-1)!));
  });
});
