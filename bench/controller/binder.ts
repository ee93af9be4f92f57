// The benchmark's own scheduler for its pods (spec.schedulerName controller-bench): binds pending pods to
// nodes that are Ready, untainted for scheduling and have room, first fit, oldest pod first. It keeps its own
// bookkeeping of free CPU, memory and pod slots per node from the store's events, so a binding costs a few
// map lookups, not a scan of every node and pod (the simulated kube-scheduler's pass does that, which is
// fine for the simulator's scenarios and far too slow for 5,000 nodes and 100,000 pods).
import { resourceValue } from '../../engine/index.ts';
import type { Api, KObject, StoreEvent } from '../../sim/apiserver/index.ts';
import { BENCH_SCHEDULER, NAMESPACE } from './workload.ts';

interface Room {
  cpu: number;
  memory: number;
  pods: number;
  schedulable: boolean;
}

interface Requests {
  readonly cpu: number;
  readonly memory: number;
}

/** How far into the queue one node looks for a pod that fits. */
const SCAN = 256;

/** cpu in millicores, memory in bytes, pods as a count (the engine's units). */
const num = (name: string, q: unknown): number =>
  typeof q === 'string' || typeof q === 'number' ? resourceValue(name, q) : 0;

function requestsOf(pod: KObject): Requests {
  const containers =
    (pod.spec as { containers?: Array<{ resources?: { requests?: Record<string, string> } }> }).containers ?? [];
  let cpu = 0;
  let memory = 0;
  for (const c of containers) {
    cpu += num('cpu', c.resources?.requests?.['cpu']);
    memory += num('memory', c.resources?.requests?.['memory']);
  }
  return { cpu, memory };
}

function schedulable(node: KObject): boolean {
  if (node.metadata.deletionTimestamp || (node.spec as { unschedulable?: boolean } | undefined)?.unschedulable)
    return false;
  const taints = (node.spec as { taints?: Array<{ effect: string }> } | undefined)?.taints ?? [];
  if (taints.some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')) return false;
  const conditions =
    (node.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

export class Binder {
  private readonly rooms = new Map<string, Room>();
  /** Bound pods of ours: where, and what they take. */
  private readonly placed = new Map<string, { node: string; req: Requests }>();
  /** Pending pods of ours, oldest first (a Map keeps insertion order). */
  private readonly queue = new Map<string, Requests>();
  /** Nodes that gained room or became schedulable since the last pass. */
  private readonly dirty = new Set<string>();
  private scheduled = false;
  private readonly unsubscribe: () => void;
  bound = 0;

  constructor(private readonly api: Api) {
    this.unsubscribe = api.store.subscribe((e) => this.observe(e));
  }

  get pending(): number {
    return this.queue.size;
  }

  close(): void {
    this.unsubscribe();
  }

  private observe(e: StoreEvent): void {
    if (e.resource === 'nodes') this.observeNode(e);
    else if (
      e.resource === 'pods' &&
      (e.object.spec as { schedulerName?: string } | undefined)?.schedulerName === BENCH_SCHEDULER
    )
      this.observePod(e);
  }

  private observeNode(e: StoreEvent): void {
    const name = e.object.metadata.name!;
    if (e.type === 'DELETED') {
      this.rooms.delete(name);
      return;
    }
    let room = this.rooms.get(name);
    if (!room) {
      const alloc = (e.object.status as { allocatable?: Record<string, string> } | undefined)?.allocatable ?? {};
      room = {
        cpu: num('cpu', alloc['cpu']),
        memory: num('memory', alloc['memory']),
        pods: num('pods', alloc['pods']) || 110,
        schedulable: false,
      };
      for (const p of this.placed.values()) if (p.node === name) this.take(room, p.req);
      this.rooms.set(name, room);
    }
    const now = schedulable(e.object);
    if (now && !room.schedulable) this.touch(name);
    room.schedulable = now;
  }

  private observePod(e: StoreEvent): void {
    const name = e.object.metadata.name!;
    const nodeName = (e.object.spec as { nodeName?: string }).nodeName;
    if (e.type === 'DELETED' || e.object.metadata.deletionTimestamp) {
      this.queue.delete(name);
      const p = this.placed.get(name);
      if (p) {
        this.placed.delete(name);
        const room = this.rooms.get(p.node);
        if (room) this.give(room, p.req);
        this.touch(p.node);
      }
      return;
    }
    if (nodeName || this.placed.has(name)) return;
    if (e.type === 'ADDED') {
      this.queue.set(name, requestsOf(e.object));
      this.schedule();
    }
  }

  private touch(node: string): void {
    this.dirty.add(node);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pass();
    });
  }

  /** Fills the nodes that changed from the queue; then places what is left on any node with room. */
  private pass(): void {
    if (!this.queue.size) return;
    const nodes = this.dirty.size ? [...this.dirty] : [];
    this.dirty.clear();
    for (const n of nodes) this.fill(n);
  }

  private fill(node: string): void {
    const room = this.rooms.get(node);
    if (!room?.schedulable) return;
    let scanned = 0;
    for (const [name, req] of this.queue) {
      if (++scanned > SCAN || room.pods <= 0) break;
      if (req.cpu > room.cpu || req.memory > room.memory) continue;
      this.queue.delete(name);
      this.api.bind(NAMESPACE, name, node);
      this.take(room, req);
      this.placed.set(name, { node, req });
      this.bound++;
    }
  }

  private take(room: Room, req: Requests): void {
    room.cpu -= req.cpu;
    room.memory -= req.memory;
    room.pods -= 1;
  }

  private give(room: Room, req: Requests): void {
    room.cpu += req.cpu;
    room.memory += req.memory;
    room.pods += 1;
  }
}
