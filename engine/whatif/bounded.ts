// A what-if report and its lower bound, worked out apart (on two workers when the engine has them) and joined
// here: the types that travel between them and the join. Kept out of run.ts, which plans: the calling thread
// joins the parts (engine/engine.ts) and must not load the planner (scripts/lint-layers.mjs).
import { roundMicro } from '../domain/money.ts';
import type { WhatIfReport } from './types.ts';

/** A report's lower bound: plain data, so it can be worked out apart from the plan (on another worker). */
export interface ReportBound {
  readonly perHour: number;
  readonly status: string;
  readonly kind: string;
}

/**
 * A report before its lower bound is known (whatIfPlan); withBound completes it. `cost` is the $/h before and after
 * unrounded, which the efficiencies divide by.
 */
export type UnboundReport = Omit<
  WhatIfReport,
  'lowerBoundPerHour' | 'lowerBoundStatus' | 'lowerBoundKind' | 'efficiencyBefore' | 'efficiencyAfter'
> & { readonly cost: { readonly before: number; readonly after: number } };

/** The report with its bound: the bound's fields and the efficiencies, in the report's order. */
export function withBound(report: UnboundReport, lb: ReportBound): WhatIfReport {
  const eff = (c: number): number | null => (c > 0 && lb.perHour > 0 ? roundMicro(lb.perHour / c) : null);
  const { cost, schema, input, notes, truncated, risks, costPerHourBefore, costPerHourAfter, ...rest } = report;
  const { costPerMonthBefore, costPerMonthAfter, savingsPerHour, ...tail } = rest;
  return {
    schema,
    input,
    notes,
    ...(truncated ? { truncated } : {}),
    risks,
    costPerHourBefore,
    costPerHourAfter,
    costPerMonthBefore,
    costPerMonthAfter,
    savingsPerHour,
    lowerBoundPerHour: roundMicro(lb.perHour),
    lowerBoundStatus: lb.status,
    lowerBoundKind: lb.kind,
    efficiencyBefore: eff(cost.before),
    efficiencyAfter: eff(cost.after),
    ...tail,
  };
}
