import type { ReconcileEvent } from '../store/events.ts';

/** Where reconcile events go besides the table: EventBridge in AWS. */
export interface EventSink {
  publish(event: ReconcileEvent): Promise<void>;
}
