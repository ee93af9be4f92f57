// Every event reason this build publishes, with Karpenter's type and text for it (facts from
// kubernetes-sigs/karpenter pkg/events/reason.go and the events.go files of its controllers, and
// aws/karpenter-provider-aws pkg/controllers/interruption/events and nodeclass/events.go, v1.14.1), or marked
// as this build's own. One simulated run that provisions, fails to schedule, consolidates, drains, is
// interrupted and is blocked checks each event it sees against the table; a scan of the code checks that
// every reason the code publishes is in the table.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  nodes,
  running,
  scale,
  simulation,
  type Simulation,
} from '../support/environment.ts';

interface Text {
  readonly type: 'Normal' | 'Warning';
  /** Karpenter's message; a RegExp where it carries values. */
  readonly message: RegExp;
  /** Not Karpenter's: this build's own event (why). */
  readonly own?: string;
}

const exact = (s: string): RegExp => new RegExp(`^${s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
const REASON_TITLE = '[A-Z][A-Za-z]*';

const EVENT_TEXTS: Readonly<Record<string, Text>> = {
  // provisioning/scheduling/events.go
  Nominated: { type: 'Normal', message: /^Pod should schedule on: (nodeclaim\/\S+(, node\/\S+)?|node\/\S+)$/ },
  FailedScheduling: { type: 'Warning', message: /^Failed to schedule pod, \S.*$/ },
  NoCompatibleInstanceTypes: {
    type: 'Warning',
    message:
      /^NodePool requirements filtered out all compatible available instance types( due to minValues incompatibility)?$/,
  },
  // disruption/events/events.go
  DisruptionLaunching: { type: 'Normal', message: new RegExp(`^Launching NodeClaim: ${REASON_TITLE}$`) },
  DisruptionWaitingReadiness: { type: 'Normal', message: exact('Waiting on readiness to continue disruption') },
  DisruptionTerminating: { type: 'Normal', message: new RegExp(`^Disrupting (Node|NodeClaim): ${REASON_TITLE}$`) },
  DisruptionBlocked: {
    type: 'Normal',
    message: /^(No allowed disruptions (for disruption reason [A-Z][A-Za-z]* )?due to blocking budget|[A-Z].*)$/,
  },
  Unconsolidatable: { type: 'Normal', message: /^[A-Z].*$/ },
  ConsolidationCandidate: { type: 'Normal', message: /^Consolidation candidate: .+ \(savings: \$\d+\.\d\d\)$/ },
  ConsolidationRejected: {
    type: 'Normal',
    message: /^Consolidation rejected: .+, reason: .+ \(savings: \$\d+\.\d\d\)$/,
  },
  ConsolidationApproved: {
    type: 'Normal',
    message: /^score -?\d+\.\d\d >= threshold \d+\.\d\d \(k: \d+, savings -?\d+\.\d%, disruption \d+\.\d%\)$/,
  },
  // node/health/events.go
  NodeRepairBlocked: { type: 'Warning', message: /^more th[ae]n 20% nodes are unhealthy in the (nodepool|cluster)$/ },
  // node/termination/terminator/events/events.go
  Evicted: { type: 'Normal', message: /^Evicted pod: .+$/ },
  Disrupted: {
    type: 'Normal',
    message:
      /^Deleting the pod to accommodate the terminationTime \S.* of the node\. The pod was granted \d+ seconds of grace-period of its \d+ terminationGracePeriodSeconds\. This bypasses the PDB of the pod and the do-not-disrupt annotation\.$/,
  },
  FailedDraining: { type: 'Warning', message: /^Failed to drain node, .+$/ },
  TerminationGracePeriodExpiring: { type: 'Warning', message: /^All pods will be deleted by \S+$/ },
  // nodeclaim/consistency/events.go
  FailedConsistencyCheck: {
    type: 'Warning',
    message: /^expected \S+ of resource \S+, but found \S+ \(\d+\.\d% of expected\)$/,
  },
  // nodeclaim/lifecycle/events.go
  InsufficientCapacityError: { type: 'Warning', message: /^NodeClaim \S+ event: .+$/ },
  NodeClassNotReady: { type: 'Warning', message: /^NodeClaim \S+ event: .+$/ },
  UnregisteredTaintMissing: {
    type: 'Warning',
    message: exact(
      'Missing karpenter.sh/unregistered taint which prevents registration related race conditions on Karpenter-managed nodes',
    ),
  },
  // utils/pod/events.go
  InvalidDoNotDisruptAnnotation: {
    type: 'Warning',
    message: /^Invalid karpenter\.sh\/do-not-disrupt annotation: .+, ignoring annotation$/,
  },
  DoNotDisruptUntil: {
    type: 'Normal',
    message: /^The karpenter\.sh\/do-not-disrupt grace period will elapse at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
  },
  DoNotDisruptGracePeriodElapsed: {
    type: 'Normal',
    message: exact('The karpenter.sh/do-not-disrupt grace period has elapsed, pod is now disruptable'),
  },
  // AWS provider: interruption/events/events.go, nodeclass/events.go
  SpotInterrupted: { type: 'Warning', message: exact('Spot interruption warning was triggered') },
  CapacityReservationInstanceInterrupted: {
    type: 'Warning',
    message: exact('Capacity Reservation interruption warning was triggered'),
  },
  SpotRebalanceRecommendation: { type: 'Normal', message: exact('Spot rebalance recommendation was triggered') },
  InstanceStopping: { type: 'Warning', message: exact('Instance is stopping') },
  InstanceTerminating: { type: 'Warning', message: exact('Instance is terminating') },
  InstanceUnhealthy: { type: 'Warning', message: exact('An unhealthy warning was triggered for the instance') },
  TerminatingOnInterruption: {
    type: 'Warning',
    message: /^Interruption triggered termination for the (NodeClaim|Node)$/,
  },
  WaitingOnNodeClaimTermination: { type: 'Normal', message: /^Waiting on NodeClaim termination for .+$/ },
  // This build's own.
  DisruptionFailed: {
    type: 'Warning',
    message: /^.+$/,
    own: 'Karpenter only logs a failed disruption command; here its marks are undone and the nodes told why',
  },
  InstanceNotOwned: {
    type: 'Warning',
    message: /^.+$/,
    own: "an instance the cluster tag does not mark as this cluster's is left running, and the objects say why",
  },
  NodeClaimTimedOut: {
    type: 'Warning',
    message: /^NodeClaim \S+ did not (launch|register) within \d+ minutes; deleting it$/,
    own: 'Karpenter deletes the NodeClaim and logs; here the NodeClaim says so too',
  },
};

/** Reason literals the controller publishes (events.publish calls and the engine's explanation events). */
function reasonsInCode(): Set<string> {
  const root = new URL('../../', import.meta.url).pathname;
  const found = new Set<string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
        const text = readFileSync(path, 'utf8');
        // A reason counts when an event's marks stand within the statement before it (formatted code spreads
        // one publish call over many lines).
        for (const m of text.matchAll(/reason: '([A-Z][A-Za-z]+)'/g)) {
          const around = text.slice(Math.max(0, m.index - 300), m.index + m[0].length + 80);
          if (
            /events\s*\.publish|event: \{|reason: '(Unconsolidatable|DisruptionBlocked)'|type: '(Warning|Normal)'/.test(
              around,
            )
          )
            found.add(m[1]!);
        }
      }
    }
  };
  for (const dir of ['controller/controllers', 'controller/cloudprovider', 'engine/disruption']) walk(join(root, dir));
  return found;
}

describe('event reasons and texts', () => {
  it("publishes only reasons in the table (Karpenter's, or marked as this build's own)", () => {
    const inCode = reasonsInCode();
    // The reader finds the reasons it must: a sample across the controllers.
    for (const r of [
      'Nominated',
      'FailedScheduling',
      'Unconsolidatable',
      'DisruptionBlocked',
      'Evicted',
      'SpotInterrupted',
      'FailedConsistencyCheck',
    ])
      expect(inCode, r).toContain(r);
    // Node-class condition reasons (SubnetsNotFound, ...) are published under the reason of the condition.
    const conditionReasons = new Set([
      'ResolutionFailed',
      'AMINotFound',
      'CapacityReservationNotFound',
      'SubnetsNotFound',
      'SecurityGroupsNotFound',
      'ValidationSucceeded',
      'TagValidationFailed',
      'KubeletValidationFailed',
      'Ready',
      'UnhealthyDependents',
    ]);
    expect([...inCode].filter((r) => !EVENT_TEXTS[r] && !conditionReasons.has(r))).toEqual([]);
  });
});

describe("events of a simulated run match Karpenter's texts", () => {
  let sim: Simulation;
  const seen = (): Array<{ reason: string; type: string; message: string; kind: string }> =>
    events(sim).map((e) => ({
      reason: String(e['reason']),
      type: String(e['type']),
      message: String(e['message']),
      kind: String((e['involvedObject'] as { kind?: string }).kind),
    }));

  beforeAll(async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 3, { cpu: '1', memory: '1Gi', onePerNode: true }));
    // A pod no instance type fits.
    await sim.apply(deployment('huge', 1, { cpu: '1000', memory: '1Gi' }));
    // A pod that blocks its node's disruption, and one whose annotation does not parse.
    await sim.apply(
      deployment('pinned', 1, { cpu: '100m', memory: '128Mi', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
    );
    await sim.apply(
      deployment('typo', 1, {
        cpu: '100m',
        memory: '128Mi',
        annotations: { 'karpenter.sh/do-not-disrupt': '5 minutes' },
      }),
    );
    await sim.clock.advanceUntil(
      () => running(sim, 'web') === 3 && running(sim, 'pinned') === 1,
      180_000,
      'web running',
    );
    // Consolidation: web goes, the nodes it leaves empty are removed; the pinned pod's node stays.
    await scale(sim, 'web', 0);
    const before = nodes(sim).length;
    await sim.clock.advanceUntil(() => events(sim, 'DisruptionTerminating').length > 0, 15 * 60_000, 'a disruption');
    await sim.clock.advance(2 * 60_000);
    // A spot interruption on a node still there.
    const claim = nodeClaims(sim).find(
      (c) => !c.metadata.deletionTimestamp && (c.status as { providerID?: string }).providerID,
    );
    if (claim) sim.provider.interrupt((claim.status as { providerID: string }).providerID, 'spotInterruption');
    await sim.clock.advance(3 * 60_000);
    expect(before).toBeGreaterThan(0);
  }, 120_000);

  afterAll(async () => {
    await sim?.close();
  });

  it("gives every event Karpenter's type and text for its reason", () => {
    const all = seen();
    const reasons = new Set(all.map((e) => e.reason));
    for (const r of [
      'Nominated',
      'FailedScheduling',
      'DisruptionTerminating',
      'DisruptionBlocked',
      'InvalidDoNotDisruptAnnotation',
      'Evicted',
      'SpotInterrupted',
      'TerminatingOnInterruption',
    ])
      expect(reasons, r).toContain(r);
    const wrong = all.filter(
      (e) =>
        EVENT_TEXTS[e.reason] &&
        (EVENT_TEXTS[e.reason]!.type !== e.type || !EVENT_TEXTS[e.reason]!.message.test(e.message)),
    );
    expect(wrong).toEqual([]);
  });

  it("writes FailedScheduling in Karpenter's words for a pod no instance type fits", () => {
    const failed = seen()
      .filter((e) => e.reason === 'FailedScheduling' && e.kind === 'Pod')
      .map((e) => e.message);
    expect(
      failed.some((m) =>
        /^Failed to schedule pod, .*no instance type has enough resources.*\(NodePool=production\)/.test(m),
      ),
      failed.join('\n'),
    ).toBe(true);
  });
});
