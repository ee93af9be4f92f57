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
import { settler } from '../../sim/environment.ts';
import type { Simulation } from './environment.ts';

export interface Restarted {
  readonly operator: Operator;
  stop(): Promise<void>;
}

/** Stops `current` (default the simulation's own operator) and starts a new one in its place. */
export async function restartController(
  sim: Simulation,
  current: Operator = sim.operator,
  options: Readonly<Record<string, string>> = {},
): Promise<Restarted> {
  await current.stop();
  const resolved = resolveOptions(
    [],
    {},
    {
      'cluster-name': 'my-cluster',
      'metrics-port': '0',
      'health-probe-port': '0',
      'disable-leader-election': 'true',
      ...options,
    },
  );
  const operator = await newOperator({
    options: resolved,
    clock: sim.clock,
    log: sim.log.child({ incarnation: 'restarted' }),
    kubeConfig: sim.cluster.kubeConfig(),
    // The same simulated cloud (its instances, node classes and interruption feed outlive the controller).
    cloudProvider: () => sim.provider,
  });
  // The simulation's own settle waits for its first operator only: wait for this one as well.
  const removeSettler = sim.clock.addSettler(settler(sim.cluster, operator));
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
