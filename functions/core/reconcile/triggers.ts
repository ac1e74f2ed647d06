import { deliveriesOfRepository, deliveriesUsingGate } from '../store/delivery-lookups.ts';
import type { TableClient } from '../store/table-client.ts';

/** The ECR push event EventBridge delivers ("ECR Image Action", action-type PUSH). */
export interface EcrImageActionEvent {
  readonly source: 'aws.ecr';
  readonly 'detail-type': 'ECR Image Action';
  readonly account: string;
  readonly region: string;
  readonly detail: {
    readonly 'action-type': string;
    readonly result: string;
    readonly 'repository-name': string;
    readonly 'image-tag'?: string;
    readonly 'image-digest'?: string;
  };
}

/** Sent when a gate opens at the end of a window (by a one-time EventBridge Scheduler schedule). */
export interface GateOpenedEvent {
  readonly gateOpened: string;
}

/** What starts a reconcile (the reconcile function's event); not the outcome it records (`ReconcileEvent`). */
export type ReconcileTrigger = { readonly delivery: string } | EcrImageActionEvent | GateOpenedEvent;

function isEcrEvent(event: unknown): event is EcrImageActionEvent {
  const e = event as Partial<EcrImageActionEvent> | null;
  return e?.source === 'aws.ecr' && e['detail-type'] === 'ECR Image Action' && typeof e.detail === 'object';
}

/**
 * The deliveries an event asks to reconcile: the one it names, every delivery using a gate that
 * just opened, or for a successful ECR push every delivery whose source is that repository (in
 * that account and region). Gate and repository are looked up in the table's index, not scanned.
 */
export async function deliveriesForEvent(event: unknown, db: TableClient): Promise<string[]> {
  const named = (event as { delivery?: unknown } | null)?.delivery;
  if (typeof named === 'string' && named !== '') return [named];
  const gate = (event as Partial<GateOpenedEvent> | null)?.gateOpened;
  if (typeof gate === 'string' && gate !== '') return deliveriesUsingGate(db, gate);
  if (!isEcrEvent(event)) {
    throw new Error(
      `unrecognised event: expected {"delivery":"<name>"}, {"gateOpened":"<gate>"} or an ECR "ECR Image Action" event, got ${JSON.stringify(event).slice(0, 200)}`,
    );
  }
  if (event.detail['action-type'] !== 'PUSH' || event.detail.result !== 'SUCCESS') return [];
  return deliveriesOfRepository(db, event.detail['repository-name'], event);
}
