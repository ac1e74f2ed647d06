// Making a break-glass override: only through the gate function's break_glass entry (which IAM
// lets only grantBreakGlass's grantees invoke), only by a principal AWS verified, with a reason,
// for one pinned revision and at most each gate's maxOverride. It is stored beside the gates'
// requests, audited in each gate's history, published, and the deliveries it lets through
// reconcile at once. When its window ends it lets nothing through: nothing has to undo it.
import { randomUUID } from 'node:crypto';
import { DEFAULT_MAX_OVERRIDE_MS } from '../config/defaults.ts';
import { formatDuration, type Gate } from '../config/index.ts';
import { getDelivery } from '../store/deliveries.ts';
import { deliveriesUsingGate } from '../store/delivery-lookups.ts';
import { putOverrides, type GateOverride, type PutInput } from '../store/gate-overrides.ts';
import { getGate, listGateNames, type RequestSource } from '../store/gates.ts';
import type { TableClient } from '../store/table-client.ts';
import type { Caller } from '../access/caller.ts';
import { GateEventError } from '../gates/event.ts';
import {
  overrideRequestDigest,
  parseOverrideEvent,
  type OverrideEvent,
  type OverrideFields,
} from './override-event.ts';
import {
  BREAK_GLASS_ALIAS,
  GATE_OVERRIDE,
  overrideMessage,
  type GateOverrideEvent,
} from '../gates/override.ts';
import { ProofRefused } from '../access/proof.ts';
import { provenPrincipal, type Transport } from '../gates/proven-request.ts';
import type { GateDeps } from '../gates/requests.ts';
import type { UrlCaller } from '../access/signers.ts';
import { revisionText } from '../model/revision-text.ts';

/** What making an override answers. */
export interface OverrideResult {
  readonly action: 'override';
  /** `refused`: a verified break-glass runbook execution was turned down (audited; `refusedBecause` says why). */
  readonly outcome: 'accepted' | 'refused';
  /** One per gate, sharing an id; none when refused. */
  readonly overrides: readonly GateOverride[];
  /** Deliveries asked to reconcile because the override lets their revision through. */
  readonly reconciling: readonly string[];
  readonly refusedBecause?: string;
  readonly message: string;
}

/** The qualifier of the ARN the function was invoked as. */
const qualifierOf = (invokedFunctionArn: string | undefined) => invokedFunctionArn?.split(':')[7];

/** True when the function was invoked through its break_glass entry. */
export const isBreakGlassEntry = (invokedFunctionArn: string | undefined): boolean =>
  qualifierOf(invokedFunctionArn) === BREAK_GLASS_ALIAS;

/** Where a signed override goes (said when one arrives through another entry). */
export const BREAK_GLASS_ENTRY_HINT = `send break-glass overrides to the gate function's ${BREAK_GLASS_ALIAS} entry (grantBreakGlass allows it); gate requests go to their own entries`;

/**
 * An override carrying a proof of its sender (`{"action":"override",…,"proof":{query,nonce}}`), by
 * either transport. It must come through the break_glass entry; its author is the principal STS
 * names for the proof. A bad event throws GateEventError, a refused proof ProofRefused; nothing is
 * written.
 */
export async function handleProvenOverride(
  raw: Record<string, unknown>,
  transport: Transport,
  invokedFunctionArn: string | undefined,
  deps: GateDeps,
  urlCaller?: UrlCaller,
): Promise<OverrideResult> {
  const { proof, ...fields } = raw;
  if (!invokedFunctionArn || !isBreakGlassEntry(invokedFunctionArn))
    throw new ProofRefused(BREAK_GLASS_ENTRY_HINT);
  const event = parseOverrideEvent(fields);
  const principal = await provenPrincipal(
    proof,
    overrideRequestDigest(fields as unknown as OverrideFields),
    invokedFunctionArn,
    deps,
    { what: 'the break-glass override', transport, urlCaller },
  );
  return makeOverride(event, { principal, verified: true }, transport, deps);
}

/** The detail of the `Gate Override` event of an override made at `now` of `gates`. */
export function gateOverrideDetail(made: {
  readonly event: OverrideEvent;
  readonly gates: readonly string[];
  readonly madeBy: string;
  readonly now: Date;
  readonly source: RequestSource;
  readonly reconciling: readonly string[];
}): GateOverrideEvent {
  const { event, now } = made;
  return {
    gates: [...made.gates],
    gatesShown: made.gates.map((gate) => `'${gate}'`).join(', '),
    revision: event.revision,
    revisionShown: revisionText(event.revision, 'claimed'),
    ...(event.deliveries && { deliveries: event.deliveries }),
    madeBy: made.madeBy,
    reason: event.reason,
    madeAt: now.toISOString(),
    endsAt: new Date(now.getTime() + event.windowMs).toISOString(),
    source: made.source,
    reconciling: [...made.reconciling],
  };
}

/**
 * Makes an override for a verified caller: each gate must be registered and hold the releases of
 * a delivery in scope (not only be a pruneLimitGate, which an override never opens), and the
 * window at most its maxOverride. Nothing is written unless every gate passes; `alsoPut` (a
 * runbook execution's claim) is written in the overrides' transaction, so only with them.
 */
export async function makeOverride(
  event: OverrideEvent,
  caller: Caller,
  source: RequestSource,
  deps: GateDeps,
  alsoPut: readonly PutInput[] = [],
): Promise<OverrideResult> {
  if (!caller.verified) throw new GateEventError(OVERRIDE_NEEDS_VERIFIED);
  const now = deps.clock.now();
  const targets = await overrideTargets(event, deps.db);
  for (const { gate } of targets) {
    const max = gate.maxOverrideMs ?? DEFAULT_MAX_OVERRIDE_MS;
    if (event.windowMs > max)
      throw new GateEventError(
        `gate '${gate.name}': an override may last at most ${formatDuration(max)} (its maxOverride), not ${formatDuration(event.windowMs)}; nothing was overridden`,
      );
  }
  const id = randomUUID();
  const endsAt = new Date(now.getTime() + event.windowMs).toISOString();
  // The scope is fixed now: the deliveries that use the gate today (or the ones named), not any
  // that start using it while the override lasts.
  const overrides: GateOverride[] = targets.map(({ gate, deliveries }) => ({
    id,
    gate: gate.name,
    revision: event.revision,
    deliveries,
    madeAt: now.toISOString(),
    endsAt,
    madeBy: caller.principal,
    reason: event.reason,
    source,
  }));
  await putOverrides(deps.db, overrides, alsoPut);

  const reconciling = [...new Set(targets.flatMap((target) => target.deliveries))].sort();
  const detail = gateOverrideDetail({
    event,
    gates: overrides.map((override) => override.gate),
    madeBy: caller.principal,
    now,
    source,
    reconciling,
  });
  await deps
    .publish?.(GATE_OVERRIDE, detail)
    .catch((error: unknown) =>
      deps.log?.(
        `WARNING: could not publish the ${GATE_OVERRIDE} event (the override is in force): ${String(error)}`,
      ),
    );
  // The override is in force from here on: a catch-up that cannot be started is said, not thrown
  // (the deliveries' own schedules reconcile them), so the override is always reported and metered.
  let caughtUp = '';
  if (reconciling.length > 0)
    await deps.reconcileNow?.(reconciling).catch((error: unknown) => {
      caughtUp = `; the deliveries could not be reconciled at once (${String(error)}): their next scheduled run applies the revision`;
    });
  const message = `${overrideMessage(overrides, reconciling)}${caughtUp}`;
  deps.log?.(message);
  return { action: 'override', outcome: 'accepted', overrides, reconciling, message };
}

const OVERRIDE_NEEDS_VERIFIED =
  'a break-glass override takes a verified identity (a proof STS checks, or the runbook as Systems Manager records it); a claim is refused';

/** Each gate an override is for, with the deliveries in scope whose `gates` name it. */
async function overrideTargets(
  event: OverrideEvent,
  db: TableClient,
): Promise<{ gate: Gate; deliveries: string[] }[]> {
  let names = event.gates ?? [];
  if (event.allGates) {
    const name = event.deliveries![0]!;
    const delivery = await getDelivery(db, name);
    if (!delivery) throw new GateEventError(`delivery '${name}' is not registered; nothing was overridden`);
    names = [...new Set(delivery.gates.map((ref) => ref.name))].sort();
    if (names.length === 0)
      throw new GateEventError(
        `delivery '${name}' references no gates (in "gates"): there is nothing to override`,
      );
  }
  const targets: { gate: Gate; deliveries: string[] }[] = [];
  for (const name of names) {
    const gate = await getGate(db, name);
    if (!gate) {
      const known = await listGateNames(db);
      throw new GateEventError(
        `gate '${name}' is not registered (${known.length > 0 ? `registered gates: ${known.join(', ')}` : 'no gates are registered'}); nothing was overridden`,
      );
    }
    const held = await deliveriesHeldBy(db, name);
    const strangers = (event.deliveries ?? []).filter((delivery) => !held.includes(delivery));
    if (strangers.length > 0)
      throw new GateEventError(
        `gate '${name}' holds no delivery named ${strangers.map((d) => `'${d}'`).join(', ')} (it holds ${held.join(', ') || 'none'}); nothing was overridden`,
      );
    if (held.length === 0)
      throw new GateEventError(
        `gate '${name}' holds no delivery's releases (no delivery names it in "gates"); if it is a pruneLimitGate, an override never opens the mass-deletion brake: open that gate with sluice gate open --revision; nothing was overridden`,
      );
    const deliveries = event.deliveries ? held.filter((d) => event.deliveries!.includes(d)) : held;
    targets.push({ gate, deliveries });
  }
  return targets;
}

/**
 * The registered gates an override asks for, sorted: those it names, or every gate of the one
 * delivery named (none if that delivery is not registered). Where a refusal is audited.
 */
export async function registeredTargets(event: OverrideEvent, db: TableClient): Promise<string[]> {
  let names = event.gates ?? [];
  if (event.allGates) {
    const delivery = await getDelivery(db, event.deliveries![0]!);
    names = delivery ? delivery.gates.map((ref) => ref.name) : [];
  }
  const known = new Set(await listGateNames(db));
  return [...new Set(names)].filter((name) => known.has(name)).sort();
}

/** The deliveries whose `gates` name `gate` (a pruneLimitGate alone does not count), sorted. */
async function deliveriesHeldBy(db: TableClient, gate: string): Promise<string[]> {
  const names = await deliveriesUsingGate(db, gate);
  const specs = await Promise.all(names.map((name) => getDelivery(db, name)));
  return specs
    .filter((spec) => spec?.gates.some((ref) => ref.name === gate))
    .map((spec) => spec!.name)
    .sort();
}
