// The reference solver's NodeClaims into the plan's (model/claim.ts does the shared part).
import { REQUESTED_DRA_DRIVERS_ANNOTATION } from '../../domain/dra.ts';
import type { EngineOptions, Requirements } from '../../domain/types.ts';
import { HOSTNAME_LABEL, SIMULATION_LABELS } from '../../scheduling/labels.ts';
import type { ModelCaches } from '../../model/caches.ts';
import { claimPlan, orderByPrice, type Finalized } from '../../model/claim.ts';
import type { SimNodeClaim } from '../../model/places.ts';
import { withReservationRequirements } from '../../model/reservations.ts';
import { offeringAllowed } from '../../model/templates.ts';

export function finalizeClaim(
  c: SimNodeClaim,
  options: EngineOptions,
  wellKnown: ReadonlySet<string>,
  caches: ModelCaches,
): Finalized {
  const base: Requirements = new Map(
    [...c.requirements].filter(([k]) => k !== HOSTNAME_LABEL && !SIMULATION_LABELS.has(k)),
  );
  // A NodeClaim holding reservations launches into one of them (§2.15); types left without an offering the
  // final requirements allow are dropped (Karpenter lists them last, priced at MaxFloat64, and its cloud
  // provider skips them at launch).
  const held = c.held;
  const reqs = withReservationRequirements(base, held);
  const its = held.size
    ? c.instanceTypes.filter((it) => it.offerings.some((o) => offeringAllowed(reqs, o)))
    : c.instanceTypes;
  const ordered = orderByPrice(reqs, its).slice(0, options.maxInstanceTypes);
  const f = claimPlan({ template: c.template, requirements: reqs, ordered, pods: c.pods }, options, wellKnown, caches);
  if (!f.ok || c.draDrivers.size === 0) return f;
  // §2.16: the drivers whose node-local devices the NodeClaim's pods were allocated, over the types it keeps;
  // node initialization waits for them to publish (DRADriverPoolsNotPublished).
  const drivers = new Set<string>();
  for (const o of ordered) for (const d of c.draDrivers.get(o.it.name) ?? []) drivers.add(d);
  if (!drivers.size) return f;
  return {
    ok: true,
    claim: {
      ...f.claim,
      annotations: { ...f.claim.annotations, [REQUESTED_DRA_DRIVERS_ANNOTATION]: [...drivers].sort().join(',') },
    },
  };
}
