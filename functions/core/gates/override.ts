// Break-glass overrides: what a request says, the hash its proof signs, and how an override enters
// a delivery's gate verdict. An override lets one pinned revision through a gate for a bounded
// window; it never changes the gate's state, and it never reaches the mass-deletion brake.
import { DEFAULT_MAX_OVERRIDE_MS } from '../config/defaults.ts';
import type { Gate, GateRef } from '../config/index.ts';
import { getGate } from '../store/gates.ts';
import type { BlockingGate } from '../model/status.ts';
import { activeOverrides, type GateOverride } from '../store/gate-overrides.ts';
import type { RequestSource } from '../store/gates.ts';
import type { TableClient } from '../store/table-client.ts';
import { printable } from '../access/audit-text.ts';
import { readablePrincipal } from '../access/caller.ts';
import { formatInstant } from './messages.ts';
import { digestOf } from './state.ts';
import { revisionText } from '../model/revision-text.ts';

import { BREAK_GLASS_ALIAS, GATE_OVERRIDE } from './contract.ts';

export { BREAK_GLASS_ALIAS, GATE_OVERRIDE };
/**
 * The override (of those in force for this delivery) that lets `revision` through `gate`; without
 * a revision (not resolved yet), any override of the gate, as it may be the one it names.
 */
export function overrideLetting(
  overrides: readonly GateOverride[] | undefined,
  gate: string,
  revision: string | undefined,
): GateOverride | undefined {
  return overrides?.find(
    (override) =>
      override.gate === gate &&
      (revision === undefined || digestOf(override.revision) === digestOf(revision)),
  );
}

/** True when `override` is for `delivery` (it names no deliveries, or names this one). */
export const overrideCovers = (override: GateOverride, delivery: string): boolean =>
  override.deliveries === undefined || override.deliveries.includes(delivery);

/** `sha256:… (tag "1.3.1" claimed, …) until 2026-06-01T10:00:00Z by alice (role Oncall, 1234…): INC-77 hotfix` */
export function describeOverride(override: GateOverride): string {
  const scope = override.deliveries ? ` (deliveries ${override.deliveries.join(', ')})` : '';
  return `${revisionText(override.revision, 'claimed')}${scope} until ${formatInstant(override.endsAt)} by ${readablePrincipal(override.madeBy, true)}: ${printable(override.reason)}`;
}

/** The overrides in force at `now` of the gates `delivery` references (its `gates`), for this delivery. */
export async function overridesFor(
  delivery: string,
  refs: readonly GateRef[],
  db: TableClient,
  now: Date,
): Promise<GateOverride[]> {
  const names = [...new Set(refs.map((ref) => ref.name))];
  const found = await Promise.all(names.map((gate) => activeOverrides(db, gate, now)));
  const bounded = await Promise.all(
    found.map(async (overrides, i) =>
      overrides.length === 0 ? [] : withinGateLimit(overrides, await getGate(db, names[i]!), now),
    ),
  );
  return bounded.flat().filter((override) => overrideCovers(override, delivery));
}

/**
 * The overrides still within the gate's maxOverride as registered now: lowering it ends the
 * overrides already made that have lasted longer (an unregistered gate keeps none).
 */
function withinGateLimit(
  overrides: readonly GateOverride[],
  gate: Gate | undefined,
  now: Date,
): GateOverride[] {
  if (!gate) return [];
  const limit = gate.maxOverrideMs ?? DEFAULT_MAX_OVERRIDE_MS;
  return overrides.filter((override) => now.getTime() < Date.parse(override.madeAt) + limit);
}

interface Verdict {
  readonly blockAll: readonly BlockingGate[];
  readonly blockRevisions: readonly BlockingGate[];
}

/**
 * `verdict` without the gates an override lets `revision` through, which are listed as
 * `overridden`. Only evaluateGates carries overrides, so the brake's gate (gateHolding) never
 * sees one.
 */
export function withoutOverridden<V extends Verdict>(
  verdict: V,
  overrides: readonly GateOverride[] | undefined,
  revision: string | undefined,
): V & { overridden?: { gate: BlockingGate; override: GateOverride }[] } {
  if (!overrides || overrides.length === 0) return verdict;
  const overridden: { gate: BlockingGate; override: GateOverride }[] = [];
  const keep = (gate: BlockingGate) => {
    const override = overrideLetting(overrides, gate.name, revision);
    if (override) overridden.push({ gate, override });
    return !override;
  };
  return {
    ...verdict,
    blockAll: verdict.blockAll.filter(keep),
    blockRevisions: verdict.blockRevisions.filter(keep),
    ...(overridden.length > 0 && { overridden }),
  };
}

/** `break-glass override of gates a, b: lets 1.3.1@sha256:… through until … by …: INC-77; reconciling d` */
export function overrideMessage(overrides: readonly GateOverride[], reconciling: readonly string[]): string {
  const gates = overrides.map((override) => `'${override.gate}'`).join(', ');
  const catchUp = reconciling.length > 0 ? `; reconciling ${reconciling.join(', ')}` : '';
  return `break-glass override of gate${overrides.length === 1 ? '' : 's'} ${gates}: lets ${describeOverride(overrides[0]!)}${catchUp}`;
}

/** The detail of the `Gate Override` event. */
export interface GateOverrideEvent {
  readonly gates: readonly string[];
  /** The gates as people are shown them: `'a', 'b'` (a message template cannot list an array). */
  readonly gatesShown: string;
  readonly revision: string;
  /** The revision as people are shown it (revisionText): digest first, its tag marked as claimed. */
  readonly revisionShown: string;
  readonly deliveries?: readonly string[];
  readonly madeBy: string;
  readonly reason: string;
  readonly madeAt: string;
  readonly endsAt: string;
  readonly source: RequestSource;
  readonly reconciling: readonly string[];
}
