import { Aspects, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct, IConstruct } from 'constructs';

/** Construct ids that only group alarms (or are the alarm itself) and say nothing in a name. */
const SILENT = new Set(['Resource', 'Alarm', 'Alarms', 'FunctionAlarms']);
const SPOKEN: Record<string, string> = { FleetAlarms: 'fleet' };

/**
 * `<prefix>-<what>` from the alarm's place under `owner`: `Alarms/web-failed` → `<prefix>-web-failed`,
 * `FunctionAlarms/gate-errors` → `<prefix>-gate-errors`, `Failures/Alarm` → `<prefix>-failures`.
 * Construct ids are stable, so the names are.
 */
export function alarmNameFor(prefix: string, owner: Construct, alarm: IConstruct): string {
  const relative = alarm.node.scopes.slice(owner.node.scopes.length).map((scope) => scope.node.id);
  const words = relative
    .filter((id) => !SILENT.has(id))
    .map((id) => SPOKEN[id] ?? id.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase());
  return [prefix, ...words].join('-');
}

/**
 * Names every CloudWatch alarm the construct makes, now and later (a grant's alarm), unless it
 * has a name: stable names an operator can find, silence or route by.
 */
export function nameAlarms(owner: Construct, prefix: string): void {
  Aspects.of(owner).add({
    visit(node: IConstruct) {
      if (node instanceof cloudwatch.CfnAlarm && unnamed(node))
        node.alarmName = alarmNameFor(prefix, owner, node);
    },
  });
}

/** An L2 alarm without a name holds a lazy physical name that resolves to nothing. */
function unnamed(alarm: cloudwatch.CfnAlarm): boolean {
  const name = alarm.alarmName;
  return name === undefined || (Token.isUnresolved(name) && Stack.of(alarm).resolve(name) === undefined);
}
