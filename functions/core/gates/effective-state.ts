// A gate's effective state, as a delivery meets it: an alarm closes it whatever its requests say,
// as a freeze, a calendar event or a CLOSED Change Calendar does; then a request or schedule
// firing; then its default. One answer, with its cause, for `sluice gates` (table and --json),
// the gate function's status and the dashboard's metric.
import type { GateState } from '../config/index.ts';
import type { AlarmHold } from '../model/status.ts';
import { alarmHoldsText } from '../alarms/alarms.ts';
import { printable } from '../access/audit-text.ts';
import { requestAuthors } from './messages.ts';
import type { GateStatus } from './state.ts';

/** What decides the state now. */
export type GateCause =
  'alarm' | 'freeze' | 'calendar' | 'change-calendar' | 'problem' | 'request' | 'schedule' | 'default';

export interface EffectiveGateState {
  readonly state: GateState;
  readonly cause: GateCause;
  /** `alarm 'shop-5xx' in ALARM since …`, `freeze "year end" (…)`, `open by alice: CHG-1`, `default`. */
  readonly why: string;
}

export function effectiveGateState(
  status: GateStatus,
  closedByAlarms: readonly AlarmHold[] | undefined,
): EffectiveGateState {
  if (closedByAlarms?.length) return { state: 'closed', cause: 'alarm', why: alarmHoldsText(closedByAlarms) };
  if (status.problem) return { state: 'closed', cause: 'problem', why: printable(status.problem) };
  if (status.closedBy)
    return { state: 'closed', cause: status.closedBy.cause, why: printable(status.closedBy.reason) };
  const request = status.lastRequest;
  if (status.byRequest && request)
    return {
      state: status.state,
      cause: request.source === 'schedule' ? 'schedule' : 'request',
      why: `${request.action} by ${requestAuthors(request)}${request.reason ? `: ${printable(request.reason)}` : ''}`,
    };
  return { state: status.state, cause: 'default', why: 'default' };
}
