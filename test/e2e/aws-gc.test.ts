// Garbage collection through the AWS provider, with the SDK answered by the fake account: the provider
// lists this cluster's instances by the tags every launch carries (eks:eks-cluster-name, karpenter.sh/nodepool,
// karpenter.k8s.aws/ec2nodeclass), and an instance no NodeClaim records is terminated once it is 30 s old
// at a pass. Another cluster's instances and instances Karpenter did not launch are never listed, so never
// touched, and the provider would refuse to terminate them anyway (aws/instance.test.ts).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

import { CreateFleetCommand, DescribeInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { GC_PERIOD_MS } from '../../controller/controllers/nodeclaim/garbagecollection/reconcile.ts';
import { awsSimulation, type AwsSimulation } from '../support/aws-simulation.ts';
import { deployment, guide } from '../support/environment.ts';

let sim: AwsSimulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const podsRunning = (s: AwsSimulation, app: string) =>
  s.cluster.store
    .list('pods', { namespace: 'default' })
    .filter((p) => p.metadata.labels?.['app'] === app && (p.status as { phase?: string }).phase === 'Running').length;

describe('garbage collection on AWS', () => {
  it("terminates only this cluster's Karpenter instances that no NodeClaim records, once 30 s old", async () => {
    sim = await awsSimulation();
    const s = sim;
    await s.apply(guide('guide-03.yaml'));
    await s.apply(guide('guide-05.yaml'));
    await s.apply(deployment('web', 1));
    await s.clock.advanceUntil(() => podsRunning(s, 'web') === 1, 180_000, 'web running');
    const [recorded] = [...s.account.instances.keys()];
    // What a launch tags an instance with: Karpenter's set, the class's spec.tags plus these four. Every
    // launch of a NodePool carries the same tags, so identical launches can share one CreateFleet.
    const fleet = s.account.ec2.commandCalls(CreateFleetCommand)[0]!.args[0].input;
    const launchTags = Object.fromEntries(
      (fleet.TagSpecifications?.find((t) => t.ResourceType === 'instance')?.Tags ?? []).map((t) => [t.Key!, t.Value!]),
    );
    expect(launchTags).toEqual({
      Environment: 'production',
      ManagedBy: 'karpenter',
      Team: 'platform',
      'kubernetes.io/cluster/my-cluster': 'owned',
      'karpenter.sh/nodepool': 'spot-diverse',
      'eks:eks-cluster-name': 'my-cluster',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
    });
    // karpenter.sh/nodeclaim and Name come once the node registered (nodeclaim.tagging), as in Karpenter.
    const [claim] = s.cluster.store.list('nodeclaims.karpenter.sh');
    expect(s.account.tagsOf(recorded!)).toMatchObject({
      ...launchTags,
      'karpenter.sh/nodeclaim': claim!.metadata.name,
      Name: (claim!.status as { nodeName: string }).nodeName,
    });
    const nextPass = s.operator.runtime.queue('nodeclaim.garbagecollection')!.pending()[0]!.at;
    const other = { ...launchTags, 'kubernetes.io/cluster/other': 'owned', 'eks:eks-cluster-name': 'other' };
    delete (other as Record<string, string>)['kubernetes.io/cluster/my-cluster'];
    s.account.addInstance('i-0rphan', launchTags, nextPass - 60_000);
    s.account.addInstance('i-0young', launchTags, nextPass - 10_000);
    s.account.addInstance('i-0ther', other, nextPass - 60_000);
    s.account.addInstance('i-0bastion', { Name: 'bastion', 'eks:eks-cluster-name': 'my-cluster' }, nextPass - 60_000);

    await s.clock.advance(nextPass - s.clock.now() + 1_000);
    const terminated = () =>
      s.account.ec2.commandCalls(TerminateInstancesCommand).flatMap((c) => c.args[0].input.InstanceIds ?? []);
    expect(terminated()).toEqual(['i-0rphan']);
    const lists = s.account.ec2
      .commandCalls(DescribeInstancesCommand)
      .map((c) => c.args[0].input)
      .filter((i) => !i.InstanceIds);
    expect(lists.at(-1)!.Filters).toEqual(
      expect.arrayContaining([
        { Name: 'tag:eks:eks-cluster-name', Values: ['my-cluster'] },
        { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
        { Name: 'tag-key', Values: ['karpenter.k8s.aws/ec2nodeclass'] },
      ]),
    );

    // The young one is an orphan too, at the next pass; the others never are.
    await s.clock.advance(GC_PERIOD_MS);
    expect(terminated()).toEqual(['i-0rphan', 'i-0young']);
    expect(s.account.instances.get(recorded!)!.State?.Name).toBe('running');
    expect(s.account.instances.get('i-0ther')!.State?.Name).toBe('running');
    expect(s.account.instances.get('i-0bastion')!.State?.Name).toBe('running');
    expect(podsRunning(s, 'web')).toBe(1);
  });
});
