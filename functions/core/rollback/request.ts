// Asking for a delivery's rollback: only through the gate function's rollbacks entry (which IAM
// lets only grantRollback's grantees invoke), only by a principal AWS verified for the request's
// proof and granted that entry, with a reason, back to a revision the delivery applied before.
// Every closed gate lets it through but those that hold rollback; it is published and metered
// like a break-glass override, kept on the delivery's status, and the delivery reconciles at once.
import { randomUUID } from 'node:crypto';
import type { Delivery } from '../config/index.ts';
import { revisionText } from '../model/revision-text.ts';
import type { DeliveryRollbackEvent, RollbackRequest, RollbackSource } from '../model/rollback.ts';
import { listAppliedRevisions } from '../store/applied-revisions.ts';
import { getDelivery, listDeliveryNames } from '../store/deliveries.ts';
import { putRollbackRequest } from '../store/rollbacks.ts';
import { rolloutOfDelivery } from '../store/rollouts.ts';
import { getStatus } from '../store/status.ts';
import { readablePrincipal, type Caller } from '../access/caller.ts';
import { DELIVERY_ROLLBACK, ROLLBACKS_ALIAS } from '../gates/contract.ts';
import { evaluateGates, verdictFor } from '../gates/evaluate.ts';
import { GateEventError } from '../gates/event.ts';
import { printable } from '../access/audit-text.ts';
import { ProofRefused } from '../access/proof.ts';
import { provenPrincipal, type Transport } from '../gates/proven-request.ts';
import type { GateDeps } from '../gates/requests.ts';
import type { UrlCaller } from '../access/signers.ts';
import {
  parseRollbackEvent,
  rollbackRequestDigest,
  type RollbackEvent,
  type RollbackFields,
} from './event.ts';
import { chooseRollbackTarget, digestOf, RollbackRefused, rollbackHolders, rollbackPasses } from './rules.ts';

/** What asking for a rollback answers. */
export interface RollbackResult {
  readonly action: 'rollback';
  readonly outcome: 'accepted';
  readonly delivery: string;
  /** The request as stored (who, from what, to what, why, through which closed gates). */
  readonly request: RollbackRequest;
  readonly reconciling: readonly string[];
  readonly message: string;
}

/** Where a signed rollback goes (said when one arrives through another entry). */
export const ROLLBACKS_ENTRY_HINT = `send delivery rollbacks to the gate function's ${ROLLBACKS_ALIAS} entry (grantRollback allows it): sluice rollback <delivery> --reason … --function <gate function>`;

/** A rollback that only claims its sender (a direct invocation, a console test event). */
export const ROLLBACK_NEEDS_PROOF = `a rollback takes a verified identity: send it signed with sluice rollback --function (through the gate function's ${ROLLBACKS_ALIAS} entry, which grantRollback allows); a claim is refused`;

/** True when the function was invoked through its rollbacks entry. */
export const isRollbacksEntry = (invokedFunctionArn: string | undefined): boolean =>
  invokedFunctionArn?.split(':')[7] === ROLLBACKS_ALIAS;

/**
 * A rollback carrying a proof of its sender (`{"action":"rollback","delivery",…,"proof"}`), by
 * either transport. It must come through the rollbacks entry; its author is the principal STS
 * names for the proof, which must be a grantee of that entry. A bad event throws GateEventError
 * (RollbackRefused when it cannot be done as asked), a refused proof ProofRefused; nothing is written.
 */
export async function handleProvenRollback(
  raw: Record<string, unknown>,
  transport: Transport,
  invokedFunctionArn: string | undefined,
  deps: GateDeps,
  urlCaller?: UrlCaller,
): Promise<RollbackResult> {
  const { proof, ...fields } = raw;
  if (!invokedFunctionArn || !isRollbacksEntry(invokedFunctionArn))
    throw new ProofRefused(ROLLBACKS_ENTRY_HINT);
  const event = parseRollbackEvent(fields);
  if (proof === undefined) throw new GateEventError(ROLLBACK_NEEDS_PROOF);
  const principal = await provenPrincipal(
    proof,
    rollbackRequestDigest(fields as unknown as RollbackFields),
    invokedFunctionArn,
    deps,
    { what: `the rollback of delivery '${event.delivery}'`, transport, urlCaller },
  );
  return requestRollback(event, { principal, verified: true }, transport, deps);
}

/**
 * Asks for `delivery`'s rollback for a verified caller: it must be registered, not a rollout's
 * member, running a revision, and the target one it applied before (pulled from the same source
 * URL); no gate it references may hold rollback. Stored only while the delivery still runs the
 * revision it was decided on; then published and reconciled.
 */
export async function requestRollback(
  event: RollbackEvent,
  caller: Caller,
  source: RollbackSource,
  deps: GateDeps,
): Promise<RollbackResult> {
  if (!caller.verified) throw new GateEventError(ROLLBACK_NEEDS_PROOF);
  const now = deps.clock.now();
  const delivery = await registeredDelivery(event.delivery, deps);
  const rollout = await rolloutOfDelivery(deps.db, delivery.name);
  if (rollout)
    throw new RollbackRefused(
      `delivery '${delivery.name}' is a member of rollout '${rollout}': its rollback follows the rollout's rules (the whole fleet goes back to the last revision it completed, and the rolled-back digest is not rolled out again): sluice rollout rollback ${rollout} --reason …; nothing was rolled back`,
    );
  const status = await getStatus(deps.db, delivery.name);
  const current = status?.lastAppliedRevision;
  if (!current)
    throw new RollbackRefused(
      `delivery '${delivery.name}' has applied no revision yet: there is nothing to roll back`,
    );
  const last = status.rollback;
  const inForce =
    last && status.rollbackSettled === last.id && digestOf(current) === digestOf(last.to) ? last : undefined;
  const target = chooseRollbackTarget({
    delivery: delivery.name,
    url: delivery.source.url,
    current,
    history: await listAppliedRevisions(deps.db, delivery.name),
    ...(event.revision !== undefined && { requested: event.revision }),
    ...(inForce && { rolledBackFrom: inForce.from, rejected: inForce.rejected ?? [] }),
  });
  // A rollback of a rollback in force: the revisions that one left stay rolled back too.
  const rejected = inForce
    ? [...new Set([...(inForce.rejected ?? []), digestOf(inForce.from)])].filter(
        (digest) => digest !== digestOf(target.revision) && digest !== digestOf(current),
      )
    : [];
  const evaluation = await evaluateGates(delivery.name, delivery.gates, deps.db, now, deps).catch(
    (error: unknown) => {
      throw new RollbackRefused(`${(error as Error).message}; nothing was rolled back`);
    },
  );
  const verdict = verdictFor(evaluation, target.revision);
  const holders = rollbackHolders(verdict);
  if (holders.length > 0) {
    const names = holders.map((gate) => `'${gate.name}'`).join(', ');
    throw new RollbackRefused(
      `the rollback of delivery '${delivery.name}' to ${target.revision} is refused: gate${holders.length === 1 ? '' : 's'} ${names} ${holders.length === 1 ? 'is' : 'are'} closed and hold${holders.length === 1 ? 's' : ''} rollbacks too (holds: [revisions, rollback]); approve the revision at ${holders.length === 1 ? 'it' : 'them'} (sluice gate open <gate> --revision ${target.revision}) or break glass; nothing was rolled back`,
    );
  }
  const request: RollbackRequest = {
    id: randomUUID(),
    from: current,
    to: target.revision,
    ...(status.pendingRevision && { held: status.pendingRevision }),
    ...(rejected.length > 0 && { rejected }),
    by: caller.principal,
    reason: event.reason,
    at: now.toISOString(),
    source,
    through: rollbackPasses(verdict),
  };
  if (!(await putRollbackRequest(deps.db, delivery.name, request)))
    throw new RollbackRefused(
      `delivery '${delivery.name}' no longer runs ${current} (or was removed) while the rollback was asked for: look again (sluice status ${delivery.name}); nothing was rolled back`,
    );
  const reconciling = [delivery.name];
  const detail = rollbackDetail(request, delivery, reconciling);
  await deps
    .publish?.(DELIVERY_ROLLBACK, detail)
    .catch((error: unknown) =>
      deps.log?.(
        `WARNING: could not publish the ${DELIVERY_ROLLBACK} event (the rollback is asked for): ${String(error)}`,
      ),
    );
  let caughtUp = `; reconciling ${delivery.name}`;
  await deps.reconcileNow?.(reconciling).catch((error: unknown) => {
    caughtUp = `; the delivery could not be reconciled at once (${String(error)}): its next scheduled run rolls it back`;
  });
  const message = `delivery '${delivery.name}': ${rollbackMessage(request)}${caughtUp}`;
  deps.log?.(message);
  return { action: 'rollback', outcome: 'accepted', delivery: delivery.name, request, reconciling, message };
}

/** `rollback from … to … by alice (…): INC-77; through closed gate 'a' (it does not hold rollback)` */
export function rollbackMessage(request: RollbackRequest): string {
  const through =
    request.through.length > 0
      ? `; through closed gate${request.through.length === 1 ? '' : 's'} ${request.through.map((g) => `'${g}'`).join(', ')} (${request.through.length === 1 ? 'it does' : 'they do'} not hold rollback)`
      : '';
  return `rollback from ${revisionText(request.from, 'checked')} to ${revisionText(request.to, 'checked')} by ${readablePrincipal(request.by, true)}: ${printable(request.reason)}${through}`;
}

function rollbackDetail(
  request: RollbackRequest,
  delivery: Delivery,
  reconciling: readonly string[],
): DeliveryRollbackEvent {
  return {
    delivery: delivery.name,
    from: request.from,
    to: request.to,
    fromShown: revisionText(request.from, 'checked'),
    toShown: revisionText(request.to, 'checked'),
    by: request.by,
    reason: request.reason,
    at: request.at,
    source: request.source,
    through: request.through,
    throughShown: request.through.length > 0 ? request.through.map((g) => `'${g}'`).join(', ') : 'none',
    reconciling,
  };
}

async function registeredDelivery(name: string, deps: GateDeps): Promise<Delivery> {
  const delivery = await getDelivery(deps.db, name);
  if (delivery) return delivery;
  const known = await listDeliveryNames(deps.db);
  throw new RollbackRefused(
    `delivery '${name}' is not registered (${known.length > 0 ? `registered deliveries: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''}` : 'no deliveries are registered'}); nothing was rolled back`,
  );
}
