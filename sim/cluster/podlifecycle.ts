// The pod half of the simulated kubelets (one object stands in for every node's kubelet):
//
// 1. A pod bound to a live node (it exists, is Ready, its instance was not terminated) starts after
//    podStartMs: phase Running, startTime, Ready/ContainersReady/Initialized conditions, container
//    statuses, a pod IP.
// 2. A pod with a deletionTimestamp on a live node stops at its deletionTimestamp (the grace period, on
//    the sim clock), then the kubelet confirms the deletion with grace period 0.
// 3. Pods bound to a node that no longer exists are force-deleted (what PodGC does for orphans).
// Pods on dead nodes (terminated instances) are left as they are, as on a real cluster.
import { toKubeTime, type Clock, type Timer } from '../../controller/operator/clock.ts';
import type { Api, KObject, StoreEvent } from '../apiserver/index.ts';
import { Reactor } from './reactor.ts';
import { isTerminal, nodeCondition, podSpec } from './scheduling/nodes.ts';

interface PodLifecycleOptions {
  readonly api: Api;
  readonly clock: Clock;
  readonly onError: (err: unknown) => void;
  /** Sim ms from binding to Running. */
  readonly podStartMs: number;
  /** Whether the node's kubelet is running (not a terminated instance). */
  readonly alive: (nodeName: string) => boolean;
}

const key = (p: KObject): string => `${p.metadata.namespace}/${p.metadata.name}`;

export class PodLifecycle {
  readonly reactor: Reactor;
  private readonly dirty = new Set<string>();
  private readonly starting = new Map<string, Timer>();
  private readonly stopping = new Map<string, { at: number; timer: Timer }>();
  private readonly unsubscribe: () => void;
  private nextIp = 1;

  constructor(private readonly opts: PodLifecycleOptions) {
    this.reactor = new Reactor('kubelet', () => this.pass(), opts.onError);
    this.unsubscribe = opts.api.store.subscribe((e) => this.observe(e));
    for (const p of opts.api.store.list('pods')) this.dirty.add(key(p));
    this.reactor.kick();
  }

  close(): void {
    this.unsubscribe();
    this.reactor.close();
    for (const t of this.starting.values()) t.cancel();
    for (const s of this.stopping.values()) s.timer.cancel();
    this.starting.clear();
    this.stopping.clear();
  }

  /** Re-examines every pod bound to the node (after the node changed). */
  touchNode(nodeName: string): void {
    for (const p of this.opts.api.store.list('pods', { fields: [{ key: 'spec.nodeName', op: 'eq', value: nodeName }] }))
      this.dirty.add(key(p));
    this.reactor.kick();
  }

  private observe(e: StoreEvent): void {
    if (e.resource === 'pods') {
      if (e.type === 'DELETED') this.forget(key(e.object));
      else this.dirty.add(key(e.object));
      this.reactor.kick();
    } else if (e.resource === 'nodes') {
      const readyChanged = !e.old || nodeCondition(e.object, 'Ready') !== nodeCondition(e.old, 'Ready');
      if (e.type === 'DELETED' || readyChanged) this.touchNode(e.object.metadata.name!);
    }
  }

  private forget(k: string): void {
    this.starting.get(k)?.cancel();
    this.starting.delete(k);
    this.stopping.get(k)?.timer.cancel();
    this.stopping.delete(k);
  }

  private pass(): void {
    const keys = [...this.dirty];
    this.dirty.clear();
    for (const k of keys) {
      const [ns, name] = k.split('/') as [string, string];
      const pod = this.opts.api.store.get('pods', ns, name);
      if (pod) this.sync(pod);
    }
  }

  private sync(pod: KObject): void {
    const nodeName = podSpec(pod).nodeName;
    if (!nodeName) return;
    const k = key(pod);
    const node = this.opts.api.store.get('nodes', '', nodeName);
    if (!node) {
      this.opts.api.delete('pods', pod.metadata.namespace, pod.metadata.name!, {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid! },
      });
      return;
    }
    const live = this.opts.alive(nodeName) && nodeCondition(node, 'Ready') === 'True';
    if (!live) return;
    if (pod.metadata.deletionTimestamp) {
      this.starting.get(k)?.cancel();
      this.starting.delete(k);
      const at = Date.parse(pod.metadata.deletionTimestamp);
      const cur = this.stopping.get(k);
      if (cur && cur.at <= at) return;
      cur?.timer.cancel();
      const timer = this.opts.clock.setTimer(Math.max(0, at - this.opts.clock.now()), () => this.confirmDeletion(pod));
      this.stopping.set(k, { at, timer });
      return;
    }
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    if (phase === 'Pending' && !isTerminal(pod) && !this.starting.has(k)) {
      this.starting.set(
        k,
        this.opts.clock.setTimer(this.opts.podStartMs, () => this.start(pod)),
      );
    }
  }

  private confirmDeletion(pod: KObject): void {
    this.stopping.delete(key(pod));
    const cur = this.opts.api.store.get('pods', pod.metadata.namespace!, pod.metadata.name!);
    if (!cur || cur.metadata.uid !== pod.metadata.uid) return;
    this.opts.api.delete('pods', pod.metadata.namespace, pod.metadata.name!, {
      gracePeriodSeconds: 0,
      preconditions: { uid: pod.metadata.uid! },
    });
  }

  private start(pod: KObject): void {
    this.starting.delete(key(pod));
    const cur = this.opts.api.store.get('pods', pod.metadata.namespace!, pod.metadata.name!);
    if (!cur || cur.metadata.uid !== pod.metadata.uid || cur.metadata.deletionTimestamp) return;
    const node = this.opts.api.store.get('nodes', '', podSpec(cur).nodeName ?? '');
    if (!node) return;
    const now = toKubeTime(this.opts.clock.now());
    const hostIP =
      ((node.status as { addresses?: Array<{ type: string; address: string }> } | undefined)?.addresses ?? []).find(
        (a) => a.type === 'InternalIP',
      )?.address ?? '';
    const n = this.nextIp++;
    const podIP = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    const scheduled = (
      (cur.status as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? []
    ).find((c) => c.type === 'PodScheduled');
    const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now });
    const status = {
      ...(cur.status as object),
      phase: 'Running',
      hostIP,
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: now,
      conditions: [
        cond('PodReadyToStartContainers'),
        cond('Initialized'),
        cond('Ready'),
        cond('ContainersReady'),
        scheduled ?? cond('PodScheduled'),
      ],
      containerStatuses: (podSpec(cur).containers ?? []).map((c, i) => ({
        name: c.name,
        ready: true,
        started: true,
        restartCount: 0,
        image: (c as { image?: string }).image ?? '',
        imageID: '',
        containerID: `containerd://sim-${cur.metadata.uid}-${i}`,
        state: { running: { startedAt: now } },
      })),
    };
    this.opts.api.updateStatus('pods', cur.metadata.namespace, cur.metadata.name!, { ...cur, status });
  }

  /** Marks every pod on the node not ready (what the node lifecycle controller does when a node stops reporting). */
  markPodsNotReady(nodeName: string): void {
    const now = toKubeTime(this.opts.clock.now());
    for (const p of this.opts.api.store.list('pods', {
      fields: [{ key: 'spec.nodeName', op: 'eq', value: nodeName }],
    })) {
      const conditions = (p.status as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? [];
      if (!conditions.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
      const next = conditions.map((c) =>
        c.type === 'Ready' || c.type === 'ContainersReady'
          ? { ...c, status: 'False', reason: 'NodeNotReady', lastTransitionTime: now }
          : c,
      );
      this.opts.api.updateStatus('pods', p.metadata.namespace, p.metadata.name!, {
        ...p,
        status: { ...(p.status as object), conditions: next },
      });
    }
  }
}
