// aws/karpenter-provider-aws v1.14.1 pkg/controllers/nodeclaim/tagging/suite_test.go, case for case: the
// nodeclaim.tagging controller with the AWS provider's tagging over the real EC2 client, whose calls
// aws-sdk-client-mock answers from one stored instance. NodeClaims live in the simulated API server; as upstream's
// ExpectObjectReconciled, the test runs the controller's reconcile itself.
import {
  CreateTagsCommand,
  DescribeInstancesCommand,
  type Instance as Ec2Instance,
  type Tag,
} from '@aws-sdk/client-ec2';
import 'aws-sdk-client-mock-vitest/extend';
import { afterEach, describe, expect, it } from 'vitest';
import { Instances } from '../../../controller/cloudprovider/aws/instance.ts';
import { awsInstanceTagging } from '../../../controller/cloudprovider/aws/tagging.ts';
import { newNodeClaimTagging } from '../../../controller/controllers/nodeclaim/tagging/reconcile.ts';
import { engineOptionsOf } from '../../../controller/main.ts';
import { resolveOptions } from '../../../controller/operator/options.ts';
import type { ReconcileResult } from '../../../controller/operator/result.ts';
import type { Controller } from '../../../controller/operator/runtime.ts';
import { mockedAws } from '../../fakes/aws.ts';
import { wrapCloud } from '../../support/drills.ts';
import { simulation, type Simulation } from '../../support/environment.ts';
import { simulationEngine } from '../../../sim/engine.ts';

const CLUSTER = 'my-cluster';
const INSTANCE_ID = 'i-0123456789abcdef0';
const PROVIDER_ID = `aws:///ap-northeast-2a/${INSTANCE_ID}`;
const TAGGED = 'karpenter.k8s.aws/tagged';
const NAME = 'Name';
const NODECLAIM = 'karpenter.sh/nodeclaim';
const EKS_CLUSTER_NAME = 'eks:eks-cluster-name';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

interface Env {
  readonly sim: Simulation;
  readonly aws: ReturnType<typeof mockedAws>;
  readonly controller: Controller;
  /** The one instance EC2 knows (undefined once deleted). */
  instance: Ec2Instance | undefined;
}

const tagMap = (tags: Tag[] | undefined): Record<string, string> =>
  Object.fromEntries((tags ?? []).map((t) => [t.Key!, t.Value!]));

async function start(): Promise<Env> {
  sim = await simulation({ only: ['none'] });
  const aws = mockedAws('ap-northeast-2');
  const env: Env = {
    sim,
    aws,
    instance: {
      InstanceId: INSTANCE_ID,
      InstanceType: 'm5.large',
      State: { Name: 'running', Code: 16 },
      Placement: { AvailabilityZone: 'ap-northeast-2a' },
      Tags: [
        { Key: `kubernetes.io/cluster/${CLUSTER}`, Value: 'owned' },
        { Key: 'karpenter.sh/nodepool', Value: 'default' },
        { Key: EKS_CLUSTER_NAME, Value: CLUSTER },
      ],
    },
    controller: undefined as unknown as Controller,
  };
  aws.ec2
    .on(DescribeInstancesCommand)
    .callsFake(() => ({ Reservations: env.instance ? [{ Instances: [env.instance] }] : [] }));
  aws.ec2.on(CreateTagsCommand).callsFake((input: { Resources: string[]; Tags: Tag[] }) => {
    if (env.instance && input.Resources.includes(INSTANCE_ID))
      env.instance = {
        ...env.instance,
        Tags: Object.entries({ ...tagMap(env.instance.Tags), ...tagMap(input.Tags) }).map(([Key, Value]) => ({
          Key,
          Value,
        })),
      };
    return {};
  });
  const tagging = awsInstanceTagging({
    instances: new Instances({ ec2: aws.ports.ec2, clusterName: CLUSTER }),
    clusterName: CLUSTER,
  });
  const op = sim.operator;
  const options = resolveOptions([], {}, { 'cluster-name': CLUSTER });
  (env as { controller: Controller }).controller = newNodeClaimTagging(
    {
      clock: op.clock,
      kube: op.kube,
      cluster: op.cluster,
      events: op.events,
      metrics: op.metrics,
      activity: op.activity,
      log: op.log,
      options,
      engineOptions: engineOptionsOf(options),
      cloudProvider: { ...wrapCloud(op.cloudProvider, {}), instanceTagging: tagging },
      engine: simulationEngine().cluster('tagging-test'),
    },
    tagging,
  );
  return env;
}

/** A NodeClaim whose status names the instance (and a node, unless nodeName is null). */
async function nodeClaim(
  env: Env,
  o: { providerID?: string; nodeName?: string | null; finalizers?: string[] } = {},
): Promise<string> {
  const name = 'default-abcde';
  await env.sim.kube.create('NodeClaim', {
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': 'default' },
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
    },
    spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
  });
  await env.sim.kube.patchStatus('NodeClaim', name, {
    providerID: o.providerID ?? PROVIDER_ID,
    ...(o.nodeName === null ? {} : { nodeName: o.nodeName ?? 'default' }),
  });
  await env.sim.settle();
  return name;
}

async function reconcile(env: Env, name: string): Promise<ReconcileResult> {
  const r = await env.controller.reconcile(name);
  await env.sim.settle();
  return r;
}

const annotations = (env: Env, name: string) =>
  env.sim.cluster.api.find('nodeclaims.karpenter.sh', undefined, name)?.metadata.annotations ?? {};

describe('TaggingController', () => {
  it("shouldn't tag instances without a Node", async () => {
    const env = await start();
    const name = await nodeClaim(env, { nodeName: null });
    await reconcile(env, name);
    expect(annotations(env, name)).not.toHaveProperty(TAGGED);
    expect(tagMap(env.instance!.Tags)).not.toHaveProperty(NAME);
    expect(env.aws.ec2).not.toHaveReceivedCommand(CreateTagsCommand);
  });

  it("shouldn't tag nodeclaim with a malformed provderID", async () => {
    const env = await start();
    const name = await nodeClaim(env, { providerID: 'Bad providerID' });
    await reconcile(env, name);
    expect(annotations(env, name)).not.toHaveProperty(TAGGED);
    expect(env.aws.ec2).not.toHaveReceivedCommand(CreateTagsCommand);
  });

  it('should gracefully handle missing NodeClaim', async () => {
    const env = await start();
    const name = await nodeClaim(env);
    await env.sim.kube.delete('NodeClaim', name);
    await env.sim.settle();
    expect(await reconcile(env, name)).toEqual({ kind: 'done' });
    expect(env.aws.ec2).not.toHaveReceivedCommand(CreateTagsCommand);
  });

  it('should gracefully handle missing instance', async () => {
    const env = await start();
    const name = await nodeClaim(env);
    env.instance = undefined;
    expect(await reconcile(env, name)).toEqual({ kind: 'done' });
    expect(annotations(env, name)).not.toHaveProperty(TAGGED);
  });

  it("shouldn't tag nodeclaim with deletion timestamp set", async () => {
    const env = await start();
    const name = await nodeClaim(env, { finalizers: ['testing/finalizer'] });
    await env.sim.kube.delete('NodeClaim', name);
    await env.sim.settle();
    await reconcile(env, name);
    expect(annotations(env, name)).not.toHaveProperty(TAGGED);
    expect(tagMap(env.instance!.Tags)).not.toHaveProperty(NAME);
  });

  describe('should tag taggable instances', () => {
    const entries: Array<[string, string[]]> = [
      ['with the karpenter.sh/nodeclaim tag', [NAME, EKS_CLUSTER_NAME]],
      ['with the eks:eks-cluster-name tag', [NAME, NODECLAIM]],
      ['with the Name tag', [NODECLAIM, EKS_CLUSTER_NAME]],
      ['with the karpenter.sh/nodeclaim and eks:eks-cluster-name tags', [NAME]],
      ['with the Name and eks:eks-cluster-name tags', [NODECLAIM]],
      ['with the karpenter.sh/nodeclaim and Name tags', [EKS_CLUSTER_NAME]],
      ['with nothing to tag', [NODECLAIM, EKS_CLUSTER_NAME, NAME]],
    ];
    for (const [title, custom] of entries) {
      it(title, async () => {
        const env = await start();
        env.instance = {
          ...env.instance!,
          Tags: Object.entries({
            ...tagMap(env.instance!.Tags),
            ...Object.fromEntries(custom.map((k) => [k, 'custom-tag'])),
          }).map(([Key, Value]) => ({ Key, Value })),
        };
        const name = await nodeClaim(env);
        await reconcile(env, name);
        expect(annotations(env, name)).toMatchObject({
          [TAGGED]: 'true',
          'compatibility.karpenter.k8s.aws/cluster-name-tagged': 'true',
        });
        const want: Record<string, string> = { [NAME]: 'default', [NODECLAIM]: name, [EKS_CLUSTER_NAME]: CLUSTER };
        for (const k of custom) want[k] = 'custom-tag';
        expect(tagMap(env.instance!.Tags)).toMatchObject(want);
        // Only the keys the instance lacked are written, so a user's own value is never overwritten.
        const missing = [NAME, NODECLAIM, EKS_CLUSTER_NAME].filter(
          (k) => !custom.includes(k) && !(k === EKS_CLUSTER_NAME),
        );
        if (missing.length)
          expect(env.aws.ec2).toHaveReceivedCommandWith(CreateTagsCommand, {
            Resources: [INSTANCE_ID],
            Tags: missing.map((k) => ({ Key: k, Value: want[k]! })),
          });
        else expect(env.aws.ec2).not.toHaveReceivedCommand(CreateTagsCommand);
      });
    }
  });

  it('writes tags at most once a second, and leaves an annotated NodeClaim alone', async () => {
    const env = await start();
    const name = await nodeClaim(env);
    expect(await reconcile(env, name)).toEqual({ kind: 'done' });
    expect(await reconcile(env, name)).toEqual({ kind: 'done' });
    expect(env.aws.ec2).toHaveReceivedCommandTimes(CreateTagsCommand, 1);
    expect(env.aws.ec2).toHaveReceivedCommandTimes(DescribeInstancesCommand, 1);
    // Another NodeClaim right after: it waits out the second.
    await env.sim.kube.patch('NodeClaim', name, { metadata: { annotations: { [TAGGED]: null } } });
    await env.sim.settle();
    env.instance = { ...env.instance!, Tags: (env.instance!.Tags ?? []).filter((t) => t.Key !== NAME) };
    const r = await reconcile(env, name);
    expect(r.kind).toBe('requeueAfter');
    expect(r.kind === 'requeueAfter' && r.ms).toBeGreaterThan(0);
    await env.sim.clock.advance(1_000);
    expect(await reconcile(env, name)).toEqual({ kind: 'done' });
    expect(env.aws.ec2).toHaveReceivedCommandTimes(CreateTagsCommand, 2);
  });
});
