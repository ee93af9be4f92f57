// The Helm chart, rendered by the real helm (test/deploy/helm.ts finds it; these tests skip where there is
// none): every key of Karpenter's chart values is a key here with the same meaning, each checked by rendering
// with it set; every settings value reaches the controller as Karpenter's environment variable, which the
// controller's option parser accepts. The RBAC grants exactly the API calls listed in
// charts/karpenter-ts/rbac-requirements.json, which are exactly the calls the controller's code makes
// (test/deploy/rbac.ts reads its call sites); test/e2e/aws.test.ts checks a real run's requests against them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { helmBinary, helmTemplate, type TemplateOptions } from './helm.ts';
import { calledInCode, chartRules } from './rbac.ts';
import { KARPENTER_CHART_KEYS } from './karpenter-chart-keys.ts';
import { OPTION_SPECS, resolveOptions } from '../../controller/operator/options.ts';

const chartDir = fileURLToPath(new URL('../../charts/karpenter-ts/', import.meta.url));
const read = (p: string) => readFileSync(chartDir + p, 'utf8');
const defaults = parse(read('values.yaml')) as Record<string, unknown>;
const helm = helmBinary();

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const BASE = { settings: { clusterName: 'my-cluster' } };

function deepMerge(a: unknown, b: unknown): unknown {
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) || Array.isArray(b))
    return b === undefined ? a : b;
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = deepMerge(out[k], v);
  return out;
}

function renderChart(values: unknown = {}, options?: TemplateOptions): Obj[] {
  const text = helmTemplate(chartDir, deepMerge(BASE, values), options);
  return parseAllDocuments(text).flatMap((d) => {
    if (d.errors.length) throw new Error(d.errors.map((e) => e.message).join('; '));
    const o = d.toJS() as Obj | null;
    return o ? [o] : [];
  });
}

const one = (objs: Obj[], kind: string): Obj => {
  const found = objs.filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`${found.length} ${kind} objects`);
  return found[0]!;
};
const pod = (objs: Obj[]): Obj => one(objs, 'Deployment').spec.template.spec;
const controller = (objs: Obj[]): Obj => pod(objs).containers[0];
const envOf = (objs: Obj[]): Record<string, string> =>
  Object.fromEntries(
    controller(objs)
      .env.filter((e: Obj) => 'value' in e)
      .map((e: Obj) => [e.name, e.value]),
  );
const named = (objs: Obj[]): Obj[] => objs.filter((o) => o.kind !== 'PodDisruptionBudget');
const SELECTOR = { 'app.kubernetes.io/name': 'karpenter-ts', 'app.kubernetes.io/instance': 'karpenter-ts' };

interface Case {
  readonly values: unknown;
  readonly options?: TemplateOptions;
  readonly check: (objs: Obj[]) => void;
}

/** A settings.* key: the value set, and the environment variable and text the controller gets. */
const SETTINGS: Record<string, [unknown, string, string]> = {
  clusterName: ['prod', 'CLUSTER_NAME', 'prod'],
  clusterEndpoint: [
    'https://ABC.gr7.us-west-2.eks.amazonaws.com',
    'CLUSTER_ENDPOINT',
    'https://ABC.gr7.us-west-2.eks.amazonaws.com',
  ],
  clusterCABundle: ['Q0E=', 'CLUSTER_CA_BUNDLE', 'Q0E='],
  clusterCIDR: ['172.20.0.0/16', 'CLUSTER_CIDR', '172.20.0.0/16'],
  interruptionQueue: ['{{ .Release.Name }}-queue', 'INTERRUPTION_QUEUE', 'karpenter-ts-queue'],
  batchMaxDuration: ['15s', 'BATCH_MAX_DURATION', '15s'],
  batchIdleDuration: ['2s', 'BATCH_IDLE_DURATION', '2s'],
  vmMemoryOverheadPercent: [0.1, 'VM_MEMORY_OVERHEAD_PERCENT', '0.1'],
  reservedENIs: ['1', 'RESERVED_ENIS', '1'],
  isolatedVPC: [true, 'ISOLATED_VPC', 'true'],
  eksControlPlane: [true, 'EKS_CONTROL_PLANE', 'true'],
  enableZonalShift: [true, 'ENABLE_ZONAL_SHIFT', 'true'],
  preferencePolicy: ['Ignore', 'PREFERENCE_POLICY', 'Ignore'],
  minValuesPolicy: ['BestEffort', 'MIN_VALUES_POLICY', 'BestEffort'],
  schedulerConfig: [
    'podTopologySpread:\n  defaultConstraints:\n    - maxSkew: 1\n      topologyKey: topology.kubernetes.io/zone\n      whenUnsatisfiable: ScheduleAnyway\n',
    'SCHEDULER_CONFIG',
    'podTopologySpread:\n  defaultConstraints:\n    - maxSkew: 1\n      topologyKey: topology.kubernetes.io/zone\n      whenUnsatisfiable: ScheduleAnyway\n',
  ],
  ignoreDRARequests: [false, 'IGNORE_DRA_REQUESTS', 'false'],
  disableClusterStateObservability: [true, 'DISABLE_CLUSTER_STATE_OBSERVABILITY', 'true'],
  disableDryRun: [true, 'DISABLE_DRY_RUN', 'true'],
  amiRefreshInterval: ['5m', 'AMI_REFRESH_INTERVAL', '5m'],
  subnetRefreshInterval: ['10m', 'SUBNET_REFRESH_INTERVAL', '10m'],
  consolidationRepack: ['only', 'CONSOLIDATION_REPACK', 'only'],
  consolidationRepackMinSavings: [0.1, 'CONSOLIDATION_REPACK_MIN_SAVINGS', '0.1'],
};
const GATES: Record<string, string> = {
  nodeRepair: 'NodeRepair',
  nodeOverlay: 'NodeOverlay',
  reservedCapacity: 'ReservedCapacity',
  spotToSpotConsolidation: 'SpotToSpotConsolidation',
  staticCapacity: 'StaticCapacity',
  capacityBuffer: 'CapacityBuffer',
};

function settingCases(): Record<string, Case> {
  const cases: Record<string, Case> = {};
  for (const [key, [value, env, text]] of Object.entries(SETTINGS)) {
    cases[`settings.${key}`] = {
      values: { settings: { [key]: value } },
      check: (objs) => expect(envOf(objs)[env]).toBe(text),
    };
  }
  for (const [key, gate] of Object.entries(GATES)) {
    const on = !(defaults.settings as Obj).featureGates[key];
    cases[`settings.featureGates.${key}`] = {
      values: { settings: { featureGates: { [key]: on } } },
      check: (objs) => expect(envOf(objs).FEATURE_GATES!.split(',')).toContain(`${gate}=${on}`),
    };
  }
  cases['settings.awsFeatureGates.nodeClassCEL'] = {
    values: { settings: { awsFeatureGates: { nodeClassCEL: true } } },
    check: (objs) => expect(envOf(objs).AWS_FEATURE_GATES).toBe('NodeClassCEL=true'),
  };
  return cases;
}

const monitor = { serviceMonitor: { enabled: true } };
const withMonitoring: TemplateOptions = { apiVersions: ['monitoring.coreos.com/v1'] };

function metadataCases(): Record<string, Case> {
  return {
    nameOverride: {
      values: { nameOverride: 'autoscaler' },
      check: (objs) => {
        for (const o of named(objs)) expect(o.metadata.name, o.kind).toBe('karpenter-ts-autoscaler');
        expect(one(objs, 'Deployment').spec.selector.matchLabels['app.kubernetes.io/name']).toBe('autoscaler');
        expect(one(objs, 'Service').spec.selector['app.kubernetes.io/name']).toBe('autoscaler');
      },
    },
    fullnameOverride: {
      values: { fullnameOverride: 'kts' },
      check: (objs) => {
        for (const o of objs) expect(o.metadata.name, o.kind).toBe('kts');
        expect(one(objs, 'ClusterRoleBinding').roleRef.name).toBe('kts');
        expect(one(objs, 'ClusterRoleBinding').subjects[0].name).toBe('kts');
        expect(pod(objs).serviceAccountName).toBe('kts');
      },
    },
    additionalLabels: {
      values: { additionalLabels: { team: 'platform' }, ...monitor },
      options: withMonitoring,
      check: (objs) => {
        for (const o of objs) expect(o.metadata.labels.team, o.kind).toBe('platform');
        expect(one(objs, 'Deployment').spec.selector.matchLabels).toEqual(SELECTOR);
      },
    },
    additionalAnnotations: {
      values: { additionalAnnotations: { owner: 'sre' }, ...monitor },
      options: withMonitoring,
      check: (objs) => {
        for (const o of objs) expect(o.metadata.annotations?.owner, o.kind).toBe('sre');
        expect(one(objs, 'Deployment').spec.template.metadata.annotations).toBeUndefined();
      },
    },
    'service.annotations': {
      values: { service: { annotations: { 'prometheus.io/scrape': 'true' } }, additionalAnnotations: { owner: 'sre' } },
      check: (objs) =>
        expect(one(objs, 'Service').metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true', owner: 'sre' }),
    },
    'serviceAccount.create': {
      values: { serviceAccount: { create: false } },
      check: (objs) => {
        expect(objs.some((o) => o.kind === 'ServiceAccount')).toBe(false);
        expect(pod(objs).serviceAccountName).toBe('default');
      },
    },
    'serviceAccount.name': {
      values: { serviceAccount: { name: 'karpenter' } },
      check: (objs) => {
        expect(one(objs, 'ServiceAccount').metadata.name).toBe('karpenter');
        expect(pod(objs).serviceAccountName).toBe('karpenter');
        for (const b of ['ClusterRoleBinding', 'RoleBinding'])
          expect(one(objs, b).subjects).toEqual([
            { kind: 'ServiceAccount', name: 'karpenter', namespace: 'karpenter' },
          ]);
      },
    },
    'serviceAccount.annotations': {
      values: {
        serviceAccount: {
          annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/KarpenterControllerRole-c' },
        },
      },
      check: (objs) =>
        expect(one(objs, 'ServiceAccount').metadata.annotations).toEqual({
          'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/KarpenterControllerRole-c',
        }),
    },
    additionalClusterRoleRules: {
      values: { additionalClusterRoleRules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] },
      check: (objs) =>
        expect(one(objs, 'ClusterRole').rules.at(-1)).toEqual({
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get'],
        }),
    },
  };
}

function serviceMonitorCases(): Record<string, Case> {
  const endpoint = (objs: Obj[]) => one(objs, 'ServiceMonitor').spec.endpoints[0];
  const relabel = [{ sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' }];
  return {
    'serviceMonitor.enabled': {
      values: monitor,
      options: withMonitoring,
      check: (objs) => {
        const sm = one(objs, 'ServiceMonitor');
        expect(sm.spec.selector.matchLabels).toEqual(SELECTOR);
        expect(sm.spec.namespaceSelector).toEqual({ matchNames: ['karpenter'] });
        expect(endpoint(objs)).toEqual({ port: 'http-metrics', path: '/metrics' });
        expect(sm.spec.sampleLimit).toBeUndefined();
        // Off by default, and never rendered where the Prometheus Operator's API is not served.
        expect(renderChart({}, withMonitoring).some((o) => o.kind === 'ServiceMonitor')).toBe(false);
        expect(renderChart(monitor).some((o) => o.kind === 'ServiceMonitor')).toBe(false);
      },
    },
    'serviceMonitor.additionalLabels': {
      values: { serviceMonitor: { enabled: true, additionalLabels: { release: 'prometheus' } } },
      options: withMonitoring,
      check: (objs) => expect(one(objs, 'ServiceMonitor').metadata.labels.release).toBe('prometheus'),
    },
    'serviceMonitor.relabelings': {
      values: { serviceMonitor: { enabled: true, relabelings: relabel } },
      options: withMonitoring,
      check: (objs) => expect(endpoint(objs).relabelings).toEqual(relabel),
    },
    'serviceMonitor.metricRelabelings': {
      values: {
        serviceMonitor: {
          enabled: true,
          metricRelabelings: [{ action: 'drop', regex: 'go_.*', sourceLabels: ['__name__'] }],
        },
      },
      options: withMonitoring,
      check: (objs) =>
        expect(endpoint(objs).metricRelabelings).toEqual([
          { action: 'drop', regex: 'go_.*', sourceLabels: ['__name__'] },
        ]),
    },
    'serviceMonitor.endpointConfig': {
      values: { serviceMonitor: { enabled: true, endpointConfig: { interval: '15s', scrapeTimeout: '10s' } } },
      options: withMonitoring,
      check: (objs) =>
        expect(endpoint(objs)).toEqual({
          port: 'http-metrics',
          path: '/metrics',
          interval: '15s',
          scrapeTimeout: '10s',
        }),
    },
    'serviceMonitor.sampleLimit': {
      values: { serviceMonitor: { enabled: true, sampleLimit: 5000 } },
      options: withMonitoring,
      check: (objs) => expect(one(objs, 'ServiceMonitor').spec.sampleLimit).toBe(5000),
    },
  };
}

function podCases(): Record<string, Case> {
  const spec = (objs: Obj[]) => one(objs, 'Deployment').spec;
  const volume = {
    name: 'aws-iam-token',
    projected: { sources: [{ serviceAccountToken: { audience: 'sts.amazonaws.com', path: 'token' } }] },
  };
  return {
    imagePullPolicy: {
      values: { imagePullPolicy: 'Always' },
      check: (objs) => expect(controller(objs).imagePullPolicy).toBe('Always'),
    },
    imagePullSecrets: {
      values: { imagePullSecrets: [{ name: 'regcred' }] },
      check: (objs) => expect(pod(objs).imagePullSecrets).toEqual([{ name: 'regcred' }]),
    },
    replicas: { values: { replicas: 3 }, check: (objs) => expect(spec(objs).replicas).toBe(3) },
    revisionHistoryLimit: {
      values: { revisionHistoryLimit: 3 },
      check: (objs) => expect(spec(objs).revisionHistoryLimit).toBe(3),
    },
    strategy: {
      values: { strategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } },
      check: (objs) => expect(spec(objs).strategy).toEqual({ rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } }),
    },
    podLabels: {
      values: { podLabels: { team: 'platform' } },
      check: (objs) => {
        expect(spec(objs).template.metadata.labels).toEqual({ ...SELECTOR, team: 'platform' });
        expect(spec(objs).selector.matchLabels).toEqual(SELECTOR);
      },
    },
    podAnnotations: {
      values: { podAnnotations: { 'ad.datadoghq.com/x': 'y' } },
      check: (objs) => expect(spec(objs).template.metadata.annotations).toEqual({ 'ad.datadoghq.com/x': 'y' }),
    },
    'podDisruptionBudget.name': {
      values: { podDisruptionBudget: { name: 'karpenter' } },
      check: (objs) => expect(one(objs, 'PodDisruptionBudget').metadata.name).toBe('karpenter'),
    },
    'podDisruptionBudget.maxUnavailable': {
      values: { podDisruptionBudget: { maxUnavailable: 0 } },
      check: (objs) =>
        expect(one(objs, 'PodDisruptionBudget').spec).toEqual({
          maxUnavailable: 0,
          selector: { matchLabels: SELECTOR },
        }),
    },
    podSecurityContext: {
      values: { podSecurityContext: { fsGroup: 1000 } },
      check: (objs) =>
        expect(pod(objs).securityContext).toEqual({ fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } }),
    },
    priorityClassName: {
      values: { priorityClassName: 'high' },
      check: (objs) => expect(pod(objs).priorityClassName).toBe('high'),
    },
    terminationGracePeriodSeconds: {
      values: { terminationGracePeriodSeconds: 120 },
      check: (objs) => expect(pod(objs).terminationGracePeriodSeconds).toBe(120),
    },
    hostNetwork: { values: { hostNetwork: true }, check: (objs) => expect(pod(objs).hostNetwork).toBe(true) },
    schedulerName: {
      values: { schedulerName: 'my-scheduler' },
      check: (objs) => expect(pod(objs).schedulerName).toBe('my-scheduler'),
    },
    dnsPolicy: { values: { dnsPolicy: 'Default' }, check: (objs) => expect(pod(objs).dnsPolicy).toBe('Default') },
    dnsConfig: {
      values: { dnsConfig: { options: [{ name: 'ndots', value: '1' }] } },
      check: (objs) => expect(pod(objs).dnsConfig).toEqual({ options: [{ name: 'ndots', value: '1' }] }),
    },
    initContainers: {
      values: { initContainers: [{ name: 'wait', image: 'busybox', command: ['true'] }] },
      check: (objs) =>
        expect(pod(objs).initContainers).toEqual([{ name: 'wait', image: 'busybox', command: ['true'] }]),
    },
    nodeSelector: {
      values: { nodeSelector: { 'node-role': 'system' } },
      check: (objs) => expect(pod(objs).nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', 'node-role': 'system' }),
    },
    affinity: {
      values: {
        affinity: {
          podAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 50, podAffinityTerm: { topologyKey: 'topology.kubernetes.io/zone' } },
              {
                weight: 10,
                podAffinityTerm: {
                  topologyKey: 'kubernetes.io/hostname',
                  labelSelector: { matchLabels: { app: 'x' } },
                },
              },
            ],
          },
        },
      },
      check: (objs) => {
        const a = pod(objs).affinity;
        expect(
          a.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions,
        ).toEqual([{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }]);
        // A term naming no labelSelector selects the controller's own pods; one that names one keeps it.
        expect(a.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toEqual([
          { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: SELECTOR } },
        ]);
        expect(a.podAffinity.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
          {
            weight: 50,
            podAffinityTerm: { topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: SELECTOR } },
          },
          {
            weight: 10,
            podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'x' } } },
          },
        ]);
      },
    },
    topologySpreadConstraints: {
      values: {
        topologySpreadConstraints: [
          { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
        ],
      },
      check: (objs) => {
        expect(pod(objs).topologySpreadConstraints).toEqual([
          {
            maxSkew: 2,
            topologyKey: 'kubernetes.io/hostname',
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: SELECTOR },
          },
        ]);
        // The default: one replica per zone at most one apart, strictly, as Karpenter's chart.
        expect(pod(renderChart()).topologySpreadConstraints).toEqual([
          {
            maxSkew: 1,
            topologyKey: 'topology.kubernetes.io/zone',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: SELECTOR },
          },
        ]);
      },
    },
    tolerations: {
      values: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' }] },
      check: (objs) =>
        expect(pod(objs).tolerations).toEqual([
          { key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' },
        ]),
    },
    extraVolumes: {
      values: { extraVolumes: [volume] },
      check: (objs) => expect(pod(objs).volumes).toEqual([{ name: 'tmp', emptyDir: {} }, volume]),
    },
  };
}

function controllerCases(): Record<string, Case> {
  const mount = {
    name: 'aws-iam-token',
    mountPath: '/var/run/secrets/eks.amazonaws.com/serviceaccount',
    readOnly: true,
  };
  const sidecar = { name: 'proxy', image: 'envoy:v1' };
  return {
    'controller.containerName': {
      values: { controller: { containerName: 'karpenter-controller' } },
      check: (objs) => expect(controller(objs).name).toBe('karpenter-controller'),
    },
    'controller.image.repository': {
      values: { controller: { image: { repository: '123456789012.dkr.ecr.us-west-2.amazonaws.com/karpenter-ts' } } },
      check: (objs) =>
        expect(controller(objs).image).toBe('123456789012.dkr.ecr.us-west-2.amazonaws.com/karpenter-ts:0.1.0'),
    },
    'controller.image.tag': {
      values: { controller: { image: { tag: '0.2.0' } } },
      check: (objs) => expect(controller(objs).image).toBe('karpenter-ts:0.2.0'),
    },
    'controller.image.digest': {
      values: { controller: { image: { digest: 'sha256:abc' } } },
      check: (objs) => expect(controller(objs).image).toBe('karpenter-ts:0.1.0@sha256:abc'),
    },
    'controller.env': {
      values: { controller: { env: [{ name: 'AWS_REGION', value: 'eu-west-1' }] } },
      check: (objs) => expect(controller(objs).env.at(-1)).toEqual({ name: 'AWS_REGION', value: 'eu-west-1' }),
    },
    'controller.envFrom': {
      values: { controller: { envFrom: [{ configMapRef: { name: 'karpenter-settings' } }] } },
      check: (objs) => expect(controller(objs).envFrom).toEqual([{ configMapRef: { name: 'karpenter-settings' } }]),
    },
    'controller.securityContext.appArmorProfile': {
      values: { controller: { securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } } },
      check: (objs) => expect(controller(objs).securityContext.appArmorProfile).toEqual({ type: 'RuntimeDefault' }),
    },
    'controller.securityContext.seLinuxOptions': {
      values: { controller: { securityContext: { seLinuxOptions: { level: 's0:c123,c456' } } } },
      check: (objs) => expect(controller(objs).securityContext.seLinuxOptions).toEqual({ level: 's0:c123,c456' }),
    },
    'controller.securityContext.seccompProfile': {
      values: { controller: { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } } },
      check: (objs) => expect(controller(objs).securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' }),
    },
    'controller.resources': {
      values: { controller: { resources: { requests: { cpu: '500m' } } } },
      check: (objs) =>
        expect(controller(objs).resources).toEqual({
          requests: { cpu: '500m', memory: '1Gi' },
          limits: { cpu: '1', memory: '1Gi' },
        }),
    },
    'controller.extraVolumeMounts': {
      values: { controller: { extraVolumeMounts: [mount] } },
      check: (objs) => expect(controller(objs).volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }, mount]),
    },
    'controller.sidecarContainer': {
      values: { controller: { sidecarContainer: [sidecar], extraVolumeMounts: [mount] } },
      check: (objs) => expect(pod(objs).containers.slice(1)).toEqual([{ ...sidecar, volumeMounts: [mount] }]),
    },
    'controller.sidecarVolumeMounts': {
      values: {
        controller: { sidecarContainer: [sidecar], sidecarVolumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] },
      },
      check: (objs) => {
        expect(pod(objs).containers[1]).toEqual({ ...sidecar, volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] });
        expect(controller(objs).volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
      },
    },
    'controller.metrics.port': {
      values: { controller: { metrics: { port: 9090 } } },
      check: (objs) => {
        expect(envOf(objs).METRICS_PORT).toBe('9090');
        expect(controller(objs).ports[0]).toEqual({ name: 'http-metrics', containerPort: 9090, protocol: 'TCP' });
        expect(one(objs, 'Service').spec.ports).toEqual([
          { name: 'http-metrics', port: 9090, targetPort: 'http-metrics', protocol: 'TCP' },
        ]);
      },
    },
    'controller.healthProbe.port': {
      values: { controller: { healthProbe: { port: 9091 } } },
      check: (objs) => {
        expect(envOf(objs).HEALTH_PROBE_PORT).toBe('9091');
        expect(controller(objs).ports[1]).toEqual({ name: 'http', containerPort: 9091, protocol: 'TCP' });
      },
    },
    logLevel: { values: { logLevel: 'debug' }, check: (objs) => expect(envOf(objs).LOG_LEVEL).toBe('debug') },
    logOutputPaths: {
      values: { logOutputPaths: ['stdout', '/tmp/karpenter.log'] },
      check: (objs) => expect(envOf(objs).LOG_OUTPUT_PATHS).toBe('stdout,/tmp/karpenter.log'),
    },
    logErrorOutputPaths: {
      values: { logErrorOutputPaths: ['stderr', '/tmp/errors.log'] },
      check: (objs) => expect(envOf(objs).LOG_ERROR_OUTPUT_PATHS).toBe('stderr,/tmp/errors.log'),
    },
  };
}

const CASES: Record<string, Case> = {
  ...metadataCases(),
  ...serviceMonitorCases(),
  ...podCases(),
  ...controllerCases(),
  ...settingCases(),
};

function hasPath(values: unknown, path: string): boolean {
  let v: unknown = values;
  for (const part of path.split('.')) {
    if (!v || typeof v !== 'object' || !(part in v)) return false;
    v = (v as Obj)[part];
  }
  return true;
}

describe("charts/karpenter-ts: Karpenter's chart values", () => {
  it("has every key of Karpenter's chart values, and a rendering check for each", () => {
    expect(KARPENTER_CHART_KEYS.filter((k) => !hasPath(defaults, k))).toEqual([]);
    expect(KARPENTER_CHART_KEYS.filter((k) => !CASES[k])).toEqual([]);
  });

  it('checks every settings key of its own values too', () => {
    const settings = defaults.settings as Obj;
    const keys = [
      ...Object.keys(settings)
        .filter((k) => !k.endsWith('eatureGates'))
        .map((k) => `settings.${k}`),
      ...Object.keys(settings.featureGates).map((k) => `settings.featureGates.${k}`),
    ];
    expect(keys.filter((k) => !CASES[k])).toEqual([]);
  });

  describe.skipIf(!helm)('helm template with each key set', () => {
    it.each(Object.keys(CASES))('%s', (key) => {
      const c = CASES[key]!;
      c.check(renderChart(c.values, c.options));
    });
  });
});

describe.skipIf(!helm)('charts/karpenter-ts: helm template', () => {
  it('renders every template to Kubernetes objects named after the release', () => {
    const objs = renderChart();
    expect(objs.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
    ]);
    for (const o of objs) {
      expect(o.metadata.name, o.kind).toBe('karpenter-ts');
      if (!o.kind.startsWith('Cluster')) expect(o.metadata.namespace, o.kind).toBe('karpenter');
      expect(o.metadata.labels, o.kind).toMatchObject({
        ...SELECTOR,
        'helm.sh/chart': 'karpenter-ts-0.1.0',
        'app.kubernetes.io/managed-by': 'Helm',
        'app.kubernetes.io/version': '0.1.0',
      });
    }
    const other = renderChart({}, { release: 'prod', namespace: 'kube-system' });
    for (const o of named(other)) expect(o.metadata.name, o.kind).toBe('prod-karpenter-ts');
    expect(one(other, 'Deployment').spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'karpenter-ts',
      'app.kubernetes.io/instance': 'prod',
    });
  });

  it('refuses to render without settings.clusterName', () => {
    expect(() => helmTemplate(chartDir, {})).toThrow(/settings.clusterName is required/);
  });

  it("runs two non-root replicas off Karpenter's own nodes, critical, with the guide's resources", () => {
    const objs = renderChart();
    const c = controller(objs);
    expect(one(objs, 'Deployment').spec.replicas).toBe(2);
    expect(c.args).toEqual(['controller']);
    expect(c.image).toBe('karpenter-ts:0.1.0');
    expect(pod(objs).priorityClassName).toBe('system-cluster-critical');
    expect(pod(objs).tolerations).toEqual([{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
    expect(c.securityContext).toMatchObject({
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 65532,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.resources).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
    expect(c.env[0]).toEqual({
      name: 'SYSTEM_NAMESPACE',
      valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
    });
    // The container's CPU request in millicores, as Karpenter's chart passes it: the lifecycle and termination
    // controllers' reconciles at once grow with it (controller/operator/reconciles.ts).
    expect(c.env[1]).toEqual({
      name: 'CPU_REQUESTS',
      valueFrom: { resourceFieldRef: { containerName: 'controller', divisor: '1m', resource: 'requests.cpu' } },
    });
  });

  it("sets only environment variables the controller knows, and the controller accepts the chart's defaults and every value set above", () => {
    const known = new Set(OPTION_SPECS.map((s) => s.env));
    const everySetting = {
      settings: Object.fromEntries(Object.entries(SETTINGS).map(([k, [value]]) => [k, value])),
      logOutputPaths: ['stdout', '/tmp/k.log'],
    };
    for (const env of [envOf(renderChart()), envOf(renderChart(everySetting))]) {
      expect(Object.keys(env).filter((name) => !known.has(name))).toEqual([]);
      // Gates this build does not implement are refused on purpose: they stay at their defaults here.
      expect(() => resolveOptions([], env)).not.toThrow();
    }
  });
});

describe('RBAC', () => {
  const needs = JSON.parse(read('rbac-requirements.json')) as { cluster: Need[]; namespace: Need[] };
  const triples = (rules: Rule[]) =>
    new Set(
      rules.flatMap((r) =>
        r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}|${res}|${v}`))),
      ),
    );
  const wanted = (list: Need[]) => new Set(list.flatMap((n) => n.verbs.map((v) => `${n.group}|${n.resource}|${v}`)));
  const code = calledInCode();
  const inCode = new Set(code.calls.map((c) => c.triple));

  it('reads every Kubernetes API call site of the controller (none it cannot classify)', () => {
    expect(code.problems).toEqual([]);
    // The reader finds the calls it must: a sample of sites across the controllers.
    for (const t of [
      'karpenter.sh|nodeclaims|create',
      '|pods/eviction|create',
      'karpenter.k8s.aws|ec2nodeclasses/status|patch',
      '|events|create',
      'policy|poddisruptionbudgets|watch',
    ])
      expect(inCode, t).toContain(t);
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
    const ownNamespaceOnly = (c: { triple: string; where: string }) =>
      own.has(c.triple) && c.where.startsWith('controller/operator/leaderelection.ts:');
    expect(
      code.calls
        .filter((c) => !cluster.has(c.triple) && !ahead.has(c.triple) && !ownNamespaceOnly(c))
        .map((c) => c.where),
    ).toEqual([]);
  });

  it("the ClusterRole's rules are plain YAML (template logic only in metadata and the appended additionalClusterRoleRules)", () => {
    const rules = read('templates/clusterrole.yaml')
      .split(/^rules:$/m)[1]!
      .split('\n');
    expect(rules.filter((l) => l.includes('{{'))).toEqual([
      '  {{- with .Values.additionalClusterRoleRules }}',
      '  {{- toYaml . | nindent 2 }}',
      '  {{- end }}',
    ]);
  });

  it('the ClusterRole grants every cluster-scoped call the controller makes, and nothing else', () => {
    const granted = chartRules().clusterRole;
    expect([...wanted(needs.cluster)].filter((t) => !granted.has(t))).toEqual([]);
    expect([...granted].filter((t) => !wanted(needs.cluster).has(t))).toEqual([]);
    expect([...granted].some((t) => t.includes('*'))).toBe(false);
    expect([...granted].some((t) => t.includes('|secrets|'))).toBe(false);
  });

  it.skipIf(!helm)('helm renders the same rules as the templates say', () => {
    const objs = renderChart();
    expect(triples(one(objs, 'ClusterRole').rules)).toEqual(chartRules().clusterRole);
    expect(triples(one(objs, 'Role').rules)).toEqual(chartRules().role);
  });

  it('the namespaced Role grants leader election in the release namespace, and nothing else', () => {
    expect([...chartRules().role].sort()).toEqual([...wanted(needs.namespace)].sort());
  });

  it('the Role lets the controller read and renew only its own Lease; create is the one verb RBAC cannot scope by name', () => {
    const text = read('templates/role.yaml').split(/^---$/m)[0]!;
    const role = parse(
      text
        .split('\n')
        .filter((l) => !/^\s*\{\{.*\}\}\s*$/.test(l))
        .join('\n')
        .replace(/\{\{[^}]*\}\}/g, 'x'),
    ) as { rules: Array<Rule & { resourceNames?: string[] }> };
    const leaseName = OPTION_SPECS.find((o) => o.flag === 'leader-election-name')!.default;
    const unscoped = role.rules.filter((r) => !r.resourceNames?.length).flatMap((r) => r.verbs);
    expect(unscoped).toEqual(['create']);
    for (const r of role.rules.filter((x) => x.resourceNames?.length)) expect(r.resourceNames).toEqual([leaseName]);
    expect(
      role.rules
        .filter((r) => r.resourceNames?.length)
        .flatMap((r) => r.verbs)
        .sort(),
    ).toEqual(['get', 'update']);
  });
});

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
