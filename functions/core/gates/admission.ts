import type { Gate, GateAction } from '../config/index.ts';
import { deliveriesUsingGate } from '../store/delivery-lookups.ts';
import { MAX_FUTURE_MS, type GateRequest } from '../store/gates.ts';
import { getStatus } from '../store/status.ts';
import type { TableClient } from '../store/table-client.ts';
import { approverKey } from '../access/approver-key.ts';
import { readablePrincipal, type Caller } from '../access/caller.ts';
import { parseCron } from '../config/cron.ts';
import { GateEventError, type GateEvent } from './event.ts';
import { checkSelfApproval } from './self-approval.ts';
import { scheduledRequest } from './state.ts';

/**
 * The request an open/close event stands for, once it passes the gate's rules: a schedule's is
 * rebuilt from the spec for a real firing; anyone else's is timed by this side's clock and
 * authored by the caller, and an open request must name a revision (`approval: revision`) and
 * come from a verified caller (`approvers` > 1). Anything else throws GateEventError.
 */
export async function admitRequest(
  gate: Gate,
  event: GateEvent,
  caller: Caller,
  db: TableClient,
  now: Date,
): Promise<GateRequest> {
  if (event.source === 'schedule') return scheduleFiring(gate, event, now);
  if (gate.requireVerified && !caller.verified)
    throw new GateEventError(
      `gate '${gate.name}' takes verified requests only (requireVerified): a request that reached the function directly, such as a console test event, only claims its sender (${readablePrincipal(caller.principal, false)}); use sluice gate ${event.action} --function, or approve in the gate's Systems Manager runbook`,
    );
  const request = callerRequest(gate, event, caller, now);
  if (request.action === 'open') {
    await checkApproval(gate, request, db);
    await checkSelfApproval(gate, request, db);
  }
  return request;
}

/** A person's (or a program's) request: timed by this side's clock, authored by the caller. */
function callerRequest(gate: Gate, event: GateEvent, caller: Caller, now: Date): GateRequest {
  const windowMs = event.windowMs ?? gate.windowMs;
  return {
    action: event.action as GateAction,
    requestedAt: now.toISOString(),
    requestedBy: caller.principal,
    verified: caller.verified,
    ...(caller.verified && { approver: approverKey(caller.principal, gate) }),
    reason: event.reason ?? '',
    source: event.source,
    ...(windowMs !== undefined && { windowMs }),
    ...(event.revision !== undefined && { revision: event.revision }),
    ...(event.deliveries !== undefined && { deliveries: event.deliveries }),
  };
}

/**
 * A schedule's request is rebuilt from the gate's spec, and only for a time its cron really
 * fired: anyone able to send `source: schedule` can restate the schedule, never change it.
 */
function scheduleFiring(gate: Gate, event: GateEvent, now: Date): GateRequest {
  if (event.requestedAt === undefined)
    throw new GateEventError(`a schedule request names its firing time in "requestedAt"`);
  const firedAt = new Date(event.requestedAt);
  if (firedAt.getTime() > now.getTime() + MAX_FUTURE_MS)
    throw new GateEventError(`"requestedAt": ${event.requestedAt} is in the future`);
  const index = gate.schedules.findIndex(
    (schedule) =>
      schedule.action === event.action &&
      parseCron(schedule.cron, schedule.timeZone).previous(firedAt, firedAt)?.getTime() === firedAt.getTime(),
  );
  if (index < 0) {
    const schedules = gate.schedules
      .filter((s) => s.action === event.action)
      .map((s) => `${s.action} at "${s.cron}" (${s.timeZone})`)
      .join(', ');
    throw new GateEventError(
      `"requestedAt": ${event.requestedAt} is not a time any of gate '${gate.name}'s ${event.action} schedules fires (${schedules || 'it has none'})`,
    );
  }
  return scheduledRequest(gate, index, firedAt);
}

/** The gate's rules for an open request: a named revision (`approval: revision`), a verified caller (approvers > 1). */
async function checkApproval(gate: Gate, request: GateRequest, db: TableClient): Promise<void> {
  if (gate.approval === 'revision' && request.revision === undefined) {
    const awaiting = await revisionsAwaiting(db, gate.name);
    throw new GateEventError(
      `gate '${gate.name}' opens for one revision at a time (approval: revision): name it with --revision <tag>@sha256:<hex> (event field "revision")${awaiting ? `; awaiting approval: ${awaiting}` : ''}`,
    );
  }
  if (request.deliveries !== undefined) {
    const using = new Set(await deliveriesUsingGate(db, gate.name));
    const strangers = request.deliveries.filter((name) => !using.has(name));
    if (strangers.length > 0)
      throw new GateEventError(
        `gate '${gate.name}' holds no delivery named ${strangers.map((name) => `'${name}'`).join(', ')}: an open request can be for deliveries that use the gate only (${[...using].sort().join(', ') || 'none does'})`,
      );
  }
  if (gate.approvers > 1 && !request.verified)
    throw new GateEventError(
      `gate '${gate.name}' opens on ${gate.approvers} verified approvals; a request that reached the function directly (${readablePrincipal(request.requestedBy, false)}, source ${request.source}) is not verified: send it with sluice gate open --function, which signs it`,
    );
}

/** `podinfo: 1.3.0@sha256:…` for each delivery using the gate that holds a revision. */
async function revisionsAwaiting(db: TableClient, gate: string): Promise<string> {
  const names = await deliveriesUsingGate(db, gate);
  const statuses = await Promise.all(names.map(async (name) => [name, await getStatus(db, name)] as const));
  return statuses
    .filter(([, status]) => status?.pendingRevision)
    .map(([name, status]) => `${name}: ${status!.pendingRevision}`)
    .join(', ');
}
