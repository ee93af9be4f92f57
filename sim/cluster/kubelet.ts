// The simulated kubelets. The sim cloud provider calls registerInstance() when an instance "boots";
// on the sim clock the node then goes through what a real one does:
//
//   boot --registerMs--> Node created: labels, capacity/allocatable, spec.providerID, the launch
//                        template's taints + startup taints + karpenter.sh/unregistered:NoExecute,
//                        Ready=False
//        --readyMs-----> Ready=True
//        --startupTaintMs--> startup taints removed (what the daemon owning them would do)
//
// terminateInstance() is the instance going away: pending steps are cancelled, the node turns
// Ready=Unknown, its pods turn not ready, and after nodeRemovalMs the Node is deleted (finalizers such as
// Karpenter's termination finalizer still apply). Pod start/stop is in podlifecycle.ts.
import { toKubeTime, type Clock, type Timer } from '../../controller/operator/clock.ts';
import type { Api, KObject } from '../apiserver/index.ts';
import { PodLifecycle } from './podlifecycle.ts';
import type { Taint } from './scheduling/nodes.ts';

export interface KubeletDelays {
  /** Instance boot to Node registration (sim ms). */
  readonly registerMs: number;
  /** Registration to Ready. */
  readonly readyMs: number;
  /** Ready to startup taints removed. */
  readonly startupTaintMs: number;
  /** Pod bound to Running. */
  readonly podStartMs: number;
  /** Instance terminated to Node deleted (Infinity keeps the NotReady node). */
  readonly nodeRemovalMs: number;
}

const DEFAULT_KUBELET_DELAYS: KubeletDelays = {
  registerMs: 30_000,
  readyMs: 10_000,
  startupTaintMs: 5_000,
  podStartMs: 2_000,
  nodeRemovalMs: 30_000,
};

export interface InstanceSpec {
  readonly providerID: string;
  readonly nodeName: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly taints?: readonly Taint[];
  readonly startupTaints?: readonly Taint[];
  readonly capacity: Readonly<Record<string, string>>;
  readonly allocatable: Readonly<Record<string, string>>;
  /** Default: derived from the instance's sequence number (10.0.x.y). */
  readonly internalIP?: string;
}

type InstanceState = 'booting' | 'registered' | 'ready' | 'initialized' | 'terminated';

export type { Taint };

const UNREGISTERED_TAINT: Taint = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' };

interface Instance {
  spec: InstanceSpec;
  state: InstanceState;
  timers: Timer[];
  ip: string;
}

interface KubeletOptions {
  readonly api: Api;
  readonly clock: Clock;
  readonly delays?: Partial<KubeletDelays>;
  readonly onError: (err: unknown) => void;
  /** Add karpenter.sh/unregistered:NoExecute at registration, as Karpenter's launch templates do (default true). */
  readonly unregisteredTaint?: boolean;
}

const sameTaint = (a: Taint, b: Taint): boolean => a.key === b.key && a.effect === b.effect;

export class Kubelet {
  readonly delays: KubeletDelays;
  readonly pods: PodLifecycle;
  private readonly instances = new Map<string, Instance>();
  private readonly deadNodes = new Set<string>();
  private seq = 0;

  constructor(private readonly opts: KubeletOptions) {
    this.delays = { ...DEFAULT_KUBELET_DELAYS, ...(opts.delays ?? {}) };
    for (const [k, v] of Object.entries(this.delays))
      if (!(v >= 0)) throw new Error(`sim kubelet: delay ${k} must be >= 0 ms, got ${v}`);
    this.pods = new PodLifecycle({
      api: opts.api,
      clock: opts.clock,
      onError: opts.onError,
      podStartMs: this.delays.podStartMs,
      alive: (n) => !this.deadNodes.has(n),
    });
  }

  /** An instance has booted: its kubelet will register the Node after registerMs. */
  registerInstance(spec: InstanceSpec): void {
    if (!spec.providerID || !spec.nodeName)
      throw new Error('sim kubelet: registerInstance needs providerID and nodeName');
    const prior = this.instances.get(spec.providerID);
    if (prior && prior.state !== 'terminated')
      throw new Error(`sim kubelet: instance ${spec.providerID} is already registered (node ${prior.spec.nodeName})`);
    const n = ++this.seq;
    const inst: Instance = {
      spec,
      state: 'booting',
      timers: [],
      ip: spec.internalIP ?? `10.0.${(n >> 8) & 255}.${n & 255}`,
    };
    this.instances.set(spec.providerID, inst);
    this.deadNodes.delete(spec.nodeName);
    this.after(inst, this.delays.registerMs, () => this.register(inst));
  }

  /** The instance is gone (terminated or interrupted). Unknown provider ids are ignored. */
  terminateInstance(providerID: string): void {
    const inst = this.instances.get(providerID);
    if (!inst || inst.state === 'terminated') return;
    const wasRegistered = inst.state !== 'booting';
    for (const t of inst.timers) t.cancel();
    inst.timers = [];
    inst.state = 'terminated';
    const name = inst.spec.nodeName;
    this.deadNodes.add(name);
    if (!wasRegistered) return;
    const node = this.opts.api.find('nodes', undefined, name);
    if (node) {
      this.setReady(node, 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.');
      this.pods.markPodsNotReady(name);
    }
    if (Number.isFinite(this.delays.nodeRemovalMs)) {
      this.after(inst, this.delays.nodeRemovalMs, () => {
        const cur = this.opts.api.find('nodes', undefined, name);
        if (cur && cur.spec && (cur.spec as { providerID?: string }).providerID === providerID)
          this.opts.api.delete('nodes', undefined, name);
      });
    }
  }

  /**
   * The node reports a condition, as a failing kubelet or the EKS node monitoring agent would (failure drills:
   * node repair). The instance keeps running. Ready other than True also stops the kubelet: its pods turn not
   * ready, no pod starts there, and it never reports Ready again. Returns false for an unknown node.
   */
  setNodeCondition(
    nodeName: string,
    c: { type: string; status: 'True' | 'False' | 'Unknown'; reason?: string; message?: string },
  ): boolean {
    const node = this.opts.api.find('nodes', undefined, nodeName);
    if (!node) return false;
    if (c.type === 'Ready') {
      if (c.status !== 'True') {
        this.deadNodes.add(nodeName);
        for (const inst of this.instances.values()) {
          if (inst.spec.nodeName !== nodeName) continue;
          for (const t of inst.timers) t.cancel();
          inst.timers = [];
        }
      }
      this.setReady(
        node,
        c.status,
        c.reason ?? (c.status === 'True' ? 'KubeletReady' : 'KubeletNotReady'),
        c.message ??
          (c.status === 'True'
            ? 'kubelet is posting ready status'
            : 'the kubelet stopped reporting ready (simulated failure)'),
      );
      if (c.status !== 'True') this.pods.markPodsNotReady(nodeName);
      return true;
    }
    const now = toKubeTime(this.opts.clock.now());
    const all = (node.status as { conditions?: Array<Record<string, unknown>> }).conditions ?? [];
    const prev = all.find((x) => x.type === c.type);
    const next = {
      type: c.type,
      status: c.status,
      reason: c.reason ?? c.type,
      message: c.message ?? '',
      lastHeartbeatTime: now,
      lastTransitionTime: prev?.status === c.status ? prev.lastTransitionTime : now,
    };
    this.opts.api.updateStatus('nodes', undefined, nodeName, {
      ...node,
      status: { ...(node.status as object), conditions: [...all.filter((x) => x.type !== c.type), next] },
    });
    return true;
  }

  /** The instance's progress, or undefined for an unknown provider id. */
  state(providerID: string): InstanceState | undefined {
    return this.instances.get(providerID)?.state;
  }

  instanceList(): Array<{ providerID: string; nodeName: string; state: InstanceState }> {
    return [...this.instances.values()].map((i) => ({
      providerID: i.spec.providerID,
      nodeName: i.spec.nodeName,
      state: i.state,
    }));
  }

  close(): void {
    for (const inst of this.instances.values()) for (const t of inst.timers) t.cancel();
    this.pods.close();
  }

  private after(inst: Instance, ms: number, fn: () => void): void {
    const timer = this.opts.clock.setTimer(ms, () => {
      inst.timers = inst.timers.filter((t) => t !== timer);
      try {
        fn();
      } catch (err) {
        this.opts.onError(new Error(`sim kubelet: node ${inst.spec.nodeName}`, { cause: err }));
      }
    });
    inst.timers.push(timer);
  }

  private register(inst: Instance): void {
    const s = inst.spec;
    const now = toKubeTime(this.opts.clock.now());
    const taints = [...(s.taints ?? []), ...(s.startupTaints ?? [])];
    if ((this.opts.unregisteredTaint ?? true) && !taints.some((t) => sameTaint(t, UNREGISTERED_TAINT)))
      taints.push(UNREGISTERED_TAINT);
    const labels: Record<string, string> = {
      'kubernetes.io/hostname': s.nodeName,
      'kubernetes.io/os': 'linux',
      ...(s.labels ?? {}),
    };
    const status = {
      capacity: { ...s.capacity },
      allocatable: { ...s.allocatable },
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'KubeletNotReady',
          message: 'container runtime network not ready',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
      addresses: [
        { type: 'InternalIP', address: inst.ip },
        { type: 'Hostname', address: s.nodeName },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.32.0',
        kubeProxyVersion: 'v1.32.0',
        containerRuntimeVersion: 'containerd://1.7.0',
        osImage: 'Simulated Linux',
        operatingSystem: 'linux',
        architecture: labels['kubernetes.io/arch'] ?? 'amd64',
        kernelVersion: '6.1.0-sim',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    };
    const existing = this.opts.api.find('nodes', undefined, s.nodeName);
    if (existing) {
      this.opts.api.updateStatus('nodes', undefined, s.nodeName, {
        ...existing,
        status: { ...(existing.status as object), ...status },
      });
    } else {
      this.opts.api.create('nodes', undefined, {
        metadata: { name: s.nodeName, labels, ...(s.annotations ? { annotations: { ...s.annotations } } : {}) },
        spec: { providerID: s.providerID, taints },
        status,
      });
    }
    inst.state = 'registered';
    this.after(inst, this.delays.readyMs, () => this.ready(inst));
  }

  private ready(inst: Instance): void {
    const node = this.opts.api.find('nodes', undefined, inst.spec.nodeName);
    if (!node) return;
    this.setReady(node, 'True', 'KubeletReady', 'kubelet is posting ready status');
    inst.state = 'ready';
    const startup = inst.spec.startupTaints ?? [];
    if (!startup.length) {
      inst.state = 'initialized';
      return;
    }
    this.after(inst, this.delays.startupTaintMs, () => {
      const cur = this.opts.api.find('nodes', undefined, inst.spec.nodeName);
      if (cur) {
        const taints = ((cur.spec as { taints?: Taint[] }).taints ?? []).filter(
          (t) => !startup.some((st) => sameTaint(st, t)),
        );
        this.opts.api.update('nodes', undefined, inst.spec.nodeName, {
          ...cur,
          spec: { ...(cur.spec as object), taints },
        });
      }
      inst.state = 'initialized';
    });
  }

  private setReady(node: KObject, status: 'True' | 'False' | 'Unknown', reason: string, message: string): void {
    const now = toKubeTime(this.opts.clock.now());
    const conditions = ((node.status as { conditions?: Array<Record<string, unknown>> }).conditions ?? []).filter(
      (c) => c.type !== 'Ready',
    );
    const prev = ((node.status as { conditions?: Array<Record<string, unknown>> }).conditions ?? []).find(
      (c) => c.type === 'Ready',
    );
    conditions.push({
      type: 'Ready',
      status,
      reason,
      message,
      lastHeartbeatTime: now,
      lastTransitionTime: prev?.status === status ? prev.lastTransitionTime : now,
    });
    this.opts.api.updateStatus('nodes', undefined, node.metadata.name!, {
      ...node,
      status: { ...(node.status as object), conditions },
    });
  }
}
