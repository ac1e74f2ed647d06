// The EventBridge sink: what it sends over the wire, checked at the SDK's HTTP layer.
import { systemClock } from '../../../functions/core/clock.ts';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eventBridgePublisher, eventBridgeSink } from '../../../functions/core/aws/eventbridge-events.ts';

function recordingClient(answer: unknown) {
  const sent: { headers: Record<string, string>; body: string }[] = [];
  const client = new EventBridgeClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    requestHandler: {
      handle: async (request: { headers: Record<string, string>; body: string }) => {
        sent.push({ headers: request.headers, body: request.body });
        return {
          response: {
            statusCode: 200,
            headers: { 'content-type': 'application/x-amz-json-1.1' },
            body: Readable.from([JSON.stringify(answer)]),
          },
        };
      },
    } as never,
  });
  return { client, sent };
}

const event = {
  delivery: 'oddy-test',
  outcome: 'Succeeded' as const,
  reason: 'ReconciliationSucceeded',
  message: 'Applied revision: v1@sha256:abc',
  revision: 'v1@sha256:abc',
  time: '2026-03-26T10:00:00.000Z',
};

describe('EventBridge sink', () => {
  it('puts a "Reconcile Succeeded" event with source sluice on the configured bus', async () => {
    const { client, sent } = recordingClient({ FailedEntryCount: 0, Entries: [{ EventId: '1' }] });
    await eventBridgeSink(client, 'platform-events').publish(event);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers['x-amz-target']).toBe('AWSEvents.PutEvents');
    const body = JSON.parse(sent[0]!.body) as { Entries: Record<string, unknown>[] };
    expect(body.Entries[0]).toMatchObject({
      EventBusName: 'platform-events',
      Source: 'sluice',
      DetailType: 'Reconcile Succeeded',
    });
    expect(JSON.parse(body.Entries[0]!.Detail as string)).toEqual(event);
  });

  it('puts a rollout event with its detail type and time', async () => {
    const { client, sent } = recordingClient({ FailedEntryCount: 0, Entries: [{ EventId: '1' }] });
    const halted = {
      rollout: 'app',
      generation: 2,
      revision: 'v2@sha256:abc',
      kind: 'rollout' as const,
      wave: 2,
      waves: 3,
      why: "wave 2's gate 'eu-health' is closed by alarm 'errors'",
      by: 'sluice',
      message: 'rollout app halted',
      time: '2026-03-26T10:00:00.000Z',
    };
    await eventBridgeSink(client, 'platform-events').rollout!('Rollout Halted', halted);
    const body = JSON.parse(sent[0]!.body) as { Entries: Record<string, unknown>[] };
    expect(body.Entries[0]).toMatchObject({ Source: 'sluice', DetailType: 'Rollout Halted' });
    expect(JSON.parse(body.Entries[0]!.Detail as string)).toEqual(halted);
  });

  it('fails naming the bus when EventBridge refuses the entry', async () => {
    const { client } = recordingClient({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: 'X', ErrorMessage: 'bus not found' }],
    });
    await expect(eventBridgeSink(client, 'missing-bus').publish(event)).rejects.toThrow(
      /bus 'missing-bus' refused the event: bus not found/,
    );
  });
});

describe('EventBridge publisher (gate events)', () => {
  it('puts each event with the time of the clock it is given, through one client', async () => {
    const { client, sent } = recordingClient({ FailedEntryCount: 0, Entries: [{ EventId: '1' }] });
    const at = new Date('2026-03-27T16:00:00Z');
    const publish = eventBridgePublisher(client, 'platform-events', { ...systemClock, now: () => at });
    await publish('Gate Closed', { gate: 'no-deploy-friday' });
    await publish('Gate Opened', { gate: 'no-deploy-friday' });
    const entries = sent.map(
      (s) => (JSON.parse(s.body) as { Entries: Record<string, unknown>[] }).Entries[0],
    );
    expect(entries.map((e) => [e?.DetailType, e?.Time])).toEqual([
      ['Gate Closed', at.getTime() / 1000],
      ['Gate Opened', at.getTime() / 1000],
    ]);
  });
});
