import type { GateRef } from '../config/index.ts';
import { SluiceError } from '../errors.ts';
import { getGate, getGateRequest } from '../store/gates.ts';
import type { BlockingGate } from '../store/status.ts';
import type { TableClient } from '../store/table-client.ts';
import { gateStateAt, nextOpening } from './state.ts';

/** The closed gates a delivery references, by what they block. */
export interface GateVerdict {
  /** Closed `blocks: all` gates: nothing may be applied or pruned. */
  readonly blockAll: readonly BlockingGate[];
  /** Closed `blocks: revisions` gates: the last applied revision may be re-applied, no new one. */
  readonly blockRevisions: readonly BlockingGate[];
}

/** Step 3 of a reconcile: the state of every gate the delivery references, at `now`. */
export async function evaluateGates(
  delivery: string,
  refs: readonly GateRef[],
  db: TableClient,
  now: Date,
): Promise<GateVerdict> {
  const closed: BlockingGate[] = [];
  for (const ref of refs) {
    const gate = await getGate(db, ref.name);
    if (!gate) {
      throw new SluiceError(
        'GateClosed',
        `delivery '${delivery}' references gate '${ref.name}', which is not registered; nothing was applied (register the gate, or remove the reference)`,
      );
    }
    const request = await getGateRequest(db, ref.name);
    if (gateStateAt(gate, request, now).state === 'open') continue;
    const opensAt = nextOpening(gate, request, now);
    closed.push({ name: ref.name, blocks: ref.blocks, ...(opensAt && { opensAt }) });
  }
  return {
    blockAll: closed.filter((gate) => gate.blocks === 'all'),
    blockRevisions: closed.filter((gate) => gate.blocks === 'revisions'),
  };
}
