// The cloud as the soak's controllers see it: the simulated cloud behind a wrapper that fails, hangs or
// half-answers calls when the soak arms it, and that shows every termination to the invariant monitor
// before the cloud sees it.
//
//   fail     the call fails with a 500 (EC2's InternalError);
//   hang     the call is never answered, and fails when the client's request timeout ends it (the SDK's
//            TimeoutError); nothing happened in the cloud. The hang is a few wall-clock milliseconds: the
//            simulated clock stands still while the controller waits (so the rest of the controller does too);
//   lost     (create only) the fleet launched the instance, but the answer was lost to the same timeout:
//            the NodeClaim never records that instance, and garbage collection must take it;
//   partial  (a window of simulated time) half the launches come back with no instance, as a CreateFleet
//            that fills part of a request does (InsufficientCapacityError).
import { InsufficientCapacityError, type CloudProvider } from '../../controller/cloudprovider/types.ts';
import { wrapCloud } from '../support/drills.ts';
import type { Rng } from './rng.ts';

type CloudMethod = 'create' | 'delete' | 'get' | 'list';
type CloudFaultMode = 'fail' | 'hang' | 'lost';

const HANG_WALL_MS = 5;

function timeoutError(what: string): Error {
  const e = new Error(`${what}: the request timed out (the endpoint never answered)`);
  e.name = 'TimeoutError';
  return e;
}

function internalError(what: string): Error {
  const e = new Error(`${what}: We encountered an internal error. Please try again. (InternalError, injected)`);
  e.name = 'InternalError';
  return e;
}

export class CloudFaults {
  private readonly armed: Record<CloudMethod, CloudFaultMode[]> = { create: [], delete: [], get: [], list: [] };
  private partialUntil = 0;
  /** Launches that came back partial, hung calls that launched anyway. */
  readonly effects = { partialLaunches: 0, lostLaunches: 0 };

  constructor(
    private readonly now: () => number,
    private readonly rng: Rng,
  ) {}

  /** The next `n` calls of `method` meet `mode`. */
  arm(method: CloudMethod, mode: CloudFaultMode, n = 1): void {
    for (let i = 0; i < n; i++) this.armed[method].push(mode);
  }

  /** For `ms` of simulated time, half the launches fill nothing. */
  partialFleets(ms: number): void {
    this.partialUntil = Math.max(this.partialUntil, this.now() + ms);
  }

  /** Nothing armed any more (the soak's quiet tail). */
  disarm(): void {
    for (const k of Object.keys(this.armed) as CloudMethod[]) this.armed[k].length = 0;
    this.partialUntil = 0;
  }

  /** The provider a replica sees; `beforeTerminate` is told of every delete the controller sends. */
  wrap(cp: CloudProvider, beforeTerminate: (providerID: string) => void): CloudProvider {
    return wrapCloud(cp, {
      create: async (req) => {
        const mode = this.armed.create.shift();
        const what = `CreateFleet for nodeclaim ${req.nodeClaimName}`;
        if (mode === 'fail') throw internalError(what);
        if (mode === 'hang') return this.hang(what);
        if (mode === 'lost') {
          await cp.create(req);
          this.effects.lostLaunches++;
          return this.hang(what);
        }
        if (this.now() < this.partialUntil && this.rng.chance(0.5)) {
          this.effects.partialLaunches++;
          throw new InsufficientCapacityError(
            `${what}: the fleet filled part of the request; no instance for this one`,
          );
        }
        return cp.create(req);
      },
      delete: async (id) => {
        beforeTerminate(id);
        await this.fault('delete', `TerminateInstances ${id}`);
        return cp.delete(id);
      },
      get: async (id) => {
        await this.fault('get', `DescribeInstances ${id}`);
        return cp.get(id);
      },
      list: async () => {
        await this.fault('list', 'DescribeInstances (list)');
        return cp.list();
      },
    });
  }

  private async fault(method: CloudMethod, what: string): Promise<void> {
    const mode = this.armed[method].shift();
    if (mode === 'fail') throw internalError(what);
    if (mode === 'hang' || mode === 'lost') await this.hang(what);
  }

  private async hang(what: string): Promise<never> {
    await new Promise((resolve) => setTimeout(resolve, HANG_WALL_MS));
    throw timeoutError(what);
  }
}
