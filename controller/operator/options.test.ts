import { describe, expect, it } from 'vitest';
import {
  IMPLEMENTED_GATES,
  OptionsError,
  optionsHelp,
  resolveOptions,
  unimplementedGates,
  type FeatureGates,
} from './options.ts';

const problems = (argv: string[], env: Record<string, string> = {}): readonly string[] => {
  try {
    resolveOptions(argv, env);
  } catch (e) {
    expect(e).toBeInstanceOf(OptionsError);
    return (e as OptionsError).problems;
  }
  throw new Error('expected the options to be refused');
};

describe('resolveOptions', () => {
  it("has Karpenter's defaults", () => {
    const o = resolveOptions([], {});
    expect(o).toMatchObject({
      batchMaxDurationMs: 10_000,
      batchIdleDurationMs: 1_000,
      metricsPort: 8080,
      healthProbePort: 8081,
      logLevel: 'info',
      preferencePolicy: 'Respect',
      minValuesPolicy: 'Strict',
      clusterName: '',
      featureGates: {
        spotToSpotConsolidation: false,
        nodeRepair: false,
        reservedCapacity: true,
        nodeOverlay: false,
        staticCapacity: false,
        capacityBuffer: false,
      },
    });
    expect(Object.isFrozen(o)).toBe(true);
    expect(Object.isFrozen(o.featureGates)).toBe(true);
  });

  it('reads the environment, and lets flags win over it', () => {
    const o = resolveOptions(['--batch-idle-duration=2s', '--log-level', 'debug'], {
      BATCH_IDLE_DURATION: '5s',
      BATCH_MAX_DURATION: '30s',
      CLUSTER_NAME: 'prod',
      FEATURE_GATES: 'SpotToSpotConsolidation=true',
      PREFERENCE_POLICY: 'ignore',
    });
    expect(o).toMatchObject({
      batchIdleDurationMs: 2_000,
      batchMaxDurationMs: 30_000,
      logLevel: 'debug',
      clusterName: 'prod',
      preferencePolicy: 'Ignore',
    });
    expect(o.featureGates).toMatchObject({ spotToSpotConsolidation: true, reservedCapacity: true });
  });

  it("elects a leader by default, with Karpenter's lease name and settings names", () => {
    expect(resolveOptions([], {})).toMatchObject({
      disableLeaderElection: false,
      leaderElectionName: 'karpenter-leader-election',
      leaderElectionNamespace: '',
    });
    expect(
      resolveOptions([], {
        DISABLE_LEADER_ELECTION: 'true',
        LEADER_ELECTION_NAME: 'kt',
        LEADER_ELECTION_NAMESPACE: 'karpenter',
      }),
    ).toMatchObject({ disableLeaderElection: true, leaderElectionName: 'kt', leaderElectionNamespace: 'karpenter' });
    // A bare boolean flag means true, as with Go's flag package; an explicit value also works.
    expect(resolveOptions(['--disable-leader-election', '--log-level=warn'], {}).disableLeaderElection).toBe(true);
    expect(
      resolveOptions(['--disable-leader-election', 'false'], { DISABLE_LEADER_ELECTION: 'true' }).disableLeaderElection,
    ).toBe(false);
    expect(problems([], { DISABLE_LEADER_ELECTION: 'yes' })).toEqual([
      'DISABLE_LEADER_ELECTION (--disable-leader-election) must be true or false, got "yes"',
    ]);
    expect(problems(['--leader-election-name=Karpenter_Lease'])).toEqual([
      "--leader-election-name must be a lower-case DNS name (letters, digits, '-' and '.'), got \"Karpenter_Lease\"",
    ]);
    expect(problems(['--leader-election-name='])).toEqual(['--leader-election-name must not be empty']);
  });

  it("ignores DRA requests by default, as Karpenter's IGNORE_DRA_REQUESTS, and passes the option to the engine", async () => {
    expect(resolveOptions([], {}).ignoreDRARequests).toBe(true);
    expect(resolveOptions([], { IGNORE_DRA_REQUESTS: 'false' }).ignoreDRARequests).toBe(false);
    expect(resolveOptions(['--ignore-dra-requests=false'], { IGNORE_DRA_REQUESTS: 'true' }).ignoreDRARequests).toBe(
      false,
    );
    expect(problems([], { IGNORE_DRA_REQUESTS: 'no' })).toEqual([
      'IGNORE_DRA_REQUESTS (--ignore-dra-requests) must be true or false, got "no"',
    ]);
    const { engineOptionsOf } = await import('../main.ts');
    expect(engineOptionsOf(resolveOptions([], { IGNORE_DRA_REQUESTS: 'false' })).ignoreDRARequests).toBe(false);
    expect(engineOptionsOf(resolveOptions([], {})).ignoreDRARequests).toBe(true);
  });

  it("reads the command line as Go's flag package does: one or two dashes, =value or the next word", () => {
    const o = resolveOptions(
      ['-cluster-name', 'a', '--log-level', 'debug', '-batch-idle-duration=2s', '--batch-max-duration=20s'],
      {},
    );
    expect(o).toMatchObject({
      clusterName: 'a',
      logLevel: 'debug',
      batchIdleDurationMs: 2000,
      batchMaxDurationMs: 20_000,
    });
    expect(resolveOptions(['-disable-leader-election', '--cluster-name=b'], {}).disableLeaderElection).toBe(true);
    expect(resolveOptions(['--disable-leader-election=false'], {}).disableLeaderElection).toBe(false);
    expect(resolveOptions(['--disable-leader-election', 'FALSE'], {}).disableLeaderElection).toBe(false);
    // The value of a flag may start with a dash; a later flag wins.
    expect(resolveOptions(['--cluster-name', '-x', '--cluster-name=c'], {}).clusterName).toBe('c');
    expect(resolveOptions(['--cluster-name', '-dash'], {}).clusterName).toBe('-dash');
    expect(problems(['--log-level'])).toEqual(['--log-level needs a value']);
    expect(problems(['--log-level', '--cluster-name=x'])).toEqual(['--log-level needs a value']);
    expect(problems(['-bogus', '--', 'stray'])).toEqual([
      'unknown option --bogus',
      'unexpected argument "stray" (options look like --name=value)',
    ]);
  });

  it('says that the batch max duration must not be shorter than the idle duration', () => {
    expect(problems(['--batch-max-duration=500ms'])).toEqual([
      '--batch-max-duration (500ms) must be >= --batch-idle-duration (1s)',
    ]);
  });

  it('reports every problem at once, naming the flag and where the value came from', () => {
    const p = problems(['--metrics-port=99999', '--bogus=1', 'stray'], {
      LOG_LEVEL: 'loud',
      FEATURE_GATES: 'NodeRepair=maybe,Teleport=true',
      BATCH_IDLE_DURATION: 'soon',
    });
    expect(p).toEqual(
      expect.arrayContaining([
        'unknown option --bogus',
        'unexpected argument "stray" (options look like --name=value)',
        '--metrics-port must be a port number from 0 to 65535, got "99999"',
        'LOG_LEVEL (--log-level) must be one of debug, info, warn, error, got "loud"',
        'FEATURE_GATES (--feature-gates): feature gate NodeRepair must be =true or =false, got "NodeRepair=maybe"',
        expect.stringContaining('FEATURE_GATES (--feature-gates): unknown feature gate "Teleport"'),
        expect.stringContaining('BATCH_IDLE_DURATION (--batch-idle-duration): "soon" is not a valid duration'),
      ]),
    );
    expect(p).toHaveLength(7);
  });

  it('refuses a feature gate the build does not implement instead of accepting and ignoring it', () => {
    const all: FeatureGates = {
      spotToSpotConsolidation: true,
      nodeRepair: true,
      reservedCapacity: true,
      nodeOverlay: true,
      staticCapacity: true,
      capacityBuffer: false,
    };
    expect(
      unimplementedGates(
        all,
        'FEATURE_GATES (--feature-gates)',
        new Set(['spotToSpotConsolidation', 'reservedCapacity']),
      ),
    ).toEqual(
      ['NodeRepair', 'NodeOverlay', 'StaticCapacity'].map(
        (g) =>
          `FEATURE_GATES (--feature-gates): feature gate ${g} is not implemented by this build of karpenter-ts, so turning it on is refused rather than ignored (set ${g}=false or leave it out)`,
      ),
    );
    // Every gate this build turns on resolves; a gate that is off is never a problem.
    const on = Object.fromEntries([...IMPLEMENTED_GATES].map((g) => [g, true]));
    expect(
      unimplementedGates(
        { ...all, ...Object.fromEntries(Object.keys(all).map((k) => [k, false])), ...on } as FeatureGates,
        'x',
      ),
    ).toEqual([]);
    const names: Record<string, string> = {
      spotToSpotConsolidation: 'SpotToSpotConsolidation',
      nodeRepair: 'NodeRepair',
      reservedCapacity: 'ReservedCapacity',
      nodeOverlay: 'NodeOverlay',
      staticCapacity: 'StaticCapacity',
      capacityBuffer: 'CapacityBuffer',
    };
    for (const [key, name] of Object.entries(names)) {
      if (IMPLEMENTED_GATES.has(key as keyof FeatureGates))
        expect(resolveOptions([], { FEATURE_GATES: `${name}=true` }).featureGates[key as keyof FeatureGates]).toBe(
          true,
        );
      else
        expect(problems([`--feature-gates=${name}=true`])).toEqual([
          expect.stringContaining(`--feature-gates: feature gate ${name} is not implemented`),
        ]);
    }
  });

  it("reads Karpenter's SCHEDULER_CONFIG into the engine's default topology spread, and names a bad value's field", async () => {
    expect(resolveOptions([], {}).schedulerConfig).toBeUndefined();
    const yaml =
      'podTopologySpread:\n  defaultConstraints:\n    - maxSkew: 1\n      topologyKey: topology.kubernetes.io/zone\n      whenUnsatisfiable: ScheduleAnyway\n';
    const o = resolveOptions([], { SCHEDULER_CONFIG: yaml });
    const { engineOptionsOf } = await import('../main.ts');
    expect(engineOptionsOf(o).defaultTopologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
    ]);
    expect(engineOptionsOf(resolveOptions([], {})).defaultTopologySpreadConstraints).toBeUndefined();
    expect(problems(['--scheduler-config', yaml.replace('maxSkew: 1', 'maxSkew: 0')])).toEqual([
      '--scheduler-config: podTopologySpread.defaultConstraints[0].maxSkew must be greater than 0',
    ]);
    expect(problems([], { SCHEDULER_CONFIG: 'colour: blue' })).toEqual([
      'SCHEDULER_CONFIG (--scheduler-config): colour: unknown field (allowed: podTopologySpread)',
    ]);
  });

  it("reads the AWS provider's settings under Karpenter's names, with its defaults", () => {
    expect(resolveOptions([], {})).toMatchObject({
      clusterEndpoint: '',
      clusterCABundle: '',
      vmMemoryOverheadPercent: 0.075,
      reservedENIs: 0,
      isolatedVPC: false,
      eksControlPlane: false,
      interruptionQueue: '',
    });
    const o = resolveOptions(['--isolated-vpc', 'true', '--reserved-enis=1'], {
      CLUSTER_ENDPOINT: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
      CLUSTER_CA_BUNDLE: 'Q0E=',
      VM_MEMORY_OVERHEAD_PERCENT: '0.1',
      RESERVED_ENIS: '3',
      ISOLATED_VPC: 'false',
      EKS_CONTROL_PLANE: 'True',
      INTERRUPTION_QUEUE: 'my-cluster',
    });
    expect(o).toMatchObject({
      clusterEndpoint: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
      clusterCABundle: 'Q0E=',
      vmMemoryOverheadPercent: 0.1,
      reservedENIs: 1,
      isolatedVPC: true,
      eksControlPlane: true,
      interruptionQueue: 'my-cluster',
    });
  });

  it('refuses AWS settings out of range, naming the variable', () => {
    expect(resolveOptions([], { CLUSTER_CIDR: '172.20.0.0/16' }).clusterCIDR).toBe('172.20.0.0/16');
    expect(
      problems([], {
        CLUSTER_CIDR: '172.20.0.0',
        VM_MEMORY_OVERHEAD_PERCENT: '1.5',
        RESERVED_ENIS: '-1',
        ISOLATED_VPC: 'yes',
      }),
    ).toEqual([
      'CLUSTER_CIDR (--cluster-cidr) must be a CIDR such as 10.100.0.0/16, got "172.20.0.0"',
      'VM_MEMORY_OVERHEAD_PERCENT (--vm-memory-overhead-percent) must be a number from 0 up to (not including) 1, got "1.5"',
      'RESERVED_ENIS (--reserved-enis) must be a whole number >= 0, got "-1"',
      'ISOLATED_VPC (--isolated-vpc) must be true or false, got "yes"',
    ]);
  });

  it('refuses the same port for metrics and health probes', () => {
    expect(problems(['--metrics-port=9000', '--health-probe-port=9000'])).toEqual([
      '--metrics-port and --health-probe-port must differ (both 9000)',
    ]);
  });

  it('documents every option with its environment variable', () => {
    const help = optionsHelp();
    for (const env of [
      'CLUSTER_NAME',
      'BATCH_MAX_DURATION',
      'BATCH_IDLE_DURATION',
      'METRICS_PORT',
      'HEALTH_PROBE_PORT',
      'LOG_LEVEL',
      'FEATURE_GATES',
      'PREFERENCE_POLICY',
      'MIN_VALUES_POLICY',
      'CLUSTER_ENDPOINT',
      'CLUSTER_CA_BUNDLE',
      'CLUSTER_CIDR',
      'VM_MEMORY_OVERHEAD_PERCENT',
      'RESERVED_ENIS',
      'ISOLATED_VPC',
      'EKS_CONTROL_PLANE',
      'INTERRUPTION_QUEUE',
      'CONSOLIDATION_REPACK',
      'CONSOLIDATION_REPACK_MIN_SAVINGS',
      'HEAP_GROWING_PERCENT',
      'MALLOC_TRIM_INTERVAL',
    ])
      expect(help).toContain(env);
  });

  it("keeps the heaps within 20% of their live data unless told otherwise (0: V8's own factor)", () => {
    expect(resolveOptions([], {}).heapGrowingPercent).toBe(20);
    expect(resolveOptions([], { HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(resolveOptions(['--heap-growing-percent=50'], {}).heapGrowingPercent).toBe(50);
    expect(resolveOptions([], { HEAP_GROWING_PERCENT: '100' }).heapGrowingPercent).toBe(100);
    expect(problems([], { HEAP_GROWING_PERCENT: '-5' })).toEqual([
      'HEAP_GROWING_PERCENT (--heap-growing-percent) must be a whole number >= 0, got "-5"',
    ]);
  });

  it("hands glibc's free pages back every 10s unless told otherwise (0s: never)", () => {
    expect(resolveOptions([], {}).mallocTrimIntervalMs).toBe(10_000);
    expect(resolveOptions([], { MALLOC_TRIM_INTERVAL: '0s' }).mallocTrimIntervalMs).toBe(0);
    expect(resolveOptions([], { MALLOC_TRIM_INTERVAL: '0' }).mallocTrimIntervalMs).toBe(0);
    expect(resolveOptions(['--malloc-trim-interval=1m30s'], {}).mallocTrimIntervalMs).toBe(90_000);
    expect(resolveOptions([], { MALLOC_TRIM_INTERVAL: '250ms' }).mallocTrimIntervalMs).toBe(250);
    expect(problems([], { MALLOC_TRIM_INTERVAL: '-1s' })).toEqual([
      'MALLOC_TRIM_INTERVAL (--malloc-trim-interval) must be a positive duration, or 0s for never, got "-1s"',
    ]);
    expect(problems([], { MALLOC_TRIM_INTERVAL: 'often' })).toHaveLength(1);
    expect(problems([], { MALLOC_TRIM_INTERVAL: 'often' })[0]).toMatch(
      /^MALLOC_TRIM_INTERVAL \(--malloc-trim-interval\)/,
    );
  });

  it("leaves the engine workers' heap limit to Node unless told otherwise", () => {
    expect(resolveOptions([], {}).engineWorkerHeapMiB).toBe(0);
    expect(resolveOptions(['--engine-worker-heap-mib=1024'], {}).engineWorkerHeapMiB).toBe(1024);
    expect(resolveOptions([], { ENGINE_WORKER_HEAP_MIB: '512' }).engineWorkerHeapMiB).toBe(512);
    expect(problems([], { ENGINE_WORKER_HEAP_MIB: '-1' })).toEqual([
      'ENGINE_WORKER_HEAP_MIB (--engine-worker-heap-mib) must be a whole number >= 0, got "-1"',
    ]);
  });

  it("runs the disruption engine's global repack after Karpenter's methods unless told otherwise", () => {
    expect(resolveOptions([], {}).consolidationRepack).toBe('after');
    expect(resolveOptions(['--consolidation-repack=only'], {}).consolidationRepack).toBe('only');
    expect(resolveOptions([], { CONSOLIDATION_REPACK: 'off' }).consolidationRepack).toBe('off');
    expect(problems(['--consolidation-repack=sometimes'])).toEqual([
      '--consolidation-repack must be one of after, only, off, got "sometimes"',
    ]);
  });

  it("takes the repack's minimum saving as a share of the replaced nodes' price", () => {
    expect(resolveOptions([], {}).consolidationRepackMinSavings).toBe(0.05);
    expect(resolveOptions(['--consolidation-repack-min-savings=0'], {}).consolidationRepackMinSavings).toBe(0);
    expect(resolveOptions([], { CONSOLIDATION_REPACK_MIN_SAVINGS: '0.2' }).consolidationRepackMinSavings).toBe(0.2);
    expect(problems([], { CONSOLIDATION_REPACK_MIN_SAVINGS: '5%' })).toEqual([
      'CONSOLIDATION_REPACK_MIN_SAVINGS (--consolidation-repack-min-savings) must be a number from 0 up to (not including) 1, got "5%"',
    ]);
  });
});
