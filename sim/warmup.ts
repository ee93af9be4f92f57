// Work the simulator does before its clock starts, so it does not show up as simulated time: building
// the instance catalog for each EC2NodeClass a scenario applies, and one small solve per NodePool on the
// engine (which starts its workers and warms the solver in them). Objects that do not parse are left for
// the apply step to report.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  DEFAULT_ENGINE_OPTIONS,
  ec2InstanceTypes,
  parseDocuments,
  parseEC2NodeClass,
  parseNodePool,
  parsePod,
  type Engine,
  type InstanceType,
  type NodePool,
} from '../engine/index.ts';
import { capacitySettingsOf } from './cloud/nodeclass.ts';
import type { Scenario } from './scenario/format.ts';

export async function warmUp(scenario: Scenario, baseDir: string, region: string, engine: Engine): Promise<void> {
  const types = new Map<string, InstanceType[]>();
  const pools: NodePool[] = [];
  for (const s of scenario.steps) {
    if (s.kind !== 'apply') continue;
    const text = s.yaml ?? (await readFile(resolve(baseDir, s.file!), 'utf8').catch(() => ''));
    for (const d of parseDocuments(text)) {
      const kind = (d.value as { kind?: string } | undefined)?.kind;
      if (kind === 'EC2NodeClass') {
        const nc = parseEC2NodeClass(d.value);
        if (nc.ok) types.set(nc.value.name, ec2InstanceTypes({ region, settings: capacitySettingsOf(nc.value) }));
      } else if (kind === 'NodePool') {
        const p = parseNodePool(d.value, { assumeReady: true });
        if (p.ok) pools.push(p.value);
      }
    }
  }
  const pod = parsePod({
    metadata: { name: 'warm-up', uid: 'warm-up' },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }] },
  });
  if (!pod.ok) return;
  for (const pool of pools) {
    const its = types.get(pool.template.nodeClassRef.name) ?? ec2InstanceTypes({ region });
    await engine.provision(
      {
        now: 0,
        nodePools: [pool],
        nodeClasses: [],
        instanceTypes: new Map([[pool.name, its]]),
        nodes: [],
        pendingPods: [],
        daemonSets: [],
        pdbs: [],
        options: DEFAULT_ENGINE_OPTIONS,
      },
      [pod.value],
    );
  }
}
