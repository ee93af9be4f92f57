// Carrying a decision out on a warm model (ClusterEngine.carryOut, ClusterModel.adopt, ModelMirror.assume): the
// model carries the commands out on itself while the caller does on its snapshot, and the two end with the same
// cluster: the next call ships nothing for what the commands changed, and decides what a model sent the caller's
// snapshot in full decides.
import { describe, expect, it } from 'vitest';
import { fragmentedCluster } from '../../bench/suites/consolidation-scenarios.ts';
import { applyCommands } from '../disruption/apply.ts';
import { disrupt } from '../disruption/disrupt.ts';
import { INITIAL_LOOP_STATE, type Command, type Decision } from '../disruption/types.ts';
import type { Snapshot } from '../domain/types.ts';
import { createEngine } from '../engine.ts';
import { pack, unpack } from '../pool/codec.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { ModelMirror, type SnapshotDelta } from './delta.ts';
import { ClusterModel } from './model.ts';

const solver = new WasmSolver();
const OPTS = { repack: 'only', repackDeadlineMs: 30_000, state: INITIAL_LOOP_STATE, consolidationState: 0 } as const;

function commandsOf(d: Decision): Command[] {
  if (d.kind === 'noop') throw new Error('expected a decision that does something');
  return [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])];
}

const namesOf = (cs: readonly Command[]) => cs.map((c, k) => c.replacements.map((_, i) => `carried-${k}-${i}`));

/** A model and its mirror in this thread, the delta through msgpack as to a worker. */
function warmModel() {
  const mirror = new ModelMirror();
  const model = new ClusterModel();
  const ship = (s: Snapshot): SnapshotDelta => {
    const { delta, commit } = mirror.diff(s);
    model.apply(unpack<SnapshotDelta>(pack(delta)));
    commit();
    return delta;
  };
  return { mirror, model, ship };
}

/** Nodes with their pods, as data (what the engine reads of a cluster). */
const data = (s: Snapshot) => JSON.parse(JSON.stringify(s.nodes));

describe('carrying a decision out on a warm model', async () => {
  const { snapshot: start } = await fragmentedCluster(100, 20_261_129, solver);

  it('ends where the caller ends, ships nothing after, and decides as a model sent the cluster afresh', async () => {
    const w = warmModel();
    w.ship(start);
    const r = await disrupt(w.model.snapshot(), { ...OPTS, solver, caches: w.model.caches });
    w.model.keepDecision(r.decision);
    const commands = commandsOf(r.decision);
    const names = namesOf(commands);
    w.ship(start);
    w.model.adopt(applyCommands(w.model.snapshot(), w.model.decidedCommands(commands.map((_, i) => i)), names));
    const after = applyCommands(start, commands, names);
    w.mirror.assume(after);
    expect(data(w.model.snapshot())).toEqual(data(after));
    const next = w.ship(after);
    expect(Object.keys(next).sort()).toEqual(['base', 'now', 'version']);

    const fresh = warmModel();
    fresh.ship(after);
    expect(w.model.held()).toEqual(fresh.model.held());
    const o = { ...OPTS, consolidationState: 1, state: r.state };
    const carried = await disrupt(w.model.snapshot(), { ...o, solver, caches: w.model.caches });
    const shipped = await disrupt(fresh.model.snapshot(), { ...o, solver, caches: fresh.model.caches });
    expect(JSON.stringify(carried.decision)).toBe(JSON.stringify(shipped.decision));
  });

  it('through an Engine: the snapshot returned is applyCommands, and the next decision ships nothing', async () => {
    const engine = createEngine({ threads: 1 });
    try {
      const cluster = engine.cluster('carried');
      const r = await cluster.disrupt(start, OPTS);
      const commands = commandsOf(r.decision);
      const names = namesOf(commands);
      const after = await cluster.carryOut(start, commands, names);
      expect(data(after)).toEqual(data(applyCommands(start, commands, names)));
      const o = { ...OPTS, consolidationState: 1, state: r.state };
      const next = await cluster.disrupt(after, o);
      expect(cluster.lastShipped()).toMatchObject({ full: false, pods: 0, nodes: 0 });
      const oneOff = await engine.disrupt(after, o);
      expect(JSON.stringify(next.decision)).toBe(JSON.stringify(oneOff.decision));
      // Commands the model did not decide (copies) travel in full and give the same cluster.
      const again = engine.cluster('copied');
      await again.disrupt(start, OPTS);
      const copies = unpack<Command[]>(pack(commands));
      const viaCopies = await again.carryOut(start, copies, names);
      expect(data(viaCopies)).toEqual(data(after));
      await again.disrupt(viaCopies, o);
      expect(again.lastShipped()).toMatchObject({ pods: 0, nodes: 0 });
    } finally {
      await engine.close();
    }
  });

  it('names the command when its names do not match its replacements', async () => {
    const r = await disrupt(start, { ...OPTS, solver });
    const commands = commandsOf(r.decision).filter((c) => c.replacements.length > 0);
    expect(commands.length).toBeGreaterThan(0);
    expect(() => applyCommands(start, commands, [['only-one', 'too-many', ...namesOf(commands)[0]!]])).toThrow(
      /carrying out command 0 \((replace|delete) of .+\): \d+ names for \d+ replacements/,
    );
  });
});
