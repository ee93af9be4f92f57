// What a pool worker keeps across what-if jobs besides their instance types (catalogs.ts): each job arrives
// unpacked as new objects, its NodePools and its daemonset list among them, and the scheduling model's templates
// are remembered by the identity of those objects (model/templates.ts). So every job built its templates again,
// filtered the region's catalog for them, encoded their instance types for the solver and worked out the bound's
// options per template, several times a job (its provisioning, each consolidation plan, its bound): the same work
// and the same buffers for every job of a batch that shares one catalog.
//
// Here a job's NodePools and daemonset list are replaced by the ones an earlier job brought when they are the same
// (their packed bytes equal, compared whole), and the catalog-scope caches (model/caches.ts) live as long as the
// worker: a job over the same NodePools, daemonsets and instance types finds its templates, their encoded chunks and
// the bound's options made already. Anything changed is a new object and so a miss: a NodePool edited, a daemonset
// added, an instance type's offerings or prices (the caller ships changed types as new objects).
import type { DaemonSet, NodePool } from '../domain/types.ts';
import { ModelCaches } from '../model/caches.ts';
import type { Built } from '../whatif/build.ts';
import { pack } from './codec.ts';

/** NodePools kept (by name, the least recently met goes first). */
const KEPT_POOLS = 64;

interface Kept<T> {
  readonly bytes: Uint8Array;
  readonly value: T;
}

export class JobCatalog {
  /** The catalog-scope slots of every cache a job's calls make (model/caches.ts). */
  readonly caches = new ModelCaches();
  private readonly pools = new Map<string, Kept<NodePool>>();
  private daemonSets: Kept<readonly DaemonSet[]> | undefined;

  /** Caches for one call (a solve, a bound) that keep their catalog-scope slots here. */
  callCaches(): ModelCaches {
    return new ModelCaches(this.caches);
  }

  /** The snapshot with its NodePools and daemonset list as kept from an earlier job when their content is the same. */
  intern(built: Built): Built {
    const s = built.snapshot;
    const nodePools = s.nodePools.map((p) => this.pool(p));
    const daemonSets = this.daemons(s.daemonSets);
    if (daemonSets === s.daemonSets && nodePools.every((p, i) => p === s.nodePools[i])) return built;
    return { ...built, snapshot: { ...s, nodePools, daemonSets } };
  }

  /** The NodePools kept, by name (tests look). */
  keptPools(): ReadonlyMap<string, NodePool> {
    return new Map([...this.pools].map(([name, k]) => [name, k.value] as const));
  }

  private pool(p: NodePool): NodePool {
    const bytes = new Uint8Array(pack(p));
    const kept = this.pools.get(p.name);
    this.pools.delete(p.name);
    const k = kept && sameBytes(kept.bytes, bytes) ? kept : { bytes, value: p };
    this.pools.set(p.name, k);
    if (this.pools.size > KEPT_POOLS) this.pools.delete(this.pools.keys().next().value!);
    return k.value;
  }

  private daemons(list: readonly DaemonSet[]): readonly DaemonSet[] {
    const bytes = new Uint8Array(pack(list));
    if (!this.daemonSets || !sameBytes(this.daemonSets.bytes, bytes)) this.daemonSets = { bytes, value: list };
    return this.daemonSets.value;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
