// The node list's part of a solve, kept by position for the next solve over the same list. A disruption call
// simulates the snapshot's nodes again and again, each time with other candidates replaced by copies marked for
// deletion: the order of the nodes, their starting room, label sets, taint keys, topology views and request-space
// vectors are the same every time, only which positions are active changes. Looked up per node in the caches,
// that work was most of a small simulation at 10,000 nodes (a cache lookup per node and per kind, each a
// cache miss); kept per position, a solve checks the list against the table (a pointer comparison per
// position, a few for a marked copy) and takes the rest from arrays.
import type { DaemonSet, StateNode } from '../domain/types.ts';
import { isActive } from '../scheduling/pods.ts';
import { cacheSlot, type ModelCaches } from './caches.ts';
import type { TopologyNode } from './topology.ts';

export class NodeTable {
  /**
   * The list as it was when the table was made: a copy, since a caller may add to or replace in its own array
   * between solves (the list the table was made from would then match itself while the table is stale).
   */
  readonly nodes: readonly StateNode[];
  /** Positions by the order existing nodes take in a solve: initialized first, then by name (a stable sort). */
  readonly order: Int32Array;
  /** Each position's node as topology sees it (its active pods), the same objects for every solve. */
  readonly topologyNodes: readonly TopologyNode[];
  /** Work others keep per position (see `at`), by what it is. */
  private readonly columns = new Map<string, unknown[]>();
  /** The column asked last: callers ask for one column at every position in a row, so most asks skip the map. */
  private lastName: string | undefined;
  private lastColumn: unknown[] = [];

  constructor(
    list: readonly StateNode[],
    readonly daemonSets: readonly DaemonSet[],
  ) {
    const nodes = [...list];
    this.nodes = nodes;
    const idx = nodes.map((_, i) => i);
    idx.sort((a, b) => {
      const x = nodes[a]!;
      const y = nodes[b]!;
      return Number(y.initialized) - Number(x.initialized) || (x.name < y.name ? -1 : x.name > y.name ? 1 : a - b);
    });
    this.order = Int32Array.from(idx);
    this.topologyNodes = nodes.map((n) => ({
      name: n.name,
      labels: n.labels,
      taints: n.taints,
      // The node's own (immutable) array when every pod is active, as nearly always: a copy was 20-110 slots a node
      // kept for the table's life.
      pods: n.pods.every(isActive) ? n.pods : n.pods.filter(isActive),
    }));
  }

  /**
   * The value of `column` at position i, computed once per table. A column's value may read only what a marked
   * copy shares with its node (everything but markedForDeletion). `arg` is handed to `compute` (a caller that
   * asks at every position passes what it needs there instead of making a closure per position).
   */
  at<T, A = undefined>(column: string, i: number, compute: (n: StateNode, arg: A) => T, arg?: A): T {
    let c = this.lastColumn;
    if (column !== this.lastName) {
      c = this.columns.get(column)!;
      if (!c) this.columns.set(column, (c = new Array(this.nodes.length)));
      this.lastName = column;
      this.lastColumn = c;
    }
    let v = c[i] as T | undefined;
    if (v === undefined) c[i] = v = compute(this.nodes[i]!, arg as A);
    return v;
  }

  /** Whether `nodes` is this table's list, nodes replaced by marked copies of them (or the other way round) aside. */
  fits(nodes: readonly StateNode[], daemonSets: readonly DaemonSet[]): boolean {
    if (nodes.length !== this.nodes.length || daemonSets !== this.daemonSets) return false;
    for (let i = 0; i < nodes.length; i++) {
      const a = nodes[i]!;
      const b = this.nodes[i]!;
      if (a !== b && !sameButMarked(a, b)) return false;
    }
    return true;
  }
}

/** The same node but for markedForDeletion: what a simulation's marked copy of a node is. */
function sameButMarked(a: StateNode, b: StateNode): boolean {
  const x = a as unknown as Readonly<Record<string, unknown>>;
  const y = b as unknown as Readonly<Record<string, unknown>>;
  let n = 0;
  for (const k in x) {
    if (k !== 'markedForDeletion' && (x[k] !== y[k] || !(k in y))) return false;
    n++;
  }
  for (const _ in y) n--;
  return n === 0;
}

// One table per daemonset list (the nodes' starting room depends on it): the last node list solved with it.
const TABLES = cacheSlot<readonly DaemonSet[], { table: NodeTable }>('node tables');

/** The table of the last solve over this list (or one it fits), else a new one kept for the next. */
export function nodeTable(
  nodes: readonly StateNode[],
  daemonSets: readonly DaemonSet[],
  caches: ModelCaches,
): NodeTable {
  const kept = caches.get(TABLES, daemonSets);
  if (kept?.table.fits(nodes, daemonSets)) return kept.table;
  const table = new NodeTable(nodes, daemonSets);
  if (kept) kept.table = table;
  else caches.set(TABLES, daemonSets, { table });
  return table;
}
