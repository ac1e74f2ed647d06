// Everything that closes a gate for a period besides its requests: what the gate's spec says
// (dated freezes, calendars) and what is read from outside at each evaluation (SSM Change
// Calendars). Other outside conditions (CloudWatch alarms) are read here the same way.
import type { Gate } from '../config/index.ts';
import { calendarPeriods } from './calendars.ts';
import { changeCalendarPeriods, type ReadChangeCalendar } from './change-calendars.ts';
import type { ClosedPeriod } from './closed-periods.ts';
import { freezePeriods } from './freezes.ts';

/** The readers of outside state that gates depend on, passed in (AWS SDK clients in AWS). */
export interface GateConditions {
  /** `ssm:GetCalendarState`. @default - none: a gate with change calendars counts as closed */
  readonly changeCalendar?: ReadChangeCalendar;
}

/** Every period around `at` that `gate` is closed for whatever its requests say. */
export async function closedPeriodsOf(
  gate: Gate,
  at: Date,
  conditions: GateConditions = {},
): Promise<ClosedPeriod[]> {
  const [calendars, changeCalendars] = await Promise.all([
    calendarPeriods(gate, at),
    changeCalendarPeriods(gate, conditions.changeCalendar, at),
  ]);
  return [...freezePeriods(gate), ...calendars, ...changeCalendars];
}
