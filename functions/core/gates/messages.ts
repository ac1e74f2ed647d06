import type { BlockingGate } from '../store/status.ts';
import type { GateChange, GateStatus } from './state.ts';

/** `2026-03-26T11:00:00Z`: ISO 8601 without milliseconds. */
export function formatInstant(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, 'Z');
}

/** `gate 'sre-approval' is open until 2026-03-26T11:00:00Z (open by alice: CHG-1234)` */
export function describeGate(status: GateStatus, next?: GateChange): string {
  const parts = [`gate '${status.name}' is ${status.state}`];
  if (status.until) parts.push(`until ${formatInstant(status.until)}`);
  else if (next) parts.push(`until ${formatInstant(next.at)}`);
  const request = status.lastRequest;
  if (status.byRequest && request) {
    parts.push(`(${request.action} by ${request.requestedBy}${request.reason ? `: ${request.reason}` : ''})`);
  } else {
    parts.push('(default)');
  }
  return parts.join(' ');
}

/** `waiting for gate 'sre-approval' (closed; opens at 2026-03-26T11:00:00Z)`, one clause per gate. */
export function waitingMessage(blocking: readonly BlockingGate[]): string {
  return blocking
    .map((gate) => {
      const opens = gate.opensAt
        ? `opens at ${formatInstant(gate.opensAt)}`
        : 'no opening scheduled: open it with sluice gate open';
      return `waiting for gate '${gate.name}' (closed; ${opens})`;
    })
    .join('; ');
}
