import { Duration, TimeZone } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { formatDuration, type Delivery, type Gate } from '../functions/core/config/index.ts';
import { warnOfSkippedScheduleTimes } from './warnings.ts';
import { stalenessWindow } from './alarms.ts';

/** EventBridge Scheduler's longest flexible time window. */
const MAX_FLEXIBLE_WINDOW_MINUTES = 1440;

export interface GateSchedulesProps {
  readonly gates: readonly Gate[];
  readonly gateFunction: lambda.IFunction;
  /** The role Scheduler assumes to invoke the gate function. */
  readonly role: iam.IRole;
  readonly group: scheduler.IScheduleGroup;
  /** Where a firing the gate function could not be invoked for goes. */
  readonly deadLetterQueue: sqs.IQueue;
}

/**
 * How often Scheduler retries invoking the gate function for one firing, within the firing's hour.
 * The freeze holds without it (state is computed from the cron); the catch-up reconciles and the
 * audit entry wait for it.
 */
export const GATE_SCHEDULE_RETRIES = 10;

/** The gate request a schedule sends, as the gate function's event. */
export function gateScheduleInput(gate: Gate, index: number): Record<string, string> {
  const schedule = gate.schedules[index]!;
  const windowMs = schedule.windowMs ?? gate.windowMs;
  return {
    gate: gate.name,
    action: schedule.action,
    ...(windowMs !== undefined && { window: formatDuration(windowMs) }),
    requestedBy: `schedule/${gate.name}/${index}`,
    reason: `schedule "${schedule.cron}" (${schedule.timeZone})`,
    source: 'schedule',
    // The firing time, not the arrival time, orders a late or retried delivery among other requests.
    requestedAt: scheduler.ContextAttribute.scheduledTime,
  };
}

/** One EventBridge Scheduler cron schedule (in its time zone) per gate schedule, invoking the gate function. */
export class GateSchedules extends Construct {
  readonly schedules: scheduler.Schedule[] = [];

  constructor(scope: Construct, id: string, props: GateSchedulesProps) {
    super(scope, id);
    for (const gate of props.gates) {
      warnOfSkippedScheduleTimes(this, gate, new Date());
      gate.schedules.forEach((schedule, index) => {
        this.schedules.push(
          new scheduler.Schedule(this, `${gate.name}-${index}`, {
            schedule: scheduler.ScheduleExpression.expression(
              `cron(${schedule.cron})`,
              TimeZone.of(schedule.timeZone),
            ),
            target: new targets.LambdaInvoke(props.gateFunction, {
              input: scheduler.ScheduleTargetInput.fromObject(gateScheduleInput(gate, index)),
              role: props.role,
              maxEventAge: Duration.hours(1),
              retryAttempts: GATE_SCHEDULE_RETRIES,
              deadLetterQueue: props.deadLetterQueue,
            }),
            scheduleGroup: props.group,
            description: `sluice: ${schedule.action} gate ${gate.name} at "${schedule.cron}" (${schedule.timeZone})`,
          }),
        );
      });
    }
  }
}

export interface IntervalSchedulesProps {
  readonly deliveries: readonly Delivery[];
  readonly reconcileFunction: lambda.IFunction;
  /** The role Scheduler assumes to invoke the reconcile function. */
  readonly role: iam.IRole;
  readonly group: scheduler.IScheduleGroup;
  /** Where a run the reconcile function could not be invoked for goes. */
  readonly deadLetterQueue: sqs.IQueue;
  /**
   * Spread each delivery's runs over its interval (a flexible time window), so that deliveries
   * deployed together do not all run in the same second.
   * @default true
   */
  readonly spread?: boolean;
}

/**
 * The flexible time window of an interval schedule: Scheduler invokes each firing at a time of its
 * choosing within the window after the scheduled time, so a thousand deliveries of a 5-minute
 * interval arrive over 5 minutes, not at once. The window is the interval, but small enough that
 * two runs (at most interval + window apart) always fall inside the staleness alarm's window:
 * half of what that window leaves beyond one interval. Whole minutes, at most Scheduler's 1440;
 * none (OFF) when that is less than one. An interval no staleness alarm watches (a fleet's longer
 * ones, a suspended delivery) is spread over the interval itself.
 */
export function intervalTimeWindow(intervalMs: number): scheduler.TimeWindow {
  const intervalMinutes = Math.floor(intervalMs / 60_000);
  const window = stalenessWindow(intervalMs);
  const room = window ? (window.periodMinutes * window.periods - intervalMinutes) / 2 : intervalMinutes;
  const minutes = Math.floor(Math.min(intervalMinutes, room, MAX_FLEXIBLE_WINDOW_MINUTES));
  return minutes >= 1 ? scheduler.TimeWindow.flexible(Duration.minutes(minutes)) : scheduler.TimeWindow.off();
}

/**
 * One rate schedule per delivery at its interval (drift correction), spread over the interval;
 * disabled while the delivery is suspended.
 */
export class IntervalSchedules extends Construct {
  readonly schedules: scheduler.Schedule[] = [];

  constructor(scope: Construct, id: string, props: IntervalSchedulesProps) {
    super(scope, id);
    for (const delivery of props.deliveries) {
      const interval = Duration.millis(delivery.intervalMs);
      this.schedules.push(
        new scheduler.Schedule(this, delivery.name, {
          schedule: scheduler.ScheduleExpression.rate(interval),
          timeWindow:
            (props.spread ?? true) ? intervalTimeWindow(delivery.intervalMs) : scheduler.TimeWindow.off(),
          target: new targets.LambdaInvoke(props.reconcileFunction, {
            input: scheduler.ScheduleTargetInput.fromObject({ delivery: delivery.name }),
            role: props.role,
            // A run that could not start is superseded by the next one.
            maxEventAge: Duration.millis(Math.min(Math.max(delivery.intervalMs, 60_000), 86_400_000)),
            retryAttempts: 2,
            deadLetterQueue: props.deadLetterQueue,
          }),
          scheduleGroup: props.group,
          enabled: !delivery.suspend,
          description: `sluice: reconcile delivery ${delivery.name} every ${formatDuration(delivery.intervalMs)}`,
        }),
      );
    }
  }
}

export interface GateStateSchedulesProps {
  readonly gates: readonly Gate[];
  readonly gateFunction: lambda.IFunction;
  /** The role Scheduler assumes to invoke the gate function. */
  readonly role: iam.IRole;
  readonly group: scheduler.IScheduleGroup;
  readonly deadLetterQueue: sqs.IQueue;
  /** Minutes between two reads. */
  readonly rateMinutes: number;
}

/**
 * For the dashboard: one rate schedule per gate that has the gate function read the gate's state
 * (`{"gate", "action": "status"}`), which records GateState, the state a delivery meets (alarms,
 * freezes, calendar events and Change Calendars included). The cheapest truthful source: a request
 * or a reconcile run happens only now and then, and neither sees a freeze start or a window end.
 * A read costs one invocation (a table read, and an alarm or calendar read if the gate has them);
 * a lost one is just a missing data point.
 */
export class GateStateSchedules extends Construct {
  readonly schedules: scheduler.Schedule[] = [];

  constructor(scope: Construct, id: string, props: GateStateSchedulesProps) {
    super(scope, id);
    for (const gate of props.gates)
      this.schedules.push(
        new scheduler.Schedule(this, gate.name, {
          schedule: scheduler.ScheduleExpression.rate(Duration.minutes(props.rateMinutes)),
          target: new targets.LambdaInvoke(props.gateFunction, {
            input: scheduler.ScheduleTargetInput.fromObject({ gate: gate.name, action: 'status' }),
            role: props.role,
            // A read that could not be made is superseded by the next one.
            maxEventAge: Duration.minutes(props.rateMinutes),
            retryAttempts: 0,
            deadLetterQueue: props.deadLetterQueue,
          }),
          scheduleGroup: props.group,
          description: `sluice: read gate ${gate.name}'s state every ${props.rateMinutes} minutes (the dashboard's GateState)`,
        }),
      );
  }
}
