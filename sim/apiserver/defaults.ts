// Server-side defaulting: the handful of defaults the real API server (defaulters plus default admission
// plugins) fills in that controllers read back. Only fields someone here depends on are defaulted.
import { isObject, type JsonObject, type KObject } from './types.ts';

type Defaulter = (obj: KObject) => void;

function setIfAbsent(o: JsonObject, key: string, value: unknown): void {
  if (o[key] === undefined) o[key] = value;
}

function child(o: JsonObject, key: string): JsonObject {
  const v = o[key];
  if (isObject(v)) return v;
  const created: JsonObject = {};
  o[key] = created;
  return created;
}

/** PodSpec defaults (pkg/apis/core/v1/defaults.go) and the DefaultTolerationSeconds admission plugin. */
function defaultPodSpec(spec: JsonObject): void {
  setIfAbsent(spec, 'restartPolicy', 'Always');
  setIfAbsent(spec, 'terminationGracePeriodSeconds', 30);
  setIfAbsent(spec, 'dnsPolicy', 'ClusterFirst');
  setIfAbsent(spec, 'schedulerName', 'default-scheduler');
  setIfAbsent(spec, 'securityContext', {});
}

function defaultTolerations(spec: JsonObject): void {
  const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as JsonObject[]) : [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const covered = tolerations.some(
      (t) =>
        (t.key === key || (t.key === undefined && t.operator === 'Exists')) &&
        (t.effect === undefined || t.effect === 'NoExecute'),
    );
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
  spec.tolerations = tolerations;
}

const workload: Defaulter = (obj) => {
  const spec = child(obj, 'spec');
  setIfAbsent(spec, 'replicas', 1);
  const template = spec.template;
  if (isObject(template)) defaultPodSpec(child(template, 'spec'));
};

export const DEFAULTS: Record<string, Defaulter> = {
  pods: (obj) => {
    const spec = child(obj, 'spec');
    defaultPodSpec(spec);
    defaultTolerations(spec);
  },
  'deployments.apps': (obj) => {
    workload(obj);
    const spec = child(obj, 'spec');
    setIfAbsent(spec, 'strategy', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    setIfAbsent(spec, 'revisionHistoryLimit', 10);
    setIfAbsent(spec, 'progressDeadlineSeconds', 600);
  },
  'replicasets.apps': workload,
  'statefulsets.apps': workload,
  'daemonsets.apps': (obj) => {
    const spec = child(obj, 'spec');
    setIfAbsent(spec, 'updateStrategy', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    const template = spec.template;
    if (isObject(template)) defaultPodSpec(child(template, 'spec'));
  },
  services: (obj) => setIfAbsent(child(obj, 'spec'), 'type', 'ClusterIP'),
};

/** The pod's QoS class (pkg/apis/core/helper/qos), from its containers' requests and limits. */
function qosClass(spec: JsonObject): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const containers = [
    ...((spec.initContainers as JsonObject[] | undefined) ?? []),
    ...((spec.containers as JsonObject[] | undefined) ?? []),
  ];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isObject(c.resources) ? c.resources : {};
    const req = (isObject(res.requests) ? res.requests : {}) as Record<string, unknown>;
    const lim = (isObject(res.limits) ? res.limits : {}) as Record<string, unknown>;
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined || (req[r] !== undefined && String(req[r]) !== String(lim[r]))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * What `status` becomes when an object is created through the main resource. Kinds not listed keep the
 * status they were created with (nodes: the kubelet registers with its status); custom resources with a
 * status subresource lose it (handled by the registry).
 */
export const STATUS_ON_CREATE: Record<string, (obj: KObject) => unknown> = {
  pods: (obj) => ({ phase: 'Pending', qosClass: qosClass(isObject(obj.spec) ? obj.spec : {}) }),
  namespaces: () => ({ phase: 'Active' }),
  'deployments.apps': () => ({}),
  'replicasets.apps': () => ({ replicas: 0 }),
  'daemonsets.apps': () => ({
    currentNumberScheduled: 0,
    desiredNumberScheduled: 0,
    numberMisscheduled: 0,
    numberReady: 0,
  }),
  'statefulsets.apps': () => ({ replicas: 0, availableReplicas: 0 }),
  'poddisruptionbudgets.policy': () => ({
    currentHealthy: 0,
    desiredHealthy: 0,
    disruptionsAllowed: 0,
    expectedPods: 0,
  }),
};
