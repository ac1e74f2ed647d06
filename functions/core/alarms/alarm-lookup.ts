// Which gates name a CloudWatch alarm: what an alarm's state change concerns.
import { alarmNameOf } from '../config/alarm-fields.ts';
import { getGate, listGateNames } from '../store/gates.ts';
import type { TableClient } from '../store/table-client.ts';

/** An alarm as its state-change event names it. */
export interface ChangedAlarm {
  readonly name: string;
  readonly arn?: string;
}

/**
 * Whether a gate's `alarms` entry means `alarm`: an ARN must be the alarm's ARN; a name is an
 * alarm of that name in the account and region sluice runs in (where its events arrive).
 */
export function namesAlarm(entry: string, alarm: ChangedAlarm): boolean {
  return alarmNameOf(entry) === entry ? entry === alarm.name : entry === alarm.arn;
}

/**
 * The registered gates naming `alarm` in their `alarms`. Gates are few (a handful per
 * installation), so they are read one by one rather than indexed.
 */
export async function gatesNamingAlarm(db: TableClient, alarm: ChangedAlarm): Promise<string[]> {
  const named: string[] = [];
  for (const name of await listGateNames(db)) {
    const gate = await getGate(db, name);
    if (gate?.alarms?.some((entry) => namesAlarm(entry, alarm))) named.push(name);
  }
  return named;
}
