import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseMime, serializeMime } from './mime.ts';
import { parseToml } from './toml.ts';
import { kubeletLabels, userData, type BootstrapOptions } from './userdata.ts';

const base: BootstrapOptions = {
  clusterName: 'my-cluster',
  clusterEndpoint: 'https://api.example',
  caBundle: 'Q0E=',
  clusterCIDR: '10.100.0.0/16',
  maxPods: 29,
  labels: { 'karpenter.sh/nodepool': 'default', environment: 'production', 'node-role.kubernetes.io/worker': 'x' },
  taints: [
    { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
    { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
  ],
};

describe('user data', () => {
  it('AL2023: a MIME archive whose first part is a nodeadm NodeConfig', () => {
    const parts = parseMime(userData('AL2023', base));
    expect(parts).toHaveLength(1);
    expect(parts[0]!.contentType).toBe('application/node.eks.aws');
    const doc = parse(parts[0]!.content) as {
      apiVersion: string;
      kind: string;
      spec: { cluster: Record<string, string>; kubelet: { config: Record<string, unknown>; flags: string[] } };
    };
    expect(doc.apiVersion).toBe('node.eks.aws/v1alpha1');
    expect(doc.kind).toBe('NodeConfig');
    expect(doc.spec.cluster).toEqual({
      name: 'my-cluster',
      apiServerEndpoint: 'https://api.example',
      certificateAuthority: 'Q0E=',
      cidr: '10.100.0.0/16',
    });
    expect(doc.spec.kubelet.config).toEqual({
      maxPods: 29,
      registerWithTaints: [
        { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
        { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
      ],
    });
    expect(doc.spec.kubelet.flags).toEqual(['--node-labels=environment=production,karpenter.sh/nodepool=default']);
  });

  it('AL2023: keeps a shell script after ours, detects a NodeConfig, and splices a MIME archive', () => {
    const shell = parseMime(
      userData('AL2023', { ...base, customUserData: '#!/bin/bash\necho "Karpenter managed node"\n' }),
    );
    expect(shell.map((p) => p.contentType)).toEqual([
      'application/node.eks.aws',
      'text/x-shellscript; charset="us-ascii"',
    ]);
    expect(shell[1]!.content).toBe('#!/bin/bash\necho "Karpenter managed node"');
    const cfg = parseMime(
      userData('AL2023', {
        ...base,
        customUserData: 'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n',
      }),
    );
    expect(cfg[1]!.contentType).toBe('application/node.eks.aws');
    const archive = serializeMime([
      { contentType: 'text/cloud-config', content: '#cloud-config\nruncmd: []' },
      { contentType: 'text/x-shellscript', content: 'echo two' },
    ]);
    expect(parseMime(userData('AL2023', { ...base, customUserData: archive })).map((p) => p.content)).toEqual([
      expect.stringContaining('NodeConfig'),
      '#cloud-config\nruncmd: []',
      'echo two',
    ]);
  });

  it('AL2: the user script first, then bootstrap.sh with the cluster, CA, max pods and kubelet flags', () => {
    const parts = parseMime(
      userData('AL2', {
        ...base,
        kubelet: { clusterDNS: ['10.100.0.10'], systemReserved: { memory: '100Mi', cpu: '100m' } },
        customUserData: 'echo first',
      }),
    );
    expect(parts.map((p) => p.content.split('\n')[0])).toEqual(['echo first', '#!/bin/bash -xe']);
    const script = parts[1]!.content;
    expect(script).toContain(
      "/etc/eks/bootstrap.sh 'my-cluster' --apiserver-endpoint 'https://api.example' --b64-cluster-ca 'Q0E='",
    );
    expect(script).toContain("--dns-cluster-ip '10.100.0.10'");
    expect(script).toContain('--use-max-pods false');
    expect(script).toContain(
      `--kubelet-extra-args '--node-labels="environment=production,karpenter.sh/nodepool=default" --register-with-taints="dedicated=gpu:NoSchedule,karpenter.sh/unregistered=:NoExecute" --max-pods=29 --system-reserved="cpu=100m,memory=100Mi"'`,
    );
  });

  it('Bottlerocket: our settings overwrite the user TOML, other user settings stay, taints are ours alone', () => {
    const custom = [
      '[settings.kubernetes]',
      'cluster-name = "wrong"',
      'image-gc-high-threshold-percent = 85',
      '[settings.kubernetes.node-labels]',
      'team = "a"',
      '"karpenter.sh/nodepool" = "other"',
      '[settings.kubernetes.node-taints]',
      'old = ["x:NoSchedule"]',
      '[settings.autoscaling]',
      'should-wait = true',
      '[settings.host-containers.admin]',
      'enabled = true',
    ].join('\n');
    const doc = parseToml(userData('Bottlerocket', { ...base, customUserData: custom }));
    expect(Object.fromEntries(doc.get('settings.kubernetes')!)).toEqual({
      'cluster-name': '"my-cluster"',
      'image-gc-high-threshold-percent': '85',
      'api-server': '"https://api.example"',
      'cluster-certificate': '"Q0E="',
      'max-pods': '29',
    });
    expect(Object.fromEntries(doc.get('settings.kubernetes.node-labels')!)).toEqual({
      team: '"a"',
      'karpenter.sh/nodepool': '"default"',
      environment: '"production"',
    });
    expect(Object.fromEntries(doc.get('settings.kubernetes.node-taints')!)).toEqual({
      dedicated: '["gpu:NoSchedule"]',
      'karpenter.sh/unregistered': '[":NoExecute"]',
    });
    expect(doc.get('settings.autoscaling')!.get('should-wait')).toBe('false');
    expect(doc.get('settings.host-containers.admin')!.get('enabled')).toBe('true');
  });

  it('Bottlerocket: refuses TOML it cannot merge, naming spec.userData', () => {
    expect(() => userData('Bottlerocket', { ...base, customUserData: '[[settings.x]]\na = 1' })).toThrow(
      /spec\.userData line 1/,
    );
    expect(() => userData('Bottlerocket', { ...base, customUserData: 'a = """\nx\n"""' })).toThrow(/multi-line/);
  });

  it('Windows: the user lines, then Start-EKSBootstrap.ps1 with the cluster and kubelet arguments, in one PowerShell block', () => {
    const ps = userData('Windows2022', { ...base, customUserData: 'Write-Host hi' });
    const lines = ps.split('\n');
    expect(lines[0]).toBe('<powershell>');
    expect(lines[1]).toBe('Write-Host hi');
    expect(lines[2]).toBe('[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"');
    expect(lines[3]).toMatch(
      /^& \$EKSBootstrapScriptFile -EKSClusterName 'my-cluster' -APIServerEndpoint 'https:\/\/api\.example' -Base64ClusterCA 'Q0E=' -KubeletExtraArgs '--node-labels=.* --max-pods=29'$/,
    );
    expect(lines[4]).toBe('</powershell>');
  });

  it('Custom: the user data unchanged', () => {
    expect(userData('Custom', { ...base, customUserData: '#!/bin/sh\nmine' })).toBe('#!/bin/sh\nmine');
  });

  it('passes kubelet only the labels it may set itself', () => {
    expect(
      kubeletLabels({
        'kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/worker': '',
        'node.kubernetes.io/instance-type': 'm5.large',
        'example.com/team': 'a',
        'k8s.io/x': 'y',
      }).map(([k]) => k),
    ).toEqual(['example.com/team', 'kubernetes.io/arch', 'node.kubernetes.io/instance-type']);
  });
});
