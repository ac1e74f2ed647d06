// An alarm closing a wave's gate halts a rollout, on the real components (kube-apiserver,
// registry, DynamoDB Local, the CloudWatch stand-in): later waves keep their revision, `sluice
// rollout status` says why and what to do, the halt outlasts the alarm, and a resume after the
// alarm cleared lets the waves go on.
import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../../functions/core/reconcile/events.ts';
import { reconcile } from '../../../functions/core/reconcile/reconcile.ts';
import { deliveriesForEvent } from '../../../functions/core/reconcile/triggers.ts';
import { getGeneration, listRolloutActions } from '../../../functions/core/store/rollouts.ts';
import { alarmStateChangeEvent, createAlarm, setAlarmState } from '../../support/alarms.ts';
import { sluice } from '../../support/cli.ts';
import { registerGate } from '../../support/gates.ts';
import { fleet } from '../../support/rollouts.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();

describe('a rollout behind an alarm gate', () => {
  it('halts when the alarm closes a wave gate; later waves keep their revision until a resume after it cleared', async () => {
    const alarm = await createAlarm('OK');
    const gate = uniqueName('eu-health');
    const published: { type: string; event: RolloutEvent }[] = [];
    const f = await fleet(bed, {
      waves: [1, 1, 1],
      waveGate: { wave: 1, gate },
      start: new Date().toISOString(),
      deps: {
        events: {
          publish: async () => {},
          rollout: async (type, event) => void published.push({ type, event }),
        },
      },
    });
    const seen = () =>
      published.map(
        ({ type, event }) => `${type} ${event.generation}${event.wave ? ` wave ${event.wave}` : ''}`,
      );
    await registerGate(f.deps, { name: gate, default: 'open', alarms: [alarm] });
    const [[canary], [eu], [last]] = f.waves as [[string], [string], [string]];

    // v1 goes through every wave (the follow-ups run in this process).
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect((await f.state()).phase).toBe('Complete');
    expect(await f.value(last)).toBe('v1');
    expect(seen()).toEqual([
      'Rollout Wave Started 1 wave 1',
      'Rollout Wave Started 1 wave 2',
      'Rollout Wave Started 1 wave 3',
      'Rollout Complete 1',
    ]);
    published.length = 0;

    // v2: the canary takes it; then the alarm fires before wave 2 has taken it.
    f.loseEvents();
    await f.push('v2');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    const v2 = (await getGeneration(f.deps.db, f.name))!;
    await setAlarmState(alarm, 'ALARM');
    const held = await reconcile(eu, f.deps);
    expect(held).toMatchObject({
      outcome: 'Blocked',
      reason: 'RolloutHalted',
      message: expect.stringContaining(`wave 2's gate '${gate}' is closed by alarm '${alarm}'`),
    });
    expect(await reconcile(last, f.deps)).toMatchObject({ reason: 'RolloutHalted' });
    expect([await f.value(eu), await f.value(last)]).toEqual(['v1', 'v1']);
    expect(await f.state()).toMatchObject({
      phase: 'Halted',
      halt: { wave: 2, recorded: true, by: 'sluice' },
    });
    // Published once, by the run that found it, however many runs are held by it.
    expect(seen()).toEqual([
      'Rollout Wave Started 2 wave 1',
      'Rollout Wave Started 2 wave 2',
      'Rollout Halted 2 wave 2',
    ]);
    expect(published[2]!.event).toMatchObject({
      rollout: f.name,
      revision: v2.revision,
      by: 'sluice',
      why: expect.stringContaining(`alarm '${alarm}'`),
    });
    const status = await sluice('rollout', 'status', f.name);
    expect(status.stdout).toContain(
      `${v2.revision}: halted in wave 2: wave 2's gate '${gate}' is closed by alarm '${alarm}'`,
    );
    expect(status.stdout).toContain(
      `to do: once the cause is gone, 'sluice rollout resume ${f.name} --reason …'`,
    );

    // The alarm clears: the halt outlasts it, until a resume.
    await setAlarmState(alarm, 'OK');
    f.clock.advance(60_000);
    expect(await reconcile(eu, f.deps)).toMatchObject({ reason: 'RolloutHalted' });
    expect(await f.value(eu)).toBe('v1');
    const resumed = await f.act('resume', 'eu-health alarm cleared');
    expect(resumed.reconciling).toEqual([eu]);
    expect(f.gateDeps.reconciled).toMatchObject([
      { delivery: eu, outcome: 'Succeeded', revision: v2.revision },
    ]);
    expect(await f.value(eu)).toBe('v2');
    expect(await reconcile(last, f.deps)).toMatchObject({ outcome: 'Succeeded', revision: v2.revision });
    expect(await f.value(last)).toBe('v2');
    expect((await f.state()).phase).toBe('Complete');
    expect(seen().slice(3)).toEqual(['Rollout Wave Started 2 wave 3', 'Rollout Complete 2']);
  });

  it('a first deploy behind a new alarm (no data yet) waits, and goes out when the alarm reports OK, with no resume', async () => {
    // A new alarm starts in INSUFFICIENT_DATA (a 5xx count often has no data while healthy).
    const alarm = await createAlarm();
    const gate = uniqueName('first-health');
    const f = await fleet(bed, {
      waves: [1, 1],
      waveGate: { wave: 0, gate },
      start: new Date().toISOString(),
    });
    await registerGate(f.deps, { name: gate, default: 'open', alarms: [alarm] });
    const [[first], [second]] = f.waves as [[string], [string]];

    // Generation 1: held at the wave's gate, not halted.
    expect(await reconcile(first, f.deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'RolloutWaiting',
      message: expect.stringContaining(`wave 1 of 2 waits for gate '${gate}' to open`),
    });
    expect(await reconcile(second, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect(await f.state()).toMatchObject({ phase: 'Progressing', waves: [{ phase: 'Gated' }, {}] });
    expect(await listRolloutActions(f.deps.db, f.name)).toEqual([]);
    const status = await sluice('rollout', 'status', f.name);
    expect(status.stdout).not.toContain('halted');

    // The alarm's first evaluation: OK. Its state change reconciles the wave gate's members.
    await setAlarmState(alarm, 'OK');
    const woken = await deliveriesForEvent(
      alarmStateChangeEvent(alarm, 'OK', 'INSUFFICIENT_DATA'),
      f.deps.db,
    );
    expect(woken).toContain(first);
    f.clock.advance(60_000);
    expect(await reconcile(first, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect([await f.value(first), await f.value(second)]).toEqual(['v1', 'v1']);
    expect((await f.state()).phase).toBe('Complete');
    expect(await listRolloutActions(f.deps.db, f.name)).toEqual([]);
  });
});
