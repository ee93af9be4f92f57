// What the repack scripts (repack-cold.ts, repack-model-ab.ts, repack-ab.ts) share: a checkout's engine loaded by
// path (so one process can run two trees), the consolidation suite's seeded fragmented cluster, the worker's model
// path in this thread, and the suite's repack loop (repack only, until it finds nothing) timed with its plan.
//
// The model path is the Engine's without the thread: a ModelMirror diffs each loop's snapshot, the delta goes
// through msgpack into a ClusterModel, and disrupt() runs over the model's snapshot with the model's caches. A
// decision is carried out as the suite carries it out: on a tree whose ClusterEngine has carryOut, the model
// carries the commands out on itself and the mirror takes the caller's result as shipped (nothing is diffed or
// shipped for them); on an older tree (or with carry off), the caller applies them and the next loop ships the
// difference.

/** The suite's first sizes: a size's place among them seeds its cluster (bench/suites/consolidation.ts, seedOf). */
const LEGACY = [100, 1000, 5000, 10_000];

type Snap = { readonly nodes: ReadonlyArray<{ readonly hasNodeClaim: boolean }>; readonly now: number };
type Cmd = { readonly replacements: readonly unknown[] };
type Decision = Cmd & { readonly kind: string; followUps?: readonly Cmd[]; concurrent?: readonly Cmd[] };
type Result = { readonly state: unknown; readonly decision: Decision };
type Names = readonly (readonly string[])[];

/** One checkout's modules and the suite's cluster of `size` built with them. */
interface Tree {
  readonly root: string;
  // Modules of another checkout, loaded by path (untyped here).
  readonly idx: any;
  readonly local: any;
  readonly codec: any;
  readonly scen: any;
  readonly snapshot: Snap;
  readonly name: string;
  /** Whether this tree's models carry commands out themselves (ClusterModel.adopt, ModelMirror.assume). */
  readonly carries: boolean;
}

export async function loadTree(root: string, size: number): Promise<Tree> {
  const idx = await import(`${root}/engine/index.ts`);
  const local = await import(`${root}/engine/local.ts`);
  const codec = await import(`${root}/engine/pool/codec.ts`);
  const scen = await import(`${root}/bench/suites/consolidation-scenarios.ts`);
  const at = LEGACY.indexOf(size);
  const sc = await scen.fragmentedCluster(size, 20_261_129 + (at >= 0 ? at : size), new local.WasmSolver());
  const carries = typeof local.ModelMirror.prototype.assume === 'function' && typeof idx.applyCommands === 'function';
  return { root, idx, local, codec, scen, snapshot: sc.snapshot, name: sc.name, carries };
}

/** How a loop decides and how it carries a decision out (returns the snapshot after). */
export interface Decider {
  decide(s: Snap, opts: object): Promise<Result>;
  carryOut(s: Snap, commands: readonly Cmd[], names: Names): Promise<Snap>;
  /** Brings the model to the start snapshot, untimed (as the suite's lowerBound call before a run). */
  sync(s: Snap): Promise<void>;
  close?(): Promise<void>;
}

/** The worker's model path in this thread (see the header), with its own warm model. */
export function modelDecider(
  t: Tree,
  solver: unknown = new t.local.WasmSolver(),
  carry = t.carries,
): Decider & { model: unknown } {
  const mirror = new t.local.ModelMirror();
  const model = new t.local.ClusterModel();
  let decided: Cmd[] = [];
  const ship = (s: Snap) => {
    const { delta, commit } = mirror.diff(s);
    model.apply(t.codec.unpack(t.codec.pack(delta)));
    commit();
    return model.snapshot();
  };
  return {
    model,
    sync: async (s) => void ship(s),
    async decide(s, opts) {
      const r = await t.local.disrupt(ship(s), { ...opts, solver, caches: model.caches });
      if (carry) model.keepDecision(r.decision);
      decided = [r.decision, ...(r.decision.followUps ?? []), ...(r.decision.concurrent ?? [])];
      return r;
    },
    async carryOut(s, commands, names) {
      if (!carry) return commands.reduce((x, c, k) => t.idx.applyCommand(x, c, (i: number) => names[k]![i]!), s);
      ship(s);
      // The model's kept decision, named by place (as ClusterEngine.carryOut sends it).
      const op = t.codec.unpack(t.codec.pack({ decided: commands.map((c) => decided.indexOf(c)), names }));
      model.adopt(t.idx.applyCommands(model.snapshot(), model.decidedCommands(op.decided), op.names));
      const after = t.idx.applyCommands(s, commands, names);
      mirror.assume(after);
      return after;
    },
  };
}

/** disrupt() in this thread with one warm ModelCaches, the caller applying each decision (no model). */
export function localDecider(t: Tree, solver: unknown = new t.local.WasmSolver()): Decider {
  const caches = new t.local.ModelCaches();
  return {
    sync: async () => {},
    decide: (s, opts) => t.local.disrupt(s, { ...opts, solver, caches }),
    carryOut: async (s, commands, names) =>
      commands.reduce((x, c, k) => t.idx.applyCommand(x, c, (i: number) => names[k]![i]!), s),
  };
}

/**
 * Through the tree's Engine (one worker) and a warm cluster model, as the suite runs it. `carry` false: the caller
 * applies each decision and the next call ships the difference, as before ClusterEngine.carryOut.
 */
export function engineDecider(t: Tree, carry = true): Decider {
  const engine = t.idx.createEngine({ threads: 1 });
  const cluster = engine.cluster(t.name);
  return {
    sync: async (s) => void (await cluster.lowerBound(s, [])),
    decide: (s, opts) => cluster.disrupt(s, { ...opts, deadlines: true }),
    carryOut: (s, commands, names) =>
      cluster.carryOut && carry
        ? cluster.carryOut(s, commands, names)
        : Promise.resolve(commands.reduce((x, c, k) => t.idx.applyCommand(x, c, (i: number) => names[k]![i]!), s)),
    close: () => engine.close(),
  };
}

export interface Run {
  readonly wall: number;
  /** This process's CPU (all threads), ms. */
  readonly cpu: number;
  /** Nodes, $/h and loops after: identical plans print identical lines. */
  readonly plan: string;
  /** Each loop's wall ms: deciding, carrying the decision out. */
  readonly perLoop: readonly string[];
}

/** The suite's repack loop from the start snapshot until it finds nothing (names as the suite's). */
export async function repackRun(t: Tree, d: Decider): Promise<Run> {
  await d.sync(t.snapshot);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let s = t.snapshot;
  let state = t.idx.INITIAL_LOOP_STATE;
  let loops = 0;
  let commands = 0;
  const perLoop: string[] = [];
  for (let version = 0; ; version++) {
    loops++;
    const l0 = performance.now();
    const o = { repack: 'only', repackDeadlineMs: 30_000, state, consolidationState: version };
    const r = await d.decide(s, o);
    const l1 = performance.now();
    state = r.state;
    const dec = r.decision;
    if (dec.kind === 'noop') {
      perLoop.push(`decide ${(l1 - l0).toFixed(0)}`);
      break;
    }
    const cmds = [dec, ...(dec.followUps ?? []), ...(dec.concurrent ?? [])];
    const names = cmds.map((c) => {
      const k = commands++;
      return c.replacements.map((_, i) => `v${version}-c${k}-r${i}`);
    });
    s = await d.carryOut(s, cmds, names);
    perLoop.push(`decide ${(l1 - l0).toFixed(0)}/carry out ${(performance.now() - l1).toFixed(0)}`);
  }
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const nodes = s.nodes.filter((n) => n.hasNodeClaim).length;
  const plan = `${nodes} nodes, $${t.scen.clusterCost(s).toFixed(4)}/h, ${loops} loops`;
  return { wall, cpu: (c.user + c.system) / 1000, plan, perLoop };
}

export const median = (a: readonly number[]): number => [...a].sort((p, q) => p - q)[a.length >> 1]!;
