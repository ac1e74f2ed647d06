// Why an invocation is refused when its entry does not take what it asks (routes.ts): each
// refusal names the entry it came through and the entry that takes it. Nothing is written.
import { claimRefused } from '../core/gates/claim.ts';
import { GateEventError, OVERRIDE_NEEDS_PROOF } from '../core/gates/event.ts';
import { BREAK_GLASS_ENTRY_HINT } from '../core/break-glass/override-request.ts';
import { ProofRefused } from '../core/access/proof.ts';
import { GATE_REQUEST_ENTRY_HINT } from '../core/gates/proven-request.ts';
import { runbookEntryRefused } from '../core/approvals/runbook-approval.ts';
import { pushRecordRefused } from '../core/gates/self-approval.ts';
import { ROLLOUTS_ENTRY_HINT } from '../core/reconcile/rollout-actions.ts';
import type { InvokedEntry } from './entries.ts';
import { hasProof, type Shape } from './shapes.ts';

export function refusal(
  shape: Shape,
  event: unknown,
  entry: InvokedEntry,
  invokedFunctionArn: string | undefined,
): Error {
  if (entry.kind === 'unknown')
    return new GateEventError(`${entry.name} is none of the gate function's entries; nothing was recorded`);
  switch (shape) {
    case 'url':
      return new ProofRefused(`${entry.name} has no function URL: a URL-shaped event through it is refused`);
    case 'push-record':
      return pushRecordRefused(invokedFunctionArn);
    case 'runbook':
      return runbookEntryRefused(entry.name);
    case 'rollout-action':
      return new ProofRefused(ROLLOUTS_ENTRY_HINT);
    case 'override':
      return hasProof(event)
        ? new ProofRefused(BREAK_GLASS_ENTRY_HINT)
        : new GateEventError(OVERRIDE_NEEDS_PROOF);
    case 'proven':
      return new ProofRefused(GATE_REQUEST_ENTRY_HINT);
    case 'claim':
      // Through break_glass, whatever an unsigned event asks is an override claim.
      if (entry.kind === 'break-glass') return new GateEventError(OVERRIDE_NEEDS_PROOF);
      return claimRefused(entry.name);
  }
}
