import { afterEach, describe, expect, it } from 'vitest';
import { condition, guide, simulation, type Simulation } from '../../../../test/support/simulation.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('nodeclass.status (simulator)', () => {
  it('resolves the guide\'s EC2NodeClass against the simulated subnets, security groups and AMIs', async () => {
    sim = await simulation({ only: ['nodeclass.status'] });
    await sim.apply(guide('guide-07.yaml'));
    const nc = sim.cluster.api.get('ec2nodeclasses.karpenter.k8s.aws', undefined, 'production');
    const status = nc.status as { subnets: Array<{ zone: string }>; securityGroups: unknown[]; amis: Array<{ id: string }>; instanceProfile: string };
    expect(status.subnets.map((s) => s.zone)).toEqual(['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c', 'ap-northeast-2d']);
    expect(status.securityGroups).toHaveLength(1);
    expect(status.amis.map((a) => a.id)).toEqual(['ami-0simal2023amd64', 'ami-0simal2023arm64']);
    expect(status.instanceProfile).toMatch(/^my-cluster_\d+$/);
    for (const t of ['SubnetsReady', 'SecurityGroupsReady', 'AMIsReady', 'InstanceProfileReady', 'ValidationSucceeded', 'Ready']) expect(condition(nc, t)?.status).toBe('True');
  });

  it('is not Ready when no subnet carries the selected tags (the guide\'s troubleshooting case)', async () => {
    sim = await simulation({ only: ['nodeclass.status'] });
    await sim.apply(guide('guide-07.yaml').replace('network-type: private', 'network-type: public'));
    const nc = sim.cluster.api.get('ec2nodeclasses.karpenter.k8s.aws', undefined, 'production');
    expect(condition(nc, 'SubnetsReady')).toMatchObject({ status: 'False', reason: 'SubnetsNotFound' });
    expect(condition(nc, 'Ready')).toMatchObject({ status: 'False', message: 'SubnetsReady not True' });
  });
});
