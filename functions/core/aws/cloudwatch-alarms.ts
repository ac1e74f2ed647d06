// The AlarmStateReader of alarm gates: CloudWatch DescribeAlarms.
import { DescribeAlarmsCommand, type CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { AlarmReading, AlarmStateReader } from '../alarms/alarms.ts';

/**
 * Reads alarms by name with DescribeAlarms, metric and composite alarms alike: one call for the
 * names of a gate (at most 100), following NextToken should CloudWatch page the answer.
 */
export function cloudWatchAlarmStates(client: CloudWatchClient): AlarmStateReader {
  return {
    async readAlarms(names) {
      const readings: AlarmReading[] = [];
      let nextToken: string | undefined;
      do {
        const page = await client.send(
          new DescribeAlarmsCommand({
            AlarmNames: [...names],
            AlarmTypes: ['MetricAlarm', 'CompositeAlarm'],
            MaxRecords: 100,
            ...(nextToken && { NextToken: nextToken }),
          }),
        );
        for (const alarm of [...(page.MetricAlarms ?? []), ...(page.CompositeAlarms ?? [])]) {
          if (!alarm.AlarmName || !alarm.AlarmArn || !alarm.StateValue) continue;
          readings.push({
            name: alarm.AlarmName,
            arn: alarm.AlarmArn,
            state: alarm.StateValue,
            ...(alarm.StateUpdatedTimestamp && { since: alarm.StateUpdatedTimestamp.toISOString() }),
          });
        }
        nextToken = page.NextToken;
      } while (nextToken);
      return readings;
    },
  };
}
