// A pod's effective resource requests, as Kubernetes' component-helpers PodRequests computes them (with
// UseStatusResources, as Karpenter calls it; docs/karpenter/scheduling.md §4.2):
//   1. app containers are summed;
//   2. restartable init containers (sidecars) are added to that sum too;
//   3. each regular init container needs its own request plus the sidecars started before it; the pod
//      needs the per-resource max of (1+2) and those;
//   4. pod-level spec.resources requests (cpu, memory) replace the aggregate when set;
//   5. spec.overhead is added.
// A container's requests default to its limits where only limits are given (the API server's defaulting;
// raw manifests have not been through it). During an in-place resize a container counts the max of its
// spec, its status requests and its allocated resources (only status and allocated when the resize is
// infeasible). Limits are otherwise not used.
import { add, max, type Resources } from '../domain/resources.ts';
import { at, type Decoder, type Obj } from './decode.ts';
import type { PathSeg } from './errors.ts';

const POD_LEVEL = ['cpu', 'memory'];

/** A container's (or the pod's) requests, limits standing in for requests not given; read, never changed. */
function requestsOf(d: Decoder, resources: unknown, path: readonly PathSeg[]): Readonly<Record<string, number>> {
  return d.part('requests', resources, () => containerRequests(d, resources, path));
}

function containerRequests(d: Decoder, resources: unknown, path: readonly PathSeg[]): Record<string, number> {
  const r = d.obj(resources, path);
  const requests = d.resources(at(r, 'requests'), [...path, 'requests']);
  const limits = d.resources(at(r, 'limits'), [...path, 'limits']);
  for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
  return requests;
}

function resizeInfeasible(status: Obj | undefined): boolean {
  if (at(status, 'resize') === 'Infeasible') return true;
  const conds = at(status, 'conditions');
  return (
    Array.isArray(conds) &&
    conds.some((c) => at(c as Obj, 'type') === 'PodResizePending' && at(c as Obj, 'reason') === 'Infeasible')
  );
}

function statusRequests(
  d: Decoder,
  status: Obj | undefined,
  name: string,
  path: readonly PathSeg[],
): { requests: Resources; allocated: Resources } | undefined {
  const list = d.arr(at(status, 'containerStatuses'), [...path, 'containerStatuses']);
  const i = list.findIndex((cs) => at(cs as Obj, 'name') === name);
  if (i < 0) return undefined;
  const cs = list[i] as Obj;
  const p = [...path, 'containerStatuses', i];
  if (cs['resources'] === undefined && cs['allocatedResources'] === undefined) return undefined;
  return {
    requests: d.resources(at(d.obj(cs['resources'], [...p, 'resources']), 'requests'), [...p, 'resources', 'requests']),
    allocated: d.resources(cs['allocatedResources'], [...p, 'allocatedResources']),
  };
}

/** The pod's requests in integer units (without Karpenter's `pods: 1`). */
export function podRequests(
  d: Decoder,
  spec: Obj | undefined,
  status: Obj | undefined,
  path: readonly PathSeg[],
): Record<string, number> {
  const sp = [...path, 'spec'];
  const infeasible = resizeInfeasible(status);
  let reqs: Record<string, number> = {};
  d.arr(at(spec, 'containers'), [...sp, 'containers']).forEach((c, i) => {
    const cp = [...sp, 'containers', i];
    const co = d.obj(c, cp);
    let r: Resources = requestsOf(d, at(co, 'resources'), [...cp, 'resources']);
    const st = statusRequests(d, status, String(at(co, 'name')), [...path, 'status']);
    if (st) r = max(max(infeasible ? {} : r, st.requests), st.allocated);
    reqs = add(reqs, r);
  });
  let sidecars: Record<string, number> = {};
  let initMax: Record<string, number> = {};
  d.arr(at(spec, 'initContainers'), [...sp, 'initContainers']).forEach((c, i) => {
    const cp = [...sp, 'initContainers', i];
    const co = d.obj(c, cp);
    const r = requestsOf(d, at(co, 'resources'), [...cp, 'resources']);
    let use: Resources;
    if (at(co, 'restartPolicy') === 'Always') {
      reqs = add(reqs, r);
      sidecars = add(sidecars, r);
      use = sidecars;
    } else {
      use = add(r, sidecars);
    }
    initMax = max(initMax, use);
  });
  reqs = max(reqs, initMax);
  const podLevel = requestsOf(d, at(spec, 'resources'), [...sp, 'resources']);
  for (const k of POD_LEVEL) if (podLevel[k] !== undefined) reqs[k] = podLevel[k];
  return add(reqs, d.resources(at(spec, 'overhead'), [...sp, 'overhead']));
}
