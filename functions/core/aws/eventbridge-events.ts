import { PutEventsCommand, type EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { Clock } from '../clock.ts';
import { RELEASE_WAITING, type EventSink } from '../reconcile/events.ts';

/** Puts one event with source `sluice` on a bus; a refused entry is an error naming the bus. */
export interface SluiceEvent {
  readonly busName: string;
  readonly detailType: string;
  readonly detail: object;
  readonly time: Date;
}

export async function putSluiceEvent(
  client: EventBridgeClient,
  { busName, detailType, detail, time }: SluiceEvent,
): Promise<void> {
  const result = await client.send(
    new PutEventsCommand({
      Entries: [
        {
          EventBusName: busName,
          Source: 'sluice',
          DetailType: detailType,
          Time: time,
          Detail: JSON.stringify(detail),
        },
      ],
    }),
  );
  if (result.FailedEntryCount) {
    throw new Error(
      `EventBridge bus '${busName}' refused the event: ${result.Entries?.[0]?.ErrorMessage ?? 'unknown error'}`,
    );
  }
}

/** Publishes `Reconcile Succeeded|Failed|Blocked`, `Release Waiting` and `Rollout …` events with source `sluice` to a bus. */
export function eventBridgeSink(client: EventBridgeClient, busName = 'default'): EventSink {
  return {
    publish: (event) =>
      putSluiceEvent(client, {
        busName,
        detailType: `Reconcile ${event.outcome}`,
        detail: event,
        time: new Date(event.time),
      }),
    releaseWaiting: (event) =>
      putSluiceEvent(client, {
        busName,
        detailType: RELEASE_WAITING,
        detail: event,
        time: new Date(event.time),
      }),
    rollout: (detailType, event) =>
      putSluiceEvent(client, { busName, detailType, detail: event, time: new Date(event.time) }),
  };
}

/** Puts events of any detail type (the gate function's) with source `sluice` on a bus, timed by `clock`. */
export function eventBridgePublisher(
  client: EventBridgeClient,
  busName: string,
  clock: Clock,
): (detailType: string, detail: object) => Promise<void> {
  return (detailType, detail) => putSluiceEvent(client, { busName, detailType, detail, time: clock.now() });
}
