import type { PendingApprovals } from '../store/gate-approvals.ts';
import type { BlockingGate } from '../model/status.ts';
import { alarmHoldsText } from '../alarms/alarms.ts';
import { printable } from '../access/audit-text.ts';
import { readablePrincipal } from '../access/caller.ts';
import type { GateChange, GateStatus } from './state.ts';
import { revisionText } from '../model/revision-text.ts';

/** `2026-03-26T11:00:00Z`: ISO 8601 without milliseconds. */
export function formatInstant(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, 'Z');
}

/** `gate 'sre-approval' is open until 2026-03-26T11:00:00Z (open by alice (role Approver, 1234…): CHG-1234)` */
export function describeGate(
  status: GateStatus,
  next?: GateChange,
  pending?: PendingApprovals,
  approvers = 1,
): string {
  if (status.problem) return `gate '${status.name}' is closed: ${printable(status.problem)}`;
  const parts = [`gate '${status.name}' is ${status.state}`];
  if (status.revision) parts.push(`for ${revisionText(status.revision, 'claimed')} only`);
  if (status.deliveries) parts.push(`for deliveries ${status.deliveries.join(', ')} only`);
  if (status.until) parts.push(`until ${formatInstant(status.until)}`);
  else if (next) parts.push(`until ${formatInstant(next.at)}`);
  const request = status.lastRequest;
  if (status.closedBy) {
    parts.push(`(${printable(status.closedBy.reason)})`);
  } else if (status.byRequest && request) {
    parts.push(
      `(${request.action} by ${requestAuthors(request)}${request.reason ? `: ${printable(request.reason)}` : ''})`,
    );
  } else {
    parts.push('(default)');
  }
  if (pending) {
    const by = pending.approvals.map((approval) => readablePrincipal(approval.principal, true)).join(', ');
    parts.push(
      `; ${pending.approvals.length} of ${approvers} approvals for ${revisionText(pending.revision, 'claimed')}${pending.deliveries ? ` (deliveries ${pending.deliveries.join(', ')})` : ''} (by ${by}), until ${formatInstant(pending.expiresAt)}`,
    );
  }
  return parts.join(' ').replace(' ; ', '; ');
}

/** Who a request is by, readably: every approver when it took more than one. */
export function requestAuthors(
  request: Pick<NonNullable<GateStatus['lastRequest']>, 'approvedBy' | 'requestedBy' | 'verified' | 'source'>,
): string {
  return (request.approvedBy ?? [request.requestedBy])
    .map((principal) => readablePrincipal(principal, request.verified, request.source))
    .join(' and ');
}

/**
 * One clause per gate holding `held`: `waiting for gate 'sre-approval' (closed; opens at …)`,
 * or, for a gate open only for another revision, `sha256:… (tag 1.3.0) awaits approval at gate …`
 * (revisions as revisionText shows them: the held one resolved by sluice, the approved one claimed).
 */
export function waitingMessage(blocking: readonly BlockingGate[], held?: string): string {
  return blocking
    .map((gate) => {
      const approve = held ? `sluice gate open ${gate.name} --revision ${held}` : undefined;
      if (gate.openFor?.deliveries) {
        return `waiting for gate '${gate.name}' (open only for ${gate.openFor.deliveries.join(', ')}, approved by ${gate.openFor.approvedBy}; open it for this delivery with --delivery)`;
      }
      if (gate.openFor) {
        return `${held ? revisionText(held, 'checked') : 'this revision'} awaits approval at gate '${gate.name}' (open only for ${revisionText(gate.openFor.revision, 'claimed')}, approved by ${gate.openFor.approvedBy})${approve ? `; approve it with: ${approve}` : ''}`;
      }
      if (gate.closedByAlarms?.length)
        return `waiting for gate '${gate.name}' (closed by ${alarmHoldsText(gate.closedByAlarms)}; it opens when the alarm clears)`;
      if (gate.problem) return `waiting for gate '${gate.name}' (closed: ${printable(gate.problem)})`;
      if (gate.closedBy) {
        const until = gate.opensAt ? `opens at ${formatInstant(gate.opensAt)}` : 'no opening known';
        return `waiting for gate '${gate.name}' (closed by ${printable(gate.closedBy)}; ${until})`;
      }
      const opens = gate.opensAt
        ? `opens at ${formatInstant(gate.opensAt)}`
        : gate.approvesRevisions && approve
          ? `approve this revision with: ${approve}`
          : 'no opening scheduled: open it with sluice gate open';
      return `waiting for gate '${gate.name}' (closed; ${opens})`;
    })
    .join('; ');
}
