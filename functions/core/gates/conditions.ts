// Everything that closes a gate besides its requests and schedules: what the gate's spec says
// (dated freezes, calendars) and what is read from outside at each evaluation (SSM Change
// Calendars, CloudWatch alarms). Read here, in one place, for every evaluation of a gate (a
// reconcile's, the brake's, diff's, the gate function's and `sluice gates`); never stored, so a
// lost event can neither open a freeze nor lift an alarm.
import type { Gate } from '../config/index.ts';
import type { AlarmHold } from '../model/status.ts';
import { alarmsHolding, type AlarmStateReader } from '../alarms/alarms.ts';
import { calendarPeriods } from '../calendars/calendars.ts';
import { changeCalendarPeriods, type ReadChangeCalendar } from '../calendars/change-calendars.ts';
import type { ClosedPeriod } from '../calendars/closed-periods.ts';
import { freezePeriods } from '../calendars/freezes.ts';
import { holidayPeriods } from '../calendars/holidays.ts';

/**
 * The readers of outside state that gates depend on, passed in (AWS SDK clients in AWS, the
 * stand-ins locally). A `ReconcileDeps` or `GateDeps` serves as one. A condition that cannot be
 * read (no reader, or the read fails) closes its gate, and says which.
 */
export interface GateConditionReaders {
  /** Reads the gates' `alarms` (CloudWatch DescribeAlarms). @default none: a gate with alarms is closed */
  readonly alarmStates?: AlarmStateReader;
  /** Reads the gates' `changeCalendars` (`ssm:GetCalendarState`). @default none: a gate with change calendars is closed */
  readonly changeCalendarStates?: ReadChangeCalendar;
}

/** What closes a gate at `at` whatever its requests say. */
export interface GateConditions {
  /**
   * Spans around `at` the gate is closed for: dated freezes, calendar events, Change Calendars
   * (CLOSED, unreadable, or the next closing of an OPEN one).
   */
  readonly periods: readonly ClosedPeriod[];
  /** The alarms holding it closed now (in ALARM, INSUFFICIENT_DATA when so configured, missing, unreadable). */
  readonly alarms: readonly AlarmHold[];
}

/** Reads every condition of `gate` at `at` (only those it names: a gate naming none reads nothing). */
export async function readGateConditions(
  gate: Gate,
  at: Date,
  readers: GateConditionReaders = {},
): Promise<GateConditions> {
  const [dated, changeCalendars, alarms] = await Promise.all([
    datedPeriodsOf(gate, at),
    changeCalendarPeriods(gate, readers.changeCalendarStates, at),
    alarmsHolding(gate, readers.alarmStates),
  ]);
  return { periods: [...dated, ...changeCalendars], alarms };
}

/**
 * The periods of `gate` its spec dates (freezes, calendar events and holidays around `at`): what closes it at
 * a known instant, read from nothing outside. Each one's start is a close (state.ts lastClosedAt).
 */
export async function datedPeriodsOf(gate: Gate, at: Date): Promise<ClosedPeriod[]> {
  const [calendars, holidays] = await Promise.all([calendarPeriods(gate, at), holidayPeriods(gate, at)]);
  return [...freezePeriods(gate), ...calendars, ...holidays];
}
