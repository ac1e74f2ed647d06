import { gatesNamingAlarm } from '../alarms/alarm-lookup.ts';
import { deliveriesOfRepository, deliveriesUsingGate } from '../store/delivery-lookups.ts';
import type { TableClient } from '../store/table-client.ts';

/** The ECR push event EventBridge delivers ("ECR Image Action", action-type PUSH). */
export interface EcrImageActionEvent {
  readonly source: 'aws.ecr';
  readonly 'detail-type': 'ECR Image Action';
  readonly account: string;
  readonly region: string;
  readonly detail: {
    readonly 'action-type': string;
    readonly result: string;
    readonly 'repository-name': string;
    readonly 'image-tag'?: string;
    readonly 'image-digest'?: string;
  };
}

/** Sent when a gate opens at the end of a window (by a one-time EventBridge Scheduler schedule). */
export interface GateOpenedEvent {
  readonly gateOpened: string;
}

/** The event EventBridge delivers when a CloudWatch alarm changes state (the construct routes those of alarm gates). */
export interface AlarmStateChangeEvent {
  readonly source: 'aws.cloudwatch';
  readonly 'detail-type': 'CloudWatch Alarm State Change';
  readonly account: string;
  readonly region: string;
  /** The alarm's ARN. */
  readonly resources: readonly string[];
  readonly detail: {
    readonly alarmName: string;
    readonly state: { readonly value: string; readonly reason?: string; readonly timestamp?: string };
    readonly previousState?: {
      readonly value: string;
      readonly reason?: string;
      readonly timestamp?: string;
    };
  };
}

/** What starts a reconcile (the reconcile function's event); not the outcome it records (`ReconcileEvent`). */
export type ReconcileTrigger =
  { readonly delivery: string } | EcrImageActionEvent | GateOpenedEvent | AlarmStateChangeEvent;

function isAlarmEvent(event: unknown): event is AlarmStateChangeEvent {
  const e = event as Partial<AlarmStateChangeEvent> | null;
  return (
    e?.source === 'aws.cloudwatch' &&
    e['detail-type'] === 'CloudWatch Alarm State Change' &&
    typeof e.detail?.alarmName === 'string'
  );
}

/**
 * The deliveries using a gate that names the alarm, when it leaves ALARM: held deliveries catch
 * up at once. Entering ALARM reconciles nothing: the next run finds the gate closed.
 */
async function deliveriesWatchingAlarm(event: AlarmStateChangeEvent, db: TableClient): Promise<string[]> {
  if (event.detail.state.value === 'ALARM') return [];
  const alarm = { name: event.detail.alarmName, ...(event.resources[0] && { arn: event.resources[0] }) };
  const deliveries = new Set<string>();
  for (const gate of await gatesNamingAlarm(db, alarm))
    for (const delivery of await deliveriesUsingGate(db, gate)) deliveries.add(delivery);
  return [...deliveries].sort();
}

function isEcrEvent(event: unknown): event is EcrImageActionEvent {
  const e = event as Partial<EcrImageActionEvent> | null;
  return e?.source === 'aws.ecr' && e['detail-type'] === 'ECR Image Action' && typeof e.detail === 'object';
}

/**
 * The deliveries an event asks to reconcile: the one it names, every delivery using a gate that
 * just opened or whose alarm left ALARM, or for a successful ECR push every delivery whose source
 * is that repository (in that account and region). Gate and repository are looked up in the table's index, not scanned.
 */
export async function deliveriesForEvent(event: unknown, db: TableClient): Promise<string[]> {
  const named = (event as { delivery?: unknown } | null)?.delivery;
  if (typeof named === 'string' && named !== '') return [named];
  const gate = (event as Partial<GateOpenedEvent> | null)?.gateOpened;
  if (typeof gate === 'string' && gate !== '') return deliveriesUsingGate(db, gate);
  if (isAlarmEvent(event)) return deliveriesWatchingAlarm(event, db);
  if (!isEcrEvent(event)) {
    throw new Error(
      `unrecognised event: expected {"delivery":"<name>"}, {"gateOpened":"<gate>"}, an ECR "ECR Image Action" or a "CloudWatch Alarm State Change" event, got ${JSON.stringify(event).slice(0, 200)}`,
    );
  }
  if (event.detail['action-type'] !== 'PUSH' || event.detail.result !== 'SUCCESS') return [];
  return deliveriesOfRepository(db, event.detail['repository-name'], event);
}
