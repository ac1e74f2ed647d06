// What the reconcile function sets in motion itself, checked on the wire with the handler invoked
// as Lambda invokes it, on the real components: the retry of a failed run (retryInterval, a
// Scheduler CreateSchedule) and the deliveries waiting on one that succeeded (dependsOn, a Lambda Invoke).
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneTimeScheduleName } from '../../../functions/core/aws/one-time-schedule.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { handler as lambdaHandler } from '../../../functions/reconcile/handler.ts';
import { oneTimeScheduleBody, startAwsRecorder } from '../../support/aws-recorder.ts';
import { engineDeps, pushFiles, registerDelivery, reconciledBy } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const handler = (...args: Parameters<typeof lambdaHandler>) => reconciledBy(lambdaHandler(...args));
const deps = engineDeps();
const RECONCILE_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:sluice-reconcile';
const SCHEDULER_ROLE = 'arn:aws:iam::000000000000:role/sluice-scheduler';
const FAILURE_QUEUE = 'arn:aws:sqs:us-east-1:000000000000:sluice-failures';
// Lambda hands the handler the ARN it was invoked by, with the alias when there is one.
const context = { awsRequestId: 'req-retry', invokedFunctionArn: `${RECONCILE_ARN}:live` } as Context;
let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;

beforeAll(async () => {
  recorder = await startAwsRecorder();
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SCHEDULER: recorder.url,
    AWS_ENDPOINT_URL_LAMBDA: recorder.url,
    SLUICE_WINDOW_SCHEDULE_GROUP: 'sluice-one-time',
    SLUICE_SCHEDULER_ROLE_ARN: SCHEDULER_ROLE,
    SLUICE_FAILURE_QUEUE_ARN: FAILURE_QUEUE,
  });
});
afterAll(async () => {
  await recorder.stop();
});

const configMap = (ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: retried\n  namespace: ${ns}\ndata:\n  k: v\n`;

function schedulesSince(before: number) {
  return recorder.requests.slice(before).filter((r) => r.path.startsWith('/schedules/'));
}

describe('retryInterval', () => {
  it('a failed run schedules one retry retryInterval later; the run that succeeds clears it', async () => {
    const ns = uniqueName('retry');
    const repository = uniqueName('retry/app');
    const name = uniqueName('retry');
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': 'kind: [unclosed\n' });
    await registerDelivery(deps, bed, { name, repository, interval: '10m', retryInterval: '2m' });
    const before = recorder.requests.length;

    const started = Date.now();
    const [failed] = await handler({ delivery: name }, context);
    expect(failed).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
    const created = schedulesSince(before);
    expect(created).toHaveLength(1);
    const minute = new Date(Date.parse(failed!.nextRetryAt!));
    // The first whole minute at least 2 minutes after the failure.
    expect(minute.getTime() % 60_000).toBe(0);
    expect(minute.getTime()).toBeGreaterThanOrEqual(started + 120_000);
    expect(minute.getTime()).toBeLessThan(Date.now() + 180_000);
    expect(decodeURIComponent(created[0]!.path)).toBe(
      `/schedules/${oneTimeScheduleName({ kind: 'retry', name }, minute)}`,
    );
    expect(JSON.parse(created[0]!.body)).toMatchObject(
      oneTimeScheduleBody(minute, {
        group: 'sluice-one-time',
        functionArn: RECONCILE_ARN,
        roleArn: SCHEDULER_ROLE,
        input: { delivery: name },
        deadLetterArn: FAILURE_QUEUE,
      }),
    );
    expect((await getStatus(deps.db, name))?.nextRetryAt).toBe(minute.toISOString());

    // Another failed run before the retry (the interval schedule, a push) keeps the pending retry
    // rather than starting a second chain of them.
    const beforeSecond = recorder.requests.length;
    const [again] = await handler({ delivery: name }, context);
    expect(again).toMatchObject({ outcome: 'Failed', nextRetryAt: minute.toISOString() });
    expect(schedulesSince(beforeSecond)).toEqual([]);

    // What the schedule sends, once the artifact is fixed.
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns) });
    const afterFix = recorder.requests.length;
    const [retried] = await handler({ delivery: name }, context);
    expect(retried).toMatchObject({ outcome: 'Succeeded' });
    expect(retried!.nextRetryAt).toBeUndefined();
    expect(schedulesSince(afterFix)).toEqual([]);
    expect((await getStatus(deps.db, name))?.nextRetryAt).toBeUndefined();
  });

  it('schedules nothing without a retryInterval, or when the next interval run comes first', async () => {
    const repository = uniqueName('retry/none');
    await pushFiles(bed, repository, 'main', { 'cm.yaml': 'kind: [unclosed\n' });
    const [plain, longer] = [uniqueName('plain'), uniqueName('longer')];
    await registerDelivery(deps, bed, { name: plain, repository, interval: '10m' });
    await registerDelivery(deps, bed, { name: longer, repository, interval: '5m', retryInterval: '15m' });
    const before = recorder.requests.length;
    const results = await Promise.all([plain, longer].map((name) => handler({ delivery: name }, context)));
    expect(results.flat().map((r) => [r.outcome, r.nextRetryAt])).toEqual([
      ['Failed', undefined],
      ['Failed', undefined],
    ]);
    expect(schedulesSince(before)).toEqual([]);
    expect((await getStatus(deps.db, plain))?.nextRetryAt).toBeUndefined();
  });
});

describe('dependsOn', () => {
  it('a delivery that succeeds invokes the reconcile function, asynchronously, for each delivery waiting on it', async () => {
    const ns = uniqueName('follow');
    const [infraRepo, appRepo] = [uniqueName('follow/infra'), uniqueName('follow/app')];
    const [infra, app] = [uniqueName('infra'), uniqueName('app')];
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, appRepo, 'main', { 'cm.yaml': configMap(ns) });
    await registerDelivery(deps, bed, { name: infra, repository: infraRepo });
    await registerDelivery(deps, bed, { name: app, repository: appRepo, dependsOn: [infra] });
    expect((await handler({ delivery: app }, context))[0]).toMatchObject({ reason: 'DependencyNotReady' });

    await pushFiles(bed, infraRepo, 'main', { 'cm.yaml': configMap(ns).replace('retried', 'infra') });
    const before = recorder.requests.length;
    expect((await handler({ delivery: infra }, context))[0]).toMatchObject({ outcome: 'Succeeded' });
    const invokes = recorder.requests.slice(before).filter((r) => r.path.includes('/invocations'));
    expect(invokes.map((r) => decodeURIComponent(r.path))).toEqual([
      `/2015-03-31/functions/${RECONCILE_ARN}/invocations`,
    ]);
    expect(invokes[0]!.headers['x-amz-invocation-type']).toBe('Event');
    expect(JSON.parse(invokes[0]!.body)).toEqual({ delivery: app });
  });
});
