// Which worker takes a task. A cluster model lives on one worker (its owner): every task for it goes there,
// waiting while the owner is busy, so the model stays warm and its tasks run in order. Tasks without a model
// (what-if jobs, one-off decisions) go to idle workers that own no model, so batch work never delays a
// controller's decision; only when every worker owns a model do they share. A model whose owner is gone
// (the worker crashed and was replaced) gets a new owner; the model itself is rebuilt from the next delta.
import { Piscina } from 'piscina';

/** Queue options a task carries (under Piscina.queueOptionsSymbol): the model it needs, if any. */
export interface TaskRouting {
  readonly model?: string;
  /** This worker (thread id) and no other: per-worker tasks such as a memory reading. */
  readonly worker?: number;
  /** An estimate of the task's work, for batch work that may run in any order (queue.ts: largest first). */
  readonly work?: number;
}

/** What the balancer reads of a worker (piscina's PiscinaWorker). */
interface BalancedWorker {
  readonly id: number;
  readonly currentUsage: number;
  readonly terminating: boolean;
  readonly destroyed: boolean;
}

type Worker = BalancedWorker;

export interface AffinityBalancer {
  /** piscina's loadBalancer. */
  balance<W extends BalancedWorker>(task: object, workers: W[]): W | null;
  /** The model no longer exists: its worker is free of it. */
  forget(model: string): void;
  /** Model -> worker thread id (tests and metrics). */
  readonly owners: ReadonlyMap<string, number>;
}

export function affinityBalancer(): AffinityBalancer {
  const owners = new Map<string, number>();
  const alive = (w: Worker): boolean => !w.destroyed && !w.terminating;
  const modelsOn = (id: number): number => [...owners.values()].filter((o) => o === id).length;
  const idle = (w: Worker): boolean => alive(w) && w.currentUsage === 0;

  function forModel<W extends Worker>(model: string, workers: readonly W[]): W | null {
    const owner = workers.find((w) => w.id === owners.get(model) && alive(w));
    if (owner) return owner.currentUsage === 0 ? owner : null;
    const free = workers.filter(idle).sort((a, b) => modelsOn(a.id) - modelsOn(b.id))[0];
    if (!free) return null;
    owners.set(model, free.id);
    return free;
  }

  function forAnyone<W extends Worker>(workers: readonly W[]): W | null {
    const owning = new Set(owners.values());
    const others = workers.filter((w) => alive(w) && !owning.has(w.id));
    if (others.length) return others.find(idle) ?? null;
    return workers.filter(idle).sort((a, b) => modelsOn(a.id) - modelsOn(b.id))[0] ?? null;
  }

  return {
    owners,
    forget: (model) => void owners.delete(model),
    balance<W extends BalancedWorker>(task: object, workers: W[]): W | null {
      const routing = (task as unknown as Record<symbol, TaskRouting | null>)[Piscina.queueOptionsSymbol];
      if (routing?.worker !== undefined) return workers.find((w) => w.id === routing.worker && idle(w)) ?? null;
      return routing?.model !== undefined ? forModel(routing.model, workers) : forAnyone(workers);
    },
  };
}
