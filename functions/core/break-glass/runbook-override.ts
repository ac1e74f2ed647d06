// A break-glass override made in the AWS console: a grantee of grantBreakGlass starts the
// break-glass runbook (IAM lets only them start it), whose one step invokes the gate function's
// break_glass entry with the execution id alone. Who made the override and what it asks are read
// from Systems Manager's record of the execution, never from the invocation.
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  claimRunbookExecution,
  runbookExecutionClaim,
  runbookExecutionUse,
  type RunbookExecutionUse,
} from '../store/runbook-executions.ts';
import { auditOverrideRefusal } from '../store/gate-overrides.ts';
import { GateEventError } from '../gates/event.ts';
import { BREAK_GLASS_ALIAS } from '../gates/override.ts';
import { parseOverrideEvent, type OverrideEvent } from './override-event.ts';
import {
  isBreakGlassEntry,
  makeOverride,
  registeredTargets,
  type OverrideResult,
} from './override-request.ts';
import { ProofRefused } from '../access/proof.ts';
import type { GateDeps } from '../gates/requests.ts';
import { authorizeSigner } from '../access/signers.ts';
import {
  readExecution,
  type AutomationRecord,
  type RunbookDeps,
  type RunbookEvent,
} from '../approvals/runbook-approval.ts';

import { BREAK_GLASS_RUNBOOK_STEP } from '../gates/contract.ts';

export { BREAK_GLASS_RUNBOOK_STEP };
/** The runbook's single-value parameters, as the override request's fields. */
export const BREAK_GLASS_RUNBOOK_PARAMETERS = ['revision', 'window', 'reason'] as const;
/** The runbook's list parameters: empty `gates` overrides every gate of the one delivery named. */
export const BREAK_GLASS_RUNBOOK_LISTS = ['gates', 'deliveries'] as const;
/** An execution started longer ago than this makes no override: its step invokes the function at once. */
export const MAX_BREAK_GLASS_EXECUTION_AGE_MS = 10 * 60_000;

/** What AWS's record of a break-glass runbook execution asks for, and who started it. */
export interface RunbookOverride {
  readonly executionId: string;
  readonly startedBy: string;
  readonly event: OverrideEvent;
}

/**
 * Verifies an invocation naming a break-glass runbook execution against Systems Manager's record:
 * the execution ran this function's break-glass runbook in Auto mode (Systems Manager, not a
 * signal, runs its step), was started within the last ten minutes by a principal AWS names, and
 * is running its override step now. Anything else throws
 * GateEventError naming what is wrong; nothing is written.
 */
export async function verifyRunbookOverride(
  event: RunbookEvent,
  runbooks: RunbookDeps,
  now: Date,
): Promise<RunbookOverride> {
  const record = await readExecution(event, runbooks);
  const id = record.executionId;
  if (!runbooks.breakGlassRunbook || record.documentName !== runbooks.breakGlassRunbook)
    throw new GateEventError(
      `Automation execution ${id} ran the document '${record.documentName}', which is not this function's break-glass runbook (${runbooks.breakGlassRunbook ?? 'it has none: grantBreakGlass makes it'}): nothing overridden`,
    );
  const step = record.steps.find((s) => s.name === BREAK_GLASS_RUNBOOK_STEP);
  if (!step || step.action !== 'aws:invokeLambdaFunction' || step.status !== 'InProgress')
    throw new GateEventError(
      `Automation execution ${id} is not running its '${BREAK_GLASS_RUNBOOK_STEP}' step (${step ? `${step.action}, ${step.status}` : 'it has none'}): an override is made only by the runbook's own invocation; nothing overridden`,
    );
  // Only Automation itself may run the step, at once: in Interactive mode whoever may signal the
  // execution (any gate approver) would run it, when they choose, as the starter.
  if (record.mode !== 'Auto')
    throw new GateEventError(
      `Automation execution ${id} runs in ${record.mode ?? 'no recorded'} mode: the break-glass runbook makes an override only when Systems Manager runs its step itself (Auto), not when another signal starts it (Interactive); nothing overridden`,
    );
  // Counted from the execution's start (the starter's decision), not the step's.
  const started = record.startTime;
  if (!started || now.getTime() - started.getTime() > MAX_BREAK_GLASS_EXECUTION_AGE_MS)
    throw new GateEventError(
      `Automation execution ${id} was started ${started?.toISOString() ?? 'at no recorded time'}, more than ten minutes ago: start the break-glass runbook again`,
    );
  if (!record.executedBy)
    throw new GateEventError(
      `Automation execution ${id} records no principal that started it: an override needs a verified author; nothing overridden`,
    );
  let parsed: OverrideEvent;
  try {
    parsed = parseOverrideEvent(overrideFields(record));
  } catch (error) {
    throw new GateEventError(`Automation execution ${id}'s parameters: ${(error as Error).message}`);
  }
  return {
    executionId: id,
    startedBy: record.executedBy,
    event: { ...parsed, reason: `${parsed.reason} [runbook ${id}]` },
  };
}

/**
 * Makes the override a break-glass runbook execution asks for, as its starter (verified by AWS).
 * It must arrive through the break_glass entry, which only the runbook's automation role and
 * grantBreakGlass's grantees may invoke; the execution id is claimed in the override's own
 * transaction, so a replay changes nothing. Once the execution is verified, a refusal (a starter
 * not granted break_glass, a replay, a gate not registered, a window past maxOverride) is an
 * answer, not a function error: it claims the execution (an execution is answered once), is
 * written to the audit trail of each registered gate it names, with why (a replay writes no
 * row: the first answer is there), and returned with outcome `refused` (the runbook's
 * branch fails the execution on it). An invocation that cannot be verified throws: there is
 * nothing trustworthy to record.
 */
export async function handleRunbookOverride(
  event: RunbookEvent,
  invokedFunctionArn: string | undefined,
  deps: GateDeps,
  runbooks: RunbookDeps,
): Promise<OverrideResult> {
  if (!isBreakGlassEntry(invokedFunctionArn))
    throw new GateEventError(
      `a break-glass runbook invokes the gate function's ${BREAK_GLASS_ALIAS} entry; this invocation came through another: nothing overridden`,
    );
  const now = deps.clock.now();
  const override = await verifyRunbookOverride(event, runbooks, now);
  try {
    return await overrideAsStarter(override, deps, now);
  } catch (error) {
    if (!(error instanceof GateEventError || error instanceof ProofRefused)) throw error;
    return refuseOverride(override, error.message, deps, now);
  }
}

async function overrideAsStarter(
  override: RunbookOverride,
  deps: GateDeps,
  now: Date,
): Promise<OverrideResult> {
  const id = override.executionId;
  // IAM let its starter start the runbook; the starter must also be a grantee of break_glass now.
  authorizeSigner(override.startedBy, BREAK_GLASS_ALIAS, deps.signers, {
    what: `the break-glass override of Automation execution ${id}`,
  });
  const alreadyUsed = (used: RunbookExecutionUse) =>
    new GateEventError(
      `Automation execution ${id} was already used (${used.gate}, ${used.usedAt}): an execution makes one override; a replay changes nothing`,
    );
  const used = await runbookExecutionUse(deps.db, id);
  if (used) throw alreadyUsed(used);
  const scope = override.event.gates?.join(',') ?? `all gates of ${override.event.deliveries?.join(',')}`;
  // The claim is written with the override, in its transaction: a refused override claims nothing,
  // and of concurrent invocations of one execution only one makes it.
  const claim = runbookExecutionClaim(deps.db, id, `override ${scope}`, now);
  const caller = { principal: override.startedBy, verified: true };
  try {
    return await makeOverride(override.event, caller, 'runbook', deps, [claim]);
  } catch (error) {
    const first = error instanceof TransactionCanceledException && (await runbookExecutionUse(deps.db, id));
    if (first) throw alreadyUsed(first);
    throw error;
  }
}

/**
 * A verified override turned down: the execution claimed, a `refused` row, saying why, in the
 * history of each registered gate it names (none when it names none, or when the execution was
 * already answered), a warning, and the `refused` answer. No override.
 */
async function refuseOverride(
  override: RunbookOverride,
  why: string,
  deps: GateDeps,
  now: Date,
): Promise<OverrideResult> {
  const { event, executionId: id, startedBy } = override;
  // The refusal claims the execution: it is answered once, so a second invocation while its step
  // runs (by any break_glass invoker) neither writes another row naming the starter nor, after a
  // grant, makes the override the first one refused.
  const used = await claimRunbookExecution(deps.db, id, `refused override`, now);
  const gates = used ? [] : await registeredTargets(event, deps.db);
  await auditOverrideRefusal(
    deps.db,
    gates,
    {
      requestedAt: now.toISOString(),
      requestedBy: startedBy,
      reason: event.reason,
      source: 'runbook',
      windowMs: event.windowMs,
      revision: event.revision,
      ...(event.deliveries && { deliveries: event.deliveries }),
    },
    why,
    now,
  );
  const message = `the break-glass override of Automation execution ${id} by ${startedBy} was refused; nothing was overridden: ${why}`;
  deps.log?.(message);
  return {
    action: 'override',
    outcome: 'refused',
    overrides: [],
    reconciling: [],
    refusedBecause: why,
    message,
  };
}

/** The override request the runbook's parameters make; empty values are absent, empty `gates` means all gates. */
function overrideFields(record: AutomationRecord): Record<string, unknown> {
  const fields: Record<string, unknown> = { action: 'override' };
  for (const name of BREAK_GLASS_RUNBOOK_PARAMETERS) {
    const values = record.parameters[name] ?? [];
    if (values.length > 1) throw new GateEventError(`parameter ${name} has several values`);
    if (values[0]) fields[name] = values[0];
  }
  for (const name of BREAK_GLASS_RUNBOOK_LISTS) {
    const values = (record.parameters[name] ?? []).filter((value) => value !== '');
    if (values.length > 0) fields[name] = values;
  }
  if (fields.gates === undefined) fields.allGates = true;
  return fields;
}
