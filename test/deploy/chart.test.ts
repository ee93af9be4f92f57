// The Helm chart: every template renders (with test/deploy/helm-lite.ts) to valid Kubernetes YAML; every
// settings value reaches the controller as Karpenter's environment variable; the RBAC grants exactly the API
// calls listed in charts/karpenter-ts/rbac-requirements.json, which are exactly the calls the controller's
// code makes (test/deploy/rbac.ts reads its call sites). test/e2e/aws.test.ts checks the requests of a real
// run against the same roles.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { mergeValues, render, type RenderContext } from './helm-lite.ts';
import { calledInCode, chartRules } from './rbac.ts';
import { OPTION_SPECS } from '../../controller/operator/options.ts';

const chartDir = new URL('../../charts/karpenter-ts/', import.meta.url);
const read = (p: string) => readFileSync(new URL(p, chartDir), 'utf8');
const defaults = parse(read('values.yaml')) as Record<string, unknown>;
const chart = parse(read('Chart.yaml')) as { name: string; version: string; appVersion: string };

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [k: string]: unknown;
}

function renderChart(overrides: unknown = { settings: { clusterName: 'my-cluster' } }): K8sObject[] {
  const ctx: RenderContext = {
    Values: mergeValues(defaults, overrides),
    Release: { Name: 'karpenter-ts', Namespace: 'karpenter' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  return readdirSync(new URL('templates/', chartDir))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(render(read(`templates/${f}`), ctx)).flatMap((d) => {
        if (d.errors.length) throw new Error(`${f}: ${d.errors.map((e) => e.message).join('; ')}`);
        const o = d.toJS() as K8sObject | null;
        return o ? [o] : [];
      }),
    );
}

const find = (objs: K8sObject[], kind: string) => objs.find((o) => o.kind === kind)!;

interface Deployment extends K8sObject {
  spec: {
    replicas: number;
    template: {
      spec: {
        priorityClassName: string;
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: { matchExpressions: { key: string; operator: string }[] }[] } } };
        tolerations: { key: string; operator: string }[];
        topologySpreadConstraints: { topologyKey: string }[];
        serviceAccountName: string;
        containers: Array<{ env: Array<{ name: string; value?: string }>; ports: { name: string; containerPort: number }[]; args: string[]; resources: unknown; securityContext: Record<string, unknown> }>;
        securityContext: { runAsNonRoot: boolean };
      };
    };
  };
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface Need {
  group: string;
  resource: string;
  verbs: string[];
  /** Granted ahead of the code that will make the call (with why). */
  ahead?: string;
}

describe('charts/karpenter-ts', () => {
  it('renders every template to Kubernetes objects', () => {
    const objs = renderChart();
    expect(objs.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']);
    for (const o of objs) {
      expect(o.apiVersion, o.kind).toMatch(/^([a-z0-9.]+\/)?v1$/);
      expect(o.metadata.name, o.kind).toBe('karpenter-ts');
      if (!o.kind.startsWith('Cluster')) expect(o.metadata.namespace, o.kind).toBe('karpenter');
    }
  });

  it('refuses to render without settings.clusterName', () => {
    expect(() => renderChart({})).toThrow('settings.clusterName is required');
  });

  it("passes every settings value to the controller under Karpenter's environment variable name", () => {
    const envOf: Record<string, string> = {
      clusterName: 'CLUSTER_NAME',
      clusterEndpoint: 'CLUSTER_ENDPOINT',
      clusterCABundle: 'CLUSTER_CA_BUNDLE',
      clusterCIDR: 'CLUSTER_CIDR',
      interruptionQueue: 'INTERRUPTION_QUEUE',
      batchMaxDuration: 'BATCH_MAX_DURATION',
      batchIdleDuration: 'BATCH_IDLE_DURATION',
      vmMemoryOverheadPercent: 'VM_MEMORY_OVERHEAD_PERCENT',
      reservedENIs: 'RESERVED_ENIS',
      isolatedVPC: 'ISOLATED_VPC',
      eksControlPlane: 'EKS_CONTROL_PLANE',
      preferencePolicy: 'PREFERENCE_POLICY',
      minValuesPolicy: 'MIN_VALUES_POLICY',
      ignoreDRARequests: 'IGNORE_DRA_REQUESTS',
      schedulerConfig: 'SCHEDULER_CONFIG',
      consolidationRepack: 'CONSOLIDATION_REPACK',
      consolidationRepackMinSavings: 'CONSOLIDATION_REPACK_MIN_SAVINGS',
      featureGates: 'FEATURE_GATES',
    };
    expect(Object.keys(defaults.settings as object).sort()).toEqual(Object.keys(envOf).sort());
    const settings = {
      clusterName: 'my-cluster', clusterEndpoint: 'https://x.eks', clusterCABundle: 'Q0E=', clusterCIDR: '172.20.0.0/16', interruptionQueue: 'my-cluster-karpenter',
      batchMaxDuration: '15s', batchIdleDuration: '2s', vmMemoryOverheadPercent: 0.1, reservedENIs: '1', isolatedVPC: true, eksControlPlane: true,
      preferencePolicy: 'Ignore', minValuesPolicy: 'BestEffort', ignoreDRARequests: false, consolidationRepack: 'only', consolidationRepackMinSavings: 0.1,
      schedulerConfig: 'podTopologySpread:\n  defaultConstraints:\n    - maxSkew: 1\n      topologyKey: topology.kubernetes.io/zone\n      whenUnsatisfiable: ScheduleAnyway\n',
      featureGates: { spotToSpotConsolidation: true },
    };
    const d = find(renderChart({ settings, logLevel: 'debug' }), 'Deployment') as Deployment;
    const env = Object.fromEntries(d.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      CLUSTER_NAME: 'my-cluster', CLUSTER_ENDPOINT: 'https://x.eks', CLUSTER_CA_BUNDLE: 'Q0E=', CLUSTER_CIDR: '172.20.0.0/16', INTERRUPTION_QUEUE: 'my-cluster-karpenter',
      BATCH_MAX_DURATION: '15s', BATCH_IDLE_DURATION: '2s', VM_MEMORY_OVERHEAD_PERCENT: '0.1', RESERVED_ENIS: '1', ISOLATED_VPC: 'true',
      EKS_CONTROL_PLANE: 'true', PREFERENCE_POLICY: 'Ignore', MIN_VALUES_POLICY: 'BestEffort', IGNORE_DRA_REQUESTS: 'false',
      CONSOLIDATION_REPACK: 'only', CONSOLIDATION_REPACK_MIN_SAVINGS: '0.1',
      SCHEDULER_CONFIG: 'podTopologySpread:\n  defaultConstraints:\n    - maxSkew: 1\n      topologyKey: topology.kubernetes.io/zone\n      whenUnsatisfiable: ScheduleAnyway\n',
      FEATURE_GATES: 'NodeRepair=false,NodeOverlay=false,ReservedCapacity=true,SpotToSpotConsolidation=true,StaticCapacity=false,CapacityBuffer=false',
      METRICS_PORT: '8080', HEALTH_PROBE_PORT: '8081', LOG_LEVEL: 'debug',
    });
    expect(d.spec.template.spec.containers[0]!.env.find((e) => e.name === 'SYSTEM_NAMESPACE')).toEqual({ name: 'SYSTEM_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
  });

  it("runs two non-root replicas off Karpenter's own nodes, spread by zone, critical, with the guide's resources", () => {
    const d = find(renderChart({ settings: { clusterName: 'c' }, controller: { env: [{ name: 'AWS_REGION', value: 'ap-northeast-2' }] } }), 'Deployment') as Deployment;
    const pod = d.spec.template.spec;
    const c = pod.containers[0]!;
    expect(d.spec.replicas).toBe(2);
    expect(c.args).toEqual(['controller']);
    expect(c.ports).toEqual([{ name: 'http-metrics', containerPort: 8080, protocol: 'TCP' }, { name: 'http', containerPort: 8081, protocol: 'TCP' }]);
    expect(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]!.matchExpressions).toEqual([{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }]);
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.tolerations).toEqual([{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
    expect(pod.topologySpreadConstraints[0]!.topologyKey).toBe('topology.kubernetes.io/zone');
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(c.resources).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
    expect(c.env.at(-1)).toEqual({ name: 'AWS_REGION', value: 'ap-northeast-2' });
    expect(pod.serviceAccountName).toBe('karpenter-ts');
  });

  it('annotates the ServiceAccount for IRSA, and exposes metrics and a PDB', () => {
    const arn = 'arn:aws:iam::123456789012:role/KarpenterControllerRole-my-cluster';
    const objs = renderChart({ settings: { clusterName: 'c' }, serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': arn } } });
    expect(find(objs, 'ServiceAccount').metadata.annotations).toEqual({ 'eks.amazonaws.com/role-arn': arn });
    expect((find(objs, 'Service') as unknown as { spec: { ports: { port: number }[] } }).spec.ports[0]!.port).toBe(8080);
    expect((find(objs, 'PodDisruptionBudget') as unknown as { spec: { maxUnavailable: number } }).spec.maxUnavailable).toBe(1);
  });
});

describe('RBAC', () => {
  const needs = JSON.parse(read('rbac-requirements.json')) as { cluster: Need[]; namespace: Need[] };
  const triples = (rules: Rule[]) => new Set(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}|${res}|${v}`)))));
  const wanted = (list: Need[]) => new Set(list.flatMap((n) => n.verbs.map((v) => `${n.group}|${n.resource}|${v}`)));
  const code = calledInCode();
  const inCode = new Set(code.calls.map((c) => c.triple));

  it('reads every Kubernetes API call site of the controller (none it cannot classify)', () => {
    expect(code.problems).toEqual([]);
    // The reader finds the calls it must: a sample of sites across the controllers.
    for (const t of ['karpenter.sh|nodeclaims|create', '|pods/eviction|create', 'karpenter.k8s.aws|ec2nodeclasses/status|patch', '|events|create', 'policy|poddisruptionbudgets|watch']) expect(inCode, t).toContain(t);
  });

  it('lists exactly the calls the code makes, plus the entries marked as ahead of the code', () => {
    const listed = [...needs.cluster, ...needs.namespace];
    const ahead = wanted(listed.filter((n) => n.ahead));
    const notListed = code.calls.filter((c) => !wanted(listed).has(c.triple)).map((c) => `${c.triple} (${c.where})`);
    expect(notListed).toEqual([]);
    const unused = [...wanted(listed)].filter((t) => !inCode.has(t) && !ahead.has(t));
    expect(unused).toEqual([]);
    // Namespaced grants cover only the release namespace: every call the code makes against a kind in
    // other namespaces (or cluster-scoped) must be in the cluster list.
    // The one exception: the leader Lease, which lives in the controller's own namespace
    // (--leader-election-namespace; the release namespace in the chart).
    const cluster = wanted(needs.cluster);
    const own = wanted(needs.namespace);
    const ownNamespaceOnly = (c: { triple: string; where: string }) => own.has(c.triple) && c.where.startsWith('controller/operator/leaderelection.ts:');
    expect(code.calls.filter((c) => !cluster.has(c.triple) && !ahead.has(c.triple) && !ownNamespaceOnly(c)).map((c) => c.where)).toEqual([]);
  });

  it('the ClusterRole template is plain YAML (no template logic)', () => {
    expect(read('templates/clusterrole.yaml')).not.toContain('{{');
  });

  it('the ClusterRole grants every cluster-scoped call the controller makes, and nothing else', () => {
    const role = parse(read('templates/clusterrole.yaml')) as { rules: Rule[] };
    const granted = triples(role.rules);
    expect([...wanted(needs.cluster)].filter((t) => !granted.has(t))).toEqual([]);
    expect([...granted].filter((t) => !wanted(needs.cluster).has(t))).toEqual([]);
    expect([...granted].some((t) => t.includes('*'))).toBe(false);
    expect([...granted].some((t) => t.includes('|secrets|'))).toBe(false);
    expect(chartRules().clusterRole).toEqual(granted);
  });

  it('the namespaced Role grants leader election in the release namespace, and nothing else', () => {
    const role = renderChart().find((o) => o.kind === 'Role') as unknown as { rules: Rule[] };
    expect([...triples(role.rules)].sort()).toEqual([...wanted(needs.namespace)].sort());
    expect([...chartRules().role].sort()).toEqual([...wanted(needs.namespace)].sort());
  });

  it('the Role lets the controller read and renew only its own Lease; create is the one verb RBAC cannot scope by name', () => {
    const role = renderChart().find((o) => o.kind === 'Role') as unknown as { rules: Array<Rule & { resourceNames?: string[] }> };
    const leaseName = OPTION_SPECS.find((o) => o.flag === 'leader-election-name')!.default;
    const unscoped = role.rules.filter((r) => !r.resourceNames?.length).flatMap((r) => r.verbs);
    expect(unscoped).toEqual(['create']);
    for (const r of role.rules.filter((x) => x.resourceNames?.length)) expect(r.resourceNames).toEqual([leaseName]);
    expect(role.rules.filter((r) => r.resourceNames?.length).flatMap((r) => r.verbs).sort()).toEqual(['get', 'update']);
  });
});
