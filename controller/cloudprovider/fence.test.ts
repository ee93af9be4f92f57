// The fence decorator: launches and terminations only while the fence is open; reads always.
import { describe, expect, it } from 'vitest';
import { Fence, FencedError } from '../operator/fence.ts';
import { withFence } from './fence.ts';
import type { CloudProvider, LaunchRequest } from './types.ts';

function recorder(): { cp: CloudProvider; calls: string[] } {
  const calls: string[] = [];
  const cp: CloudProvider = {
    name: 'rec',
    create: async (req) => {
      calls.push(`create ${req.nodeClaimName}`);
      return {
        providerID: 'p',
        instanceType: 't',
        zone: 'z',
        capacityType: 'spot',
        capacity: {},
        allocatable: {},
        labels: {},
        annotations: {},
        launchTime: 0,
        state: 'pending',
      };
    },
    delete: async (id) => void calls.push(`delete ${id}`),
    get: async (id) => {
      calls.push(`get ${id}`);
      throw new Error('not found');
    },
    list: async () => (calls.push('list'), []),
    getInstanceTypes: async () => (calls.push('types'), []),
    isDrifted: async () => undefined,
    repairPolicies: () => [],
  };
  return { cp, calls };
}

const req = { nodeClaimName: 'a' } as LaunchRequest;

describe('withFence', () => {
  it('refuses create and delete while shut, naming what and why, and lets reads through', async () => {
    const { cp, calls } = recorder();
    const fence = new Fence('this replica is not the leader');
    const fenced = withFence(cp, fence);
    await expect(fenced.create(req)).rejects.toThrow(
      new FencedError('launching nodeclaim a refused: this replica is not the leader'),
    );
    await expect(fenced.delete('i-1')).rejects.toBeInstanceOf(FencedError);
    await fenced.list();
    await fenced.getInstanceTypes({} as never);
    expect(calls).toEqual(['list', 'types']);
    fence.open();
    await fenced.create(req);
    await fenced.delete('i-1');
    expect(calls).toEqual(['list', 'types', 'create a', 'delete i-1']);
    fence.shut('the controller was killed');
    await expect(fenced.create(req)).rejects.toThrow(/killed/);
  });
});
