// deploy/iam: the controller policy allows every AWS action the provider's ports call, with no wildcard
// actions; the node role carries the managed policies Karpenter's nodes need.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IAM_ACTIONS } from '../../controller/cloudprovider/aws/iam-actions.ts';
import { mockedAws } from '../fakes/aws.ts';

const read = (name: string) => readFileSync(new URL(`../../deploy/iam/${name}`, import.meta.url), 'utf8');
const PLACEHOLDERS = new Set([
  'AWS_PARTITION',
  'AWS_REGION',
  'AWS_ACCOUNT_ID',
  'CLUSTER_NAME',
  'OIDC_ENDPOINT',
  'KARPENTER_NAMESPACE',
  'INTERRUPTION_QUEUE',
]);

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
}

describe('deploy/iam', () => {
  const policy = JSON.parse(read('controller-policy.json')) as { Statement: Statement[] };
  const allowed = new Set(policy.Statement.filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action].flat()));

  it('uses only the documented ${...} placeholders (for envsubst)', () => {
    for (const f of ['controller-policy.json', 'node-role-policies.json', 'controller-trust-policy.json']) {
      const used = [...read(f).matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1]!);
      expect(
        used.filter((p) => !PLACEHOLDERS.has(p)),
        f,
      ).toEqual([]);
    }
  });

  it('lists the IAM actions of every port method', () => {
    const ports = mockedAws().ports;
    for (const [port, methods] of Object.entries(IAM_ACTIONS)) {
      expect(Object.keys(methods).sort(), port).toEqual(Object.keys(ports[port as keyof typeof ports]).sort());
    }
  });

  it('allows every action the provider calls', () => {
    const needed = new Set(Object.values(IAM_ACTIONS).flatMap((m) => Object.values(m).flat()));
    expect([...needed].filter((a) => !allowed.has(a))).toEqual([]);
  });

  it('grants no wildcard actions and no write action on every resource', () => {
    expect([...allowed].filter((a) => a.includes('*'))).toEqual([]);
    const unscoped = policy.Statement.filter((s) => [s.Resource].flat().includes('*')).flatMap((s) =>
      [s.Action].flat(),
    );
    expect(unscoped.filter((a) => !/^(ec2:Describe|pricing:GetProducts)/.test(a))).toEqual([]);
  });

  it('gives the node role the four managed policies and an EC2 trust', () => {
    const node = JSON.parse(read('node-role-policies.json')) as {
      managedPolicyArns: string[];
      assumeRolePolicyDocument: { Statement: { Principal: { Service: string } }[] };
    };
    expect(node.managedPolicyArns.map((a) => a.split('/').pop()).sort()).toEqual([
      'AmazonEC2ContainerRegistryPullOnly',
      'AmazonEKSWorkerNodePolicy',
      'AmazonEKS_CNI_Policy',
      'AmazonSSMManagedInstanceCore',
    ]);
    expect(node.assumeRolePolicyDocument.Statement[0]!.Principal.Service).toBe('ec2.amazonaws.com');
  });
});
