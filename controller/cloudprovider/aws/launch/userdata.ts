// User data per AMI family, merged with spec.userData (docs/karpenter/aws-provider.md §4.5; Karpenter
// amifamily/bootstrap/*): AL2023 gets a nodeadm NodeConfig in a MIME archive (ours first, then the user's
// parts), AL2 a MIME archive of the user's script then bootstrap.sh, Bottlerocket the user's TOML with our
// settings written over it, Windows a PowerShell block with the user's lines before Start-EKSBootstrap.ps1,
// and Custom the user's data unchanged. Output is plain text; the launch template base64-encodes it.
import { stringify, parse } from 'yaml';
import {
  ARCH_LABEL,
  INSTANCE_TYPE_LABEL,
  OS_LABEL,
  REGION_LABEL,
  ZONE_LABEL,
  type AMIFamily,
  type KubeletConfiguration,
  type Taint,
} from '../../../../engine/index.ts';
import { isMime, NODE_CONFIG, parseMime, serializeMime, SHELL_SCRIPT, type MimePart } from './mime.ts';
import { parseToml, serializeToml, setValue, tomlString, tomlStringArray } from './toml.ts';

export interface BootstrapOptions {
  readonly clusterName: string;
  readonly clusterEndpoint: string;
  /** Base64 PEM. */
  readonly caBundle?: string;
  readonly clusterCIDR?: string;
  readonly kubelet?: KubeletConfiguration;
  /** The launch group's pod count (kubelet maxPods). */
  readonly maxPods?: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly customUserData?: string;
}

// kubelet's --node-labels refuses kubernetes.io / k8s.io keys outside this set (NodeRestriction).
const KUBELET_ALLOWED = new Set([ARCH_LABEL, OS_LABEL, INSTANCE_TYPE_LABEL, REGION_LABEL, ZONE_LABEL]);
export function kubeletLabels(labels: Readonly<Record<string, string>>): Array<[string, string]> {
  return Object.entries(labels)
    .filter(([k]) => {
      const domain = k.includes('/') ? k.slice(0, k.indexOf('/')) : '';
      const restricted = /(^|\.)(kubernetes\.io|k8s\.io)$/.test(domain);
      return (
        !restricted ||
        KUBELET_ALLOWED.has(k) ||
        domain.endsWith('kubelet.kubernetes.io') ||
        domain.endsWith('node.kubernetes.io')
      );
    })
    .sort(([a], [b]) => a.localeCompare(b));
}

const joinMap = (m: Readonly<Record<string, string>>, sep: string): string =>
  Object.keys(m)
    .sort()
    .map((k) => `${k}${sep}${m[k]}`)
    .join(',');
const taintString = (t: Taint): string => `${t.key}=${t.value ?? ''}:${t.effect}`;

/** kubelet flags for bootstrap.sh and Start-EKSBootstrap.ps1. */
function kubeletExtraArgs(o: BootstrapOptions): string[] {
  const k = o.kubelet ?? {};
  const args: string[] = [];
  const labels = kubeletLabels(o.labels);
  if (labels.length) args.push(`--node-labels="${labels.map(([a, b]) => `${a}=${b}`).join(',')}"`);
  if (o.taints.length) args.push(`--register-with-taints="${o.taints.map(taintString).join(',')}"`);
  const maxPods = k.maxPods ?? o.maxPods;
  if (maxPods !== undefined) args.push(`--max-pods=${maxPods}`);
  if (k.podsPerCore !== undefined) args.push(`--pods-per-core=${k.podsPerCore}`);
  if (k.systemReserved) args.push(`--system-reserved="${joinMap(k.systemReserved, '=')}"`);
  if (k.kubeReserved) args.push(`--kube-reserved="${joinMap(k.kubeReserved, '=')}"`);
  if (k.evictionHard) args.push(`--eviction-hard="${joinMap(k.evictionHard, '<')}"`);
  if (k.evictionSoft) args.push(`--eviction-soft="${joinMap(k.evictionSoft, '<')}"`);
  if (k.evictionSoftGracePeriod) args.push(`--eviction-soft-grace-period="${joinMap(k.evictionSoftGracePeriod, '=')}"`);
  if (k.evictionMaxPodGracePeriod !== undefined)
    args.push(`--eviction-max-pod-grace-period=${k.evictionMaxPodGracePeriod}`);
  if (k.imageGCHighThresholdPercent !== undefined)
    args.push(`--image-gc-high-threshold=${k.imageGCHighThresholdPercent}`);
  if (k.imageGCLowThresholdPercent !== undefined) args.push(`--image-gc-low-threshold=${k.imageGCLowThresholdPercent}`);
  if (k.cpuCFSQuota !== undefined) args.push(`--cpu-cfs-quota=${k.cpuCFSQuota}`);
  return args;
}

function nodeConfig(o: BootstrapOptions): string {
  const { clusterDNS, maxPods, ...rest } = o.kubelet ?? {};
  const config: Record<string, unknown> = { ...rest };
  const pods = maxPods ?? o.maxPods;
  if (pods !== undefined) config.maxPods = pods;
  if (clusterDNS?.length) config.clusterDNS = [...clusterDNS];
  if (o.taints.length)
    config.registerWithTaints = o.taints.map((t) => ({
      key: t.key,
      ...(t.value ? { value: t.value } : {}),
      effect: t.effect,
    }));
  const labels = kubeletLabels(o.labels);
  const doc = {
    apiVersion: 'node.eks.aws/v1alpha1',
    kind: 'NodeConfig',
    spec: {
      cluster: {
        name: o.clusterName,
        apiServerEndpoint: o.clusterEndpoint,
        ...(o.caBundle ? { certificateAuthority: o.caBundle } : {}),
        ...(o.clusterCIDR ? { cidr: o.clusterCIDR } : {}),
      },
      kubelet: {
        ...(Object.keys(config).length ? { config } : {}),
        ...(labels.length ? { flags: [`--node-labels=${labels.map(([a, b]) => `${a}=${b}`).join(',')}`] } : {}),
      },
    },
  };
  return `# Karpenter Generated NodeConfig\n${stringify(doc)}`;
}

function isYamlMap(text: string): boolean {
  try {
    const v: unknown = parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

function al2023(o: BootstrapOptions): string {
  const custom = o.customUserData ?? '';
  const user: MimePart[] = !custom
    ? []
    : isMime(custom)
      ? parseMime(custom)
      : [{ contentType: isYamlMap(custom) ? NODE_CONFIG : SHELL_SCRIPT, content: custom }];
  return serializeMime([{ contentType: NODE_CONFIG, content: nodeConfig(o) }, ...user]);
}

function al2(o: BootstrapOptions): string {
  const k = o.kubelet ?? {};
  const lines = [
    '#!/bin/bash -xe',
    'exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1',
    `/etc/eks/bootstrap.sh '${o.clusterName}' --apiserver-endpoint '${o.clusterEndpoint}'${o.caBundle ? ` --b64-cluster-ca '${o.caBundle}'` : ''}`,
  ];
  if (k.clusterDNS?.[0]) lines.push(`--dns-cluster-ip '${k.clusterDNS[0]}'`);
  if (k.maxPods !== undefined || o.maxPods !== undefined) lines.push('--use-max-pods false');
  const extra = kubeletExtraArgs(o);
  if (extra.length) lines.push(`--kubelet-extra-args '${extra.join(' ')}'`);
  const script = lines.slice(0, 2).join('\n') + '\n' + lines.slice(2).join(' \\\n');
  const custom = o.customUserData ?? '';
  const user: MimePart[] = !custom
    ? []
    : isMime(custom)
      ? parseMime(custom)
      : [{ contentType: SHELL_SCRIPT, content: custom }];
  return serializeMime([...user, { contentType: SHELL_SCRIPT, content: script }]);
}

function bottlerocket(o: BootstrapOptions): string {
  const doc = parseToml(o.customUserData ?? '');
  const k8s = 'settings.kubernetes';
  setValue(doc, k8s, 'cluster-name', tomlString(o.clusterName));
  setValue(doc, k8s, 'api-server', tomlString(o.clusterEndpoint));
  if (o.caBundle) setValue(doc, k8s, 'cluster-certificate', tomlString(o.caBundle));
  const k = o.kubelet ?? {};
  const maxPods = k.maxPods ?? o.maxPods;
  if (maxPods !== undefined) setValue(doc, k8s, 'max-pods', String(maxPods));
  if (k.clusterDNS?.[0]) setValue(doc, k8s, 'cluster-dns-ip', tomlString(k.clusterDNS[0]));
  if (doc.get('settings.autoscaling')?.has('should-wait'))
    setValue(doc, 'settings.autoscaling', 'should-wait', 'false');
  for (const [key, v] of kubeletLabels(o.labels)) setValue(doc, `${k8s}.node-labels`, key, tomlString(v));
  for (const [table, m] of [
    ['kube-reserved', k.kubeReserved],
    ['system-reserved', k.systemReserved],
    ['eviction-hard', k.evictionHard],
  ] as const) {
    for (const [key, v] of Object.entries(m ?? {})) setValue(doc, `${k8s}.${table}`, key, tomlString(v));
  }
  doc.set(`${k8s}.node-taints`, new Map()); // Karpenter's taints replace the user's
  const taints = new Map<string, string[]>();
  for (const t of o.taints) taints.set(t.key, [...(taints.get(t.key) ?? []), `${t.value ?? ''}:${t.effect}`]);
  for (const [key, vs] of taints) setValue(doc, `${k8s}.node-taints`, key, tomlStringArray(vs));
  return serializeToml(doc);
}

function windows(o: BootstrapOptions): string {
  const lines = ['<powershell>'];
  if (o.customUserData) lines.push(o.customUserData.replace(/\n$/, ''));
  lines.push('[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"');
  let call = `& $EKSBootstrapScriptFile -EKSClusterName '${o.clusterName}' -APIServerEndpoint '${o.clusterEndpoint}'`;
  if (o.caBundle) call += ` -Base64ClusterCA '${o.caBundle}'`;
  const extra = kubeletExtraArgs(o);
  if (extra.length) call += ` -KubeletExtraArgs '${extra.join(' ')}'`;
  if (o.kubelet?.clusterDNS?.[0]) call += ` -DNSClusterIP '${o.kubelet.clusterDNS[0]}'`;
  lines.push(call, '</powershell>');
  return lines.join('\n');
}

export function userData(family: AMIFamily, o: BootstrapOptions): string {
  switch (family) {
    case 'AL2023':
      return al2023(o);
    case 'AL2':
      return al2(o);
    case 'Bottlerocket':
      return bottlerocket(o);
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return windows(o);
    case 'Custom':
      return o.customUserData ?? '';
  }
}
