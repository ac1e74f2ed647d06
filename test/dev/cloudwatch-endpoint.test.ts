// The CloudWatch stand-in, through @aws-sdk/client-cloudwatch and the reader alarm gates use:
// alarms are created in INSUFFICIENT_DATA, moved by SetAlarmState, read by name.
import { CloudWatchClient, PutMetricAlarmCommand, SetAlarmStateCommand } from '@aws-sdk/client-cloudwatch';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudWatchEndpoint } from '../../dev/cloudwatch-endpoint.ts';
import { cloudWatchAlarmStates } from '../../functions/core/aws/cloudwatch-alarms.ts';

const server = createCloudWatchEndpoint({ region: 'eu-west-1', account: '123456789012' });
let client: CloudWatchClient;

beforeAll(async () => {
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = new CloudWatchClient({
    endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(() => new Promise((done) => server.close(done)));

const alarm = (AlarmName: string) =>
  new PutMetricAlarmCommand({
    AlarmName,
    MetricName: 'Errors',
    Namespace: 'Checkout',
    Statistic: 'Sum',
    Period: 60,
    EvaluationPeriods: 1,
    Threshold: 5,
    ComparisonOperator: 'GreaterThanThreshold',
  });

describe('the CloudWatch stand-in', () => {
  it('reads alarms by name in the state SetAlarmState gave them, and leaves unknown names out', async () => {
    await client.send(alarm('checkout-errors'));
    await client.send(alarm('latency'));
    const reader = cloudWatchAlarmStates(client);
    const created = await reader.readAlarms(['checkout-errors', 'latency', 'nope']);
    expect(created.map(({ name, arn, state }) => ({ name, arn, state }))).toEqual([
      {
        name: 'checkout-errors',
        arn: 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:checkout-errors',
        state: 'INSUFFICIENT_DATA',
      },
      {
        name: 'latency',
        arn: 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:latency',
        state: 'INSUFFICIENT_DATA',
      },
    ]);
    await client.send(
      new SetAlarmStateCommand({ AlarmName: 'checkout-errors', StateValue: 'ALARM', StateReason: 'test' }),
    );
    const [read] = await reader.readAlarms(['checkout-errors']);
    expect(read).toMatchObject({ state: 'ALARM' });
    expect(Date.parse(read!.since!)).not.toBeNaN();
  });

  it('answers an unknown alarm with ResourceNotFound, as CloudWatch does', async () => {
    await expect(
      client.send(new SetAlarmStateCommand({ AlarmName: 'missing', StateValue: 'OK', StateReason: 'x' })),
    ).rejects.toMatchObject({ name: 'ResourceNotFound' });
  });
});
