// Failure drills: every outbound call is bounded. A request to an API server or an EC2 endpoint that
// accepts and never answers fails that one operation after its timeout, with a log line and
// karpenter_ts_request_timeouts_total, and is retried by its controller; every other loop goes on, and
// once the endpoint answers again the work completes, each instance launched once.
//
//   the API server silent for NodeClaim status writes   the launch's write times out again and again (the
//                                                        instance is launched once), while a NodeClaim
//                                                        deletion drains and terminates its node;
//   the API server silent altogether (informers)         watches are dropped by their liveness and opened
//                                                        again, a list times out and backs off, and nothing
//                                                        is lost once it answers;
//   EC2 silent for CreateFleet (the AWS provider)        launches time out through the SDK's adaptive
//                                                        retries, a spot interruption is handled meanwhile,
//                                                        a launch that keeps failing is deleted after 5 min.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

import { CreateFleetCommand, TerminateInstancesCommand, type CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { awsClients } from '../../controller/cloudprovider/aws/sdk-clients.ts';
import { KubeClient, type KubeObject } from '../../controller/operator/kube.ts';
import { newLogger } from '../../controller/operator/logger.ts';
import { timeoutReporter } from '../../controller/operator/timeouts.ts';
import { Informers } from '../../controller/state/informers.ts';
import { startSilenceProxy, type SilenceProxy } from '../../sim/silence.ts';
import { awsSimulation, type AwsSimulation } from '../support/aws-simulation.ts';
import { liveInstances } from '../support/drills.ts';
import {
  condition,
  deployment,
  guide,
  nodeClaims,
  running,
  simulation,
  type Simulation,
} from '../support/environment.ts';
import { silentServer, type SilentServer } from '../support/silent.ts';

let sim: Simulation | undefined;
let awsSim: AwsSimulation | undefined;
let proxy: SilenceProxy | undefined;
let silent: SilentServer | undefined;
afterEach(async () => {
  await sim?.close();
  await awsSim?.close();
  await proxy?.close();
  await silent?.close();
  sim = awsSim = proxy = silent = undefined;
});

interface Line {
  level: string;
  message: string;
  client?: string;
  operation?: string;
}

/** Polls on the wall clock (the controller's timeouts are wall-clock) until `done()`. */
async function wallUntil(done: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms of wall time`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const providerIdOf = (o: KubeObject): string | undefined =>
  (o.status as { providerID?: string } | undefined)?.providerID;

describe('every outbound call is bounded', () => {
  it('an API server silent for NodeClaim status writes: each write times out (logged, counted) and is retried, the instance launched once; a deletion drains meanwhile', async () => {
    const lines: Line[] = [];
    sim = await simulation({
      logLevel: 'info',
      logDestination: { write: (l: string) => void lines.push(JSON.parse(l)) },
    });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('db', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'db') === 1, 180_000, 'db running');
    const [dbClaim] = nodeClaims(sim);
    proxy = await startSilenceProxy(sim.cluster);
    sim.operator.kill();
    const b = await sim.startReplica({
      name: 'proxied',
      kubeConfig: proxy.kubeConfig(),
      options: { 'kube-request-timeout': '300ms', 'kube-list-timeout': '1s' },
    });

    proxy.silence((r) => r.method === 'PATCH' && /\/nodeclaims\/[^/?]+\/status/.test(r.path));
    await sim.apply(deployment('web', 1, { cpu: '3' }));
    await sim.kube.delete('NodeClaim', dbClaim!.metadata.name!);
    const dbInstance = providerIdOf(dbClaim!)!;
    await sim.clock.advanceUntil(
      () => !sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, dbClaim!.metadata.name!),
      180_000,
      'the deleted NodeClaim drained and gone',
    );

    // Node termination went on: drained, instance terminated, finalizers removed.
    expect(liveInstances(sim).get(dbClaim!.metadata.name!)?.includes(dbInstance) ?? false).toBe(false);
    // The launches' status writes hung and timed out, again and again; nothing recorded a providerID.
    const writes = proxy.held().filter((r) => r.method === 'PATCH').length;
    expect(writes).toBeGreaterThan(2);
    const timedOut = await b.metrics.value('karpenter_ts_request_timeouts_total', {
      client: 'kubernetes',
      operation: 'patch NodeClaim/status',
    });
    // Every held write timed out and was counted; on a loaded machine a forwarded request can miss the
    // 300 ms bound too, so the count may be higher, never lower.
    expect(timedOut).toBeGreaterThanOrEqual(writes);
    expect(
      lines.filter(
        (l) =>
          l.message.startsWith('kubernetes call timed out') &&
          l.operation === 'patch NodeClaim/status' &&
          l.level === 'ERROR',
      ).length,
    ).toBe(timedOut);
    expect(
      nodeClaims(sim)
        .filter((c) => !c.metadata.deletionTimestamp)
        .every((c) => providerIdOf(c) === undefined),
    ).toBe(true);

    proxy.speak();
    await sim.clock.advanceUntil(
      () => running(sim!, 'web') === 1 && running(sim!, 'db') === 1,
      300_000,
      'web and db running once the writes are answered',
    );
    // One instance per NodeClaim: a failed status write never launched a second one.
    for (const [claim, ids] of liveInstances(sim)) expect(ids, claim).toHaveLength(1);
    expect([...liveInstances(sim).keys()].sort()).toEqual(
      nodeClaims(sim)
        .map((c) => c.metadata.name)
        .sort(),
    );
  });

  it('informers against an API server that goes silent: watches dropped by their liveness and reopened, a list times out and backs off, nothing lost once it answers', async () => {
    sim = await simulation({ only: [] });
    proxy = await startSilenceProxy(sim.cluster);
    const log = newLogger({ level: 'silent' });
    const kc = proxy.kubeConfig();
    const kube = new KubeClient(kc, { requestTimeoutMs: 200, listTimeoutMs: 300 });
    const informers = new Informers({ kube, kubeConfig: kc, clock: sim.clock, log, watchTimeoutMs: 200 });
    const seen = new Set<string>();
    informers.add('Pod', { apply: (o) => seen.add(o.metadata.name!), remove: (o) => seen.delete(o.metadata.name!) });
    informers.add('Node', { apply: () => {}, remove: () => {} });
    const pod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'pause' }] },
    });
    sim.cluster.api.create('pods', 'default', pod('before'));
    await informers.start();
    await wallUntil(
      () => seen.has('before') && informers.status().every((i) => i.state === 'watching'),
      5_000,
      'synced and watching',
    );

    proxy.silenceAll();
    sim.cluster.api.create('pods', 'default', pod('during'));
    // The silent watch is dropped after 200 ms and opened again (held again), repeatedly: not stuck.
    await wallUntil(
      () => proxy!.held().filter((r) => r.path.includes('/pods?') && r.path.includes('watch=true')).length >= 3,
      10_000,
      'pod watches reopened',
    );
    expect(seen.has('during')).toBe(false);
    expect(informers.synced(['Pod'])).toBe(true);

    // A new informer cannot list: its list times out and it backs off, unsynced.
    const late = new Informers({ kube, kubeConfig: kc, clock: sim.clock, log, watchTimeoutMs: 200 });
    late.add('DaemonSet', { apply: () => {}, remove: () => {} });
    await late.start();
    expect(late.status()[0]).toMatchObject({ listed: false, state: 'backoff', restarts: 1 });

    proxy.speak();
    await wallUntil(() => seen.has('during'), 5_000, 'the pod created while silent delivered');
    await sim.clock.advance(1_000);
    await wallUntil(() => late.synced(), 5_000, 'the late informer listed');
    informers.stop();
    late.stop();
  });

  it('an EC2 endpoint silent for CreateFleet: launches time out through the SDK retries (logged, counted), the interruption loop goes on, a launch that keeps failing is deleted after 5 minutes', async () => {
    awsSim = await awsSimulation();
    const s = awsSim;
    await s.apply(guide('guide-03.yaml'));
    await s.apply(guide('guide-05.yaml'));
    await s.apply(deployment('web', 1));
    await s.clock.advanceUntil(() => podsRunning(s, 'web') === 1, 180_000, 'web running');
    const [webClaim] = s.cluster.store.list('nodeclaims.karpenter.sh');
    const [webInstance] = [...s.account.instances.values()];

    // CreateFleet goes over the real SDK stack (HTTP handler timeouts, adaptive retries) to a server that
    // accepts and never answers; the operator's own reporter logs and counts what times out.
    silent = await silentServer();
    const silentEc2 = awsClients({
      region: 'ap-northeast-2',
      endpoint: silent.url,
      credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake' },
      maxAttempts: 2,
      backoffMs: () => 1,
      requestTimeoutMs: 100,
      onTimeout: timeoutReporter(s.operator.log, s.operator.metrics),
    }).ec2;
    let quiet = true;
    s.account.ec2
      .on(CreateFleetCommand)
      .callsFake((input: CreateFleetCommandInput) =>
        quiet ? silentEc2.send(new CreateFleetCommand(input)) : s.account.createFleet(input),
      );

    await s.apply(deployment('api', 1, { cpu: '3' }));
    const event = JSON.parse(
      readFileSync(
        new URL(
          '../../controller/cloudprovider/aws/testdata/interruption-events/spot-interruption-warning.json',
          import.meta.url,
        ),
        'utf8',
      ),
    ) as Record<string, unknown>;
    s.account.send(
      JSON.stringify({
        ...event,
        time: new Date(s.clock.now()).toISOString(),
        region: 'ap-northeast-2',
        detail: { 'instance-id': webInstance!.InstanceId, 'instance-action': 'terminate' },
      }),
    );
    await s.clock.advance(120_000);

    const m = s.operator.metrics;
    // The interruption was handled while every launch timed out: the NodeClaim deleted, its node drained and terminated.
    expect(await m.value('karpenter_nodeclaims_disrupted_total', { reason: 'spot_interrupted' })).toBe(1);
    expect(s.cluster.api.find('nodeclaims.karpenter.sh', undefined, webClaim!.metadata.name!)).toBeUndefined();
    expect(s.account.ec2.commandCalls(TerminateInstancesCommand).flatMap((c) => c.args[0].input.InstanceIds)).toContain(
      webInstance!.InstanceId,
    );
    const fleets = silent.requests().length;
    const timedOut = (await m.value('karpenter_ts_request_timeouts_total', {
      client: 'aws',
      operation: 'ec2:CreateFleet',
    }))!;
    expect(timedOut).toBeGreaterThan(1);
    // Two attempts per call (the adaptive mode retried each timed-out attempt).
    expect(fleets).toBe(2 * timedOut);
    const waiting = s.cluster.store.list('nodeclaims.karpenter.sh');
    expect(waiting.length).toBeGreaterThan(0);
    for (const c of waiting)
      expect(condition(c, 'Launched')).toMatchObject({ status: 'Unknown', reason: 'LaunchFailed' });

    // Still silent 5 minutes on: the launch timeout deletes what never launched, and provisioning tries again.
    await s.clock.advance(5 * 60_000);
    expect(await m.value('karpenter_nodeclaims_disrupted_total', { reason: 'launch_timeout' })).toBeGreaterThanOrEqual(
      1,
    );

    quiet = false;
    await s.clock.advanceUntil(
      () => podsRunning(s, 'web') === 1 && podsRunning(s, 'api') === 1,
      600_000,
      'web and api running once EC2 answers',
    );
  });
});

const podsRunning = (s: AwsSimulation, app: string) =>
  s.cluster.store
    .list('pods', { namespace: 'default' })
    .filter(
      (p) =>
        p.metadata.labels?.['app'] === app &&
        (p.status as { phase?: string }).phase === 'Running' &&
        !p.metadata.deletionTimestamp,
    ).length;
