import { PutEventsCommand, type EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { ReconcileEvent } from '../store/events.ts';

/** Where reconcile events go besides the table: EventBridge in AWS. */
export interface EventSink {
  publish(event: ReconcileEvent): Promise<void>;
}

/** Publishes `Reconcile Succeeded|Failed|Blocked` events with source `sluice` to a bus. */
export function eventBridgeSink(client: EventBridgeClient, busName = 'default'): EventSink {
  return {
    async publish(event) {
      const result = await client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: busName,
              Source: 'sluice',
              DetailType: `Reconcile ${event.outcome}`,
              Time: new Date(event.time),
              Detail: JSON.stringify(event),
            },
          ],
        }),
      );
      if (result.FailedEntryCount) {
        throw new Error(
          `EventBridge bus '${busName}' refused the event: ${result.Entries?.[0]?.ErrorMessage ?? 'unknown error'}`,
        );
      }
    },
  };
}
