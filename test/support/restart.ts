// "The controller is killed and comes back": the running operator of a simulation is stopped (its work
// queues, informers and every in-memory record of what it was doing are gone) and a fresh one starts
// against the same simulated cluster and cloud, as a new controller pod would. The simulated world keeps
// its state: API objects, instances, timers of the cloud and kubelets.
//
//   const second = await restartController(sim);
//   ... second.operator is the controller now ...
//   await second.stop();          // before sim.close()
import { newOperator, type Operator } from '../../controller/main.ts';
import { resolveOptions } from '../../controller/operator/options.ts';
import { caughtUp } from '../../controller/simulation/settle.ts';
import type { Simulation } from './simulation.ts';

export interface Restarted {
  readonly operator: Operator;
  stop(): Promise<void>;
}

/** Stops `current` (default the simulation's own operator) and starts a new one in its place. */
export async function restartController(sim: Simulation, current: Operator = sim.operator, options: Readonly<Record<string, string>> = {}): Promise<Restarted> {
  await current.stop();
  const resolved = resolveOptions([], {}, { 'cluster-name': 'my-cluster', 'metrics-port': '0', 'health-probe-port': '0', ...options });
  const operator = await newOperator({
    options: resolved, clock: sim.clock, log: sim.log.child({ incarnation: 'restarted' }), kubeConfig: sim.cluster.kubeConfig(),
    simNetwork: sim.network, cloudProvider: () => sim.provider,
  });
  // The simulation's own settle waits for its first operator only: wait for this one as well.
  const removeSettler = sim.clock.addSettler(async () => {
    for (let idle = 0, turns = 0; idle < 3; turns++) {
      await sim.cluster.settle();
      await new Promise((r) => setImmediate(r));
      idle = operator.busy() || !caughtUp(sim.cluster, operator.informers) ? 0 : idle + 1;
      if (turns > 200_000) throw new Error('restarted controller did not settle');
      if (idle === 0 && turns > 50) await new Promise((r) => setTimeout(r, 1));
    }
  });
  await operator.start();
  await sim.settle();
  return {
    operator,
    async stop() {
      removeSettler();
      await operator.stop();
    },
  };
}
