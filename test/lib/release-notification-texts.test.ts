// The texts approvers receive, as EventBridge renders them: a synthesized Sluice stack's rules are
// loaded into the EventBridge stand-in (dev/eventbridge-endpoint.ts), the engine evaluates real
// gates registered in the local table (an approval, a schedule, a freeze, an alarm on the
// CloudWatch stand-in, a rollout's wave gate), builds the Release Waiting event of each hold
// (reconcile/release-waiting.ts) and publishes it with its own EventBridge sink through PutEvents;
// what the SNS topics receive is what is asserted. The gate function's Gate Override event, built
// by the engine, reaches the alarm topic the same way.
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { standInRef, writeEventRules } from '../../dev/event-rules.ts';
import { eventBridgeDeliveries } from '../../dev/eventbridge-endpoint.ts';
import { eventBridgeSink, putSluiceEvent } from '../../functions/core/aws/eventbridge-events.ts';
import { parseGate } from '../../functions/core/config/index.ts';
import { evaluateGates } from '../../functions/core/gates/evaluate.ts';
import { formatInstant } from '../../functions/core/gates/messages.ts';
import { GATE_OVERRIDE } from '../../functions/core/gates/override.ts';
import { gateOverrideDetail } from '../../functions/core/break-glass/override-request.ts';
import { releaseWaitingEvent } from '../../functions/core/reconcile/release-waiting.ts';
import type { ReleaseWaitingEvent } from '../../functions/core/reconcile/events.ts';
import { putGate } from '../../functions/core/store/gates.ts';
import { createAlarm } from '../support/alarms.ts';
import { engineDeps } from '../support/deliveries.ts';
import { testbed, uniqueName } from '../support/testbed.ts';
import { ECR_URL, seedDelivery, synth } from './synth.ts';

const components = testbed();
const deps = engineDeps();
const stackName = `ReleaseTexts-${uniqueName('s').slice(2)}`;
const busName = uniqueName('release-texts');
const gate = {
  approval: uniqueName('sre-approval'),
  friday: uniqueName('no-deploy-friday'),
  freeze: uniqueName('year-end'),
  calendar: uniqueName('holidays'),
  alarm: uniqueName('healthy'),
  wave: uniqueName('wave-two'),
};
const REVISION = `v1.4.0@sha256:${'ab'.repeat(32)}`;
/** A Friday inside the year-end freeze. */
const NOW = new Date('2026-12-25T09:00:00Z');
let alarmName: string;
/** An all-day calendar event around NOW. */
const HOLIDAYS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//sluice//test//EN',
  'BEGIN:VEVENT',
  'UID:holidays@sluice.test',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;VALUE=DATE:20261224',
  'DTEND;VALUE=DATE:20261227',
  'SUMMARY:Holidays',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');
const calendars = [{ name: 'team-holidays', ics: HOLIDAYS, timeZone: 'Europe/Berlin' }];

/** The gates, in the config file's words (the table) and the construct's (the stack). */
const configGates = () => [
  { name: gate.approval, default: 'closed', window: '1h' },
  {
    name: gate.friday,
    default: 'open',
    window: '24h',
    schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
  },
  {
    name: gate.freeze,
    default: 'open',
    freezes: [
      { from: '2026-12-20', to: '2027-01-04', timeZone: 'Europe/Berlin', reason: 'year end "quiet" period' },
    ],
  },
  { name: gate.calendar, default: 'open', calendars },
  { name: gate.alarm, default: 'open', alarms: [alarmName] },
  { name: gate.wave, default: 'closed', window: '2h' },
];

function stack() {
  return synth(
    (cluster, scope) => ({
      gates: [
        { name: gate.approval, default: 'closed', window: Duration.hours(1) },
        {
          name: gate.friday,
          default: 'open',
          window: Duration.hours(24),
          schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
        },
        {
          name: gate.freeze,
          default: 'open',
          freezes: [
            {
              from: '2026-12-20',
              to: '2027-01-04',
              timeZone: 'Europe/Berlin',
              reason: 'year end "quiet" period',
            },
          ],
        },
        { name: gate.calendar, default: 'open', calendars },
        { name: gate.alarm, default: 'open', alarms: [alarmName] },
        { name: gate.wave, default: 'closed', window: Duration.hours(2) },
      ],
      deliveries: [
        {
          ...seedDelivery(cluster),
          gates: [gate.approval, gate.friday, gate.freeze, gate.calendar, gate.alarm].map((name) => ({
            name,
            blocks: 'all' as const,
          })),
        },
        { ...seedDelivery(cluster), name: 'oddy-eu', gates: [] },
      ],
      rollouts: [
        {
          name: 'app',
          source: { url: ECR_URL, tag: 'v1' },
          waves: [{ deliveries: ['oddy-test'] }, { deliveries: ['oddy-eu'], gate: gate.wave }],
        },
      ],
      eventBus: new events.EventBus(scope, 'Bus', { eventBusName: busName }),
      alarmTopic: new sns.Topic(scope, 'Alarms'),
      approvalTopic: new sns.Topic(scope, 'Approvals'),
    }),
    {
      then: (sluice, scope) =>
        void sluice.grantBreakGlass(
          new iam.Role(scope, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() }),
        ),
    },
  );
}

let template: Record<string, unknown>;
const records = eventBridgeDeliveries(components.eventBridge.deliveriesDir);
const client = () => new EventBridgeClient({});
const resourceId = (prefix: string) =>
  Object.keys(template.Resources as object).find((id) => id.startsWith(prefix))!;
const ref = (prefix: string) => standInRef(stackName, template, resourceId(prefix), components.eventBridge);
const approvals = () => records.messages(ref('Approvals'));

beforeAll(async () => {
  alarmName = await createAlarm('ALARM');
  for (const spec of configGates()) await putGate(deps.db, parseGate(spec), NOW);
  template = stack().template.toJSON() as Record<string, unknown>;
  writeEventRules(components.eventBridge.rulesDir, stackName, template);
});

/** The engine's Release Waiting event of `delivery` held at `gateName`, published through PutEvents, and the one message the approval topic got for it. */
async function announce(
  gateName: string,
  revision: string | undefined,
  wave?: { rollout: string; wave: number; deliveries: string[] },
): Promise<{ event: ReleaseWaitingEvent; message: string }> {
  const evaluation = await evaluateGates(
    'oddy-test',
    [{ name: gateName, blocks: 'all' }],
    deps.db,
    NOW,
    deps,
  );
  expect(evaluation.closed.map((held) => held.name)).toEqual([gateName]);
  const before = approvals().length;
  const event = releaseWaitingEvent('oddy-test', evaluation.closed[0]!, revision, deps, NOW, wave);
  await eventBridgeSink(client(), busName).releaseWaiting!(event);
  const received = approvals().slice(before);
  expect(received, `one message for the hold at ${gateName}`).toHaveLength(1);
  return { event, message: received[0]! };
}

/** What every notice must be: the event's own text, quoted as a string template renders, with no empty or JSON field. */
function expectProse(message: string, event: ReleaseWaitingEvent) {
  expect(message.startsWith(`"${event.message} `)).toBe(true);
  expect(message.endsWith('"')).toBe(true);
  expect(message).not.toMatch(/--\w+ +(--|,|$)| {2}|undefined|null|[[{]/);
  expect(message).toContain(event.why);
  // A command copied from the message ends at a space: no quote, stop or comma glued to it.
  for (const [, last] of message.matchAll(/--function (\S+)/g)) expect(last).toMatch(/^[\w-]+$/);
}

const gateFunction = () =>
  standInRef(stackName, template, resourceId('SluiceGateFunction'), components.eventBridge);

describe('the texts approvers receive, as EventBridge renders the construct rules', () => {
  it('an approval: why, and how to approve it (the CLI line completed with the gate function)', async () => {
    const { event, message } = await announce(gate.approval, REVISION);
    expect(event.lift).toBe('approve');
    expectProse(message, event);
    expect(message).toMatch(/\bApprove this revision\b/);
    expect(message).toContain(
      `sluice gate open ${gate.approval} --revision ${REVISION} --reason <why> --function ${gateFunction()} — each approver runs it once, signed in as themselves."`,
    );
  });

  it('a schedule (no-deploy-friday): approvable, and says until when it holds by itself', async () => {
    const { event, message } = await announce(gate.friday, REVISION);
    expect(event.lift).toBe('approve');
    expectProse(message, event);
    expect(message).toContain(
      `It opens by itself at ${formatInstant(event.opensAt!)}; to let it through sooner, approve`,
    );
    expect(message).toContain(`--function ${gateFunction()} — each approver`);
  });

  it('a freeze: why and until when, what lifts it, who may break the glass; never "approve"', async () => {
    const { event, message } = await announce(gate.freeze, REVISION);
    expect(event.lift).toBe('wait');
    expectProse(message, event);
    expect(message).not.toMatch(/\bapprove\b/i);
    expect(message).toContain('closed by freeze "year end \\"quiet\\" period"');
    expect(message).toContain(`until ${formatInstant(event.until!)}`);
    expect(message).toMatch(
      new RegExp(
        `Break-glass, by arn:aws:iam::000000000000:role/${stackName}-Oncall\\w+ only \\(or the runbook sluice-break-glass-\\w+ in the console\\): sluice gate override ${gate.freeze} --revision ${REVISION.replace(/[.@]/g, '\\$&')} --for \\S+ --reason \\S+ --function ${gateFunction()} — every override is announced and audited\\."$`,
      ),
    );
  });

  it('a calendar event: why and until when, what lifts it; never "approve"', async () => {
    const { event, message } = await announce(gate.calendar, REVISION);
    expect(event.lift).toBe('wait');
    expect(event.cause).toBe('calendar');
    expectProse(message, event);
    expect(message).not.toMatch(/\bapprove\b/i);
    expect(message).toContain('Holidays');
    expect(message).toContain(`until ${formatInstant(event.until!)}`);
    expect(message).toContain(
      `it goes out by itself when the calendar event ends at ${formatInstant(event.until!)}`,
    );
    expect(message).toContain(`sluice gate override ${gate.calendar} --revision ${REVISION}`);
  });

  it('an alarm: why, that it opens when the alarm is OK, and break-glass; never "approve"', async () => {
    const { event, message } = await announce(gate.alarm, REVISION);
    expect(event.lift).toBe('fix-alarm');
    expectProse(message, event);
    expect(message).not.toMatch(/\bapprove\b/i);
    expect(message).toContain(`alarm '${alarmName}'`);
    expect(message).toContain('the gate opens by itself when it is OK');
    expect(message).toContain(`sluice gate override ${gate.alarm} --revision ${REVISION}`);
  });

  it('a hold whose revision could not be resolved: no empty --revision, break-glass still explained', async () => {
    const { event, message } = await announce(gate.freeze, undefined);
    expect(event.revision).toBeUndefined();
    expectProse(message, event);
    expect(message).not.toMatch(/\bapprove\b/i);
    expect(message).toContain('Break-glass, by arn:aws:iam::000000000000:role/');
    expect(message).toContain(
      `once sluice status names the held revision: sluice gate override ${gate.freeze} --revision REVISION`,
    );
  });

  it("a rollout's wave gate: the wave, its deliveries, and how to approve", async () => {
    const { event, message } = await announce(gate.wave, REVISION, {
      rollout: 'app',
      wave: 2,
      deliveries: ['oddy-eu'],
    });
    expect(event.lift).toBe('approve');
    expectProse(message, event);
    expect(message).toContain(`rollout 'app' wave 2 (oddy-eu)`);
    expect(message).toContain(
      `sluice gate open ${gate.wave} --revision ${REVISION} --reason <why> --function ${gateFunction()} — each approver runs it once, signed in as themselves."`,
    );
  });

  it('every Release Waiting event reached a rule: none is left unmatched on the bus', () => {
    expect(records.unmatched().filter(({ busName: bus }) => bus === busName)).toEqual([]);
  });

  it('a break-glass override made: the alarm topic is told who, which gates, the revision, until when and why, in prose', async () => {
    const detail = gateOverrideDetail({
      event: {
        gates: [gate.freeze, gate.alarm],
        revision: REVISION,
        windowMs: 3_600_000,
        reason: 'INC-77 "hotfix"',
      },
      gates: [gate.freeze, gate.alarm],
      madeBy: 'arn:aws:sts::123456789012:assumed-role/Oncall/alice',
      now: NOW,
      source: 'url',
      reconciling: ['oddy-test'],
    });
    await putSluiceEvent(client(), { busName, detailType: GATE_OVERRIDE, detail, time: NOW });
    const [message] = records.messages(ref('Alarms'));
    expect(message).toBe(
      `"sluice BREAK-GLASS: arn:aws:sts::123456789012:assumed-role/Oncall/alice let revision ${detail.revisionShown} through gates '${gate.freeze}', '${gate.alarm}' until ${detail.endsAt}: INC-77 "hotfix""`,
    );
  });
});
