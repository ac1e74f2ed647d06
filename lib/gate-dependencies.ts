import { Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct, IConstruct } from 'constructs';
import { alarmNameOf } from '../functions/core/config/alarm-fields.ts';
import type { Gate } from '../functions/core/config/index.ts';

/** Change Calendars are SSM documents of this type. */
const CHANGE_CALENDAR = 'ChangeCalendar';

/** The last part of an ARN-or-name: `arn:…:document/<name>` → `<name>`. */
const documentNameOf = (calendar: string): string =>
  calendar.startsWith('arn:') ? calendar.slice(calendar.lastIndexOf('/') + 1) : calendar;

/**
 * What the app defines that `gate` waits on: the CloudWatch alarms it names (given as constructs,
 * or by a name or ARN an alarm of the app has) and the Change Calendars (SSM documents of the app
 * of that name). The gate's spec is written after them, and with it the deliveries and rollouts
 * using it, so that their first reconcile after a deploy finds them. Only what is in this stack,
 * or in a stack that does not depend on this one (a dependency on it would be a cycle), counts.
 */
export function gateWaitsOn(
  scope: Construct,
  gate: Gate,
  storedAlarms: readonly string[],
  alarmConstructs: readonly cloudwatch.IAlarm[],
): IConstruct[] {
  const stack = Stack.of(scope);
  const names = new Set(storedAlarms.filter((alarm) => !Token.isUnresolved(alarm)).map(alarmNameOf));
  const calendars = new Set((gate.changeCalendars ?? []).map(documentNameOf));
  const found: IConstruct[] = [...alarmConstructs];
  if (names.size === 0 && calendars.size === 0) return found;
  for (const node of scope.node.root.node.findAll()) {
    let named = false;
    if (node instanceof cloudwatch.CfnAlarm || node instanceof cloudwatch.CfnCompositeAlarm) {
      const name = node.alarmName;
      named = typeof name === 'string' && !Token.isUnresolved(name) && names.has(name);
    } else if (node instanceof ssm.CfnDocument) {
      const { name, documentType } = node;
      named = documentType === CHANGE_CALENDAR && typeof name === 'string' && calendars.has(name);
    }
    if (named && reachable(stack, node)) found.push(node);
  }
  return found;
}

/** Whether a construct is in `stack`, or in one that may come before it (it does not depend on `stack`). */
function reachable(stack: Stack, node: IConstruct): boolean {
  const other = Stack.of(node);
  if (other === stack) return true;
  return !dependsOn(other, stack, new Set());
}

function dependsOn(stack: Stack, on: Stack, seen: Set<Stack>): boolean {
  if (seen.has(stack)) return false;
  seen.add(stack);
  return stack.dependencies.some((dependency) => dependency === on || dependsOn(dependency, on, seen));
}

/**
 * Whether each of a gate's alarms is known to leave INSUFFICIENT_DATA by itself: an alarm of the
 * app that treats missing data as not breaching reports OK at its first evaluation, data or not.
 * False when any is not known so (an alarm elsewhere, or one that waits for data).
 */
export function alarmsReportWithoutData(
  alarms: readonly string[],
  alarmConstructs: readonly cloudwatch.IAlarm[],
  waitedOn: readonly IConstruct[],
): boolean {
  const notBreaching = (node: IConstruct | undefined) =>
    node instanceof cloudwatch.CfnAlarm &&
    node.treatMissingData === cloudwatch.TreatMissingData.NOT_BREACHING;
  const byName = new Map<string, IConstruct>();
  for (const node of waitedOn)
    if (node instanceof cloudwatch.CfnAlarm && typeof node.alarmName === 'string')
      byName.set(node.alarmName, node);
  const constructs = new Set(alarmConstructs.map((alarm) => alarm.node.defaultChild ?? alarm));
  const known = alarms.filter(
    (alarm) => !Token.isUnresolved(alarm) && notBreaching(byName.get(alarmNameOf(alarm))),
  );
  return known.length + [...constructs].filter(notBreaching).length >= alarms.length;
}
