// An alarm's state change (EventBridge "CloudWatch Alarm State Change") reconciles the deliveries
// using a gate that names the alarm, so a release held by the alarm goes out the moment it clears.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { deliveriesForEvent } from '../../../functions/core/reconcile/triggers.ts';
import { reconcileHandler } from '../../../functions/reconcile/handler.ts';
import { alarmStateChangeEvent, createAlarm, setAlarmState } from '../../support/alarms.ts';
import { engineDeps, pushFiles, reconciledBy, registerDelivery, run } from '../../support/deliveries.ts';
import { configMapValue, configMapYaml, registerGate } from '../../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const context = { awsRequestId: 'req-alarm' };

describe('an alarm state change', () => {
  it('reconciles the deliveries held by a gate naming the alarm once it clears, and only those', async () => {
    const deps = engineDeps();
    const [alarm, other] = [await createAlarm('ALARM'), await createAlarm('ALARM')];
    const [gate, otherGate] = [uniqueName('healthy'), uniqueName('other')];
    await registerGate(deps, { name: gate, default: 'open', alarms: [alarm] });
    await registerGate(deps, { name: otherGate, default: 'open', alarms: [other] });
    const ns = uniqueName('alarm-trigger');
    await createNamespace(bed.kubeConfig(), ns);
    const [held, bystander] = [uniqueName('held'), uniqueName('bystander')];
    const [repository, otherRepository] = [uniqueName('alarms/held'), uniqueName('alarms/other')];
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMapYaml('held', ns, 'v1') });
    await pushFiles(bed, otherRepository, 'main', { 'cm.yaml': configMapYaml('other', ns, 'v1') });
    await registerDelivery(deps, bed, { name: held, repository, gates: [{ name: gate }] });
    await registerDelivery(deps, bed, {
      name: bystander,
      repository: otherRepository,
      gates: [{ name: otherGate }],
    });
    expect(await run(held, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });

    const handler = reconcileHandler(() => deps);
    // Entering ALARM reconciles nothing: the next run finds the gate closed anyway.
    expect(await reconciledBy(handler(alarmStateChangeEvent(alarm, 'ALARM', 'OK'), context))).toEqual([]);

    await setAlarmState(alarm, 'OK');
    const results = await reconciledBy(handler(alarmStateChangeEvent(alarm, 'OK', 'ALARM'), context));
    expect(results).toEqual([expect.objectContaining({ delivery: held, outcome: 'Succeeded' })]);
    expect(await configMapValue(core, 'held', ns)).toBe('v1');
    expect(await configMapValue(core, 'other', ns)).toBeUndefined();
  });

  it('matches a gate naming the alarm by ARN, by the ARN the event carries', async () => {
    const deps = engineDeps();
    const alarm = await createAlarm('OK');
    const arn = `arn:aws:cloudwatch:us-east-1:000000000000:alarm:${alarm}`;
    const [byArn, byName] = [uniqueName('by-arn'), uniqueName('by-name')];
    await registerGate(deps, { name: byArn, default: 'open', alarms: [arn] });
    await registerGate(deps, { name: byName, default: 'open', alarms: [alarm] });
    const [one, two] = [uniqueName('one'), uniqueName('two')];
    await registerDelivery(deps, bed, {
      name: one,
      repository: uniqueName('alarms/one'),
      gates: [{ name: byArn }],
    });
    await registerDelivery(deps, bed, {
      name: two,
      repository: uniqueName('alarms/two'),
      gates: [{ name: byName }],
    });

    expect(await deliveriesForEvent(alarmStateChangeEvent(alarm, 'OK', 'ALARM'), deps.db)).toEqual(
      [one, two].sort(),
    );
    // The same name in another region is another alarm: only the gate naming it by name (here) matches.
    const elsewhere = alarmStateChangeEvent(alarm, 'OK', 'ALARM', { region: 'eu-west-1' });
    expect(await deliveriesForEvent(elsewhere, deps.db)).toEqual([two]);
  });
});
