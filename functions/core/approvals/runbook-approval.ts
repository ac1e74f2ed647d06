import { auditRefusal, getGate, getGateRequest, listGateNames, type GateRequest } from '../store/gates.ts';
import { claimRunbookExecution } from '../store/runbook-executions.ts';
import type { TableClient } from '../store/table-client.ts';
import { GateEventError, parseGateEvent, type GateEvent } from '../gates/event.ts';
import { gateStatus, handleGateEvent, type GateDeps, type GateRequestResult } from '../gates/requests.ts';
import { ProofRefused } from '../access/proof.ts';
import { lastClosedAt } from '../gates/state.ts';
import { datedPeriodsOf } from '../gates/conditions.ts';
import { entryNameOf, gateAliasName, qualifierOf } from '../access/entry.ts';
import { authorizeSigner, SignerRefused } from '../access/signers.ts';

import { BREAK_GLASS_ALIAS, REFUSED_OUTCOME_MARK, RUNBOOK_STEPS, RUNBOOKS_ALIAS } from '../gates/contract.ts';

export { REFUSED_OUTCOME_MARK, RUNBOOK_STEPS };
/** The runbook's parameters: what the requester asks for, read back from AWS's record. */
export const RUNBOOK_PARAMETERS = ['revision', 'window', 'reason'] as const;
/** The runbook's list parameter: the deliveries an approval is for. */
export const RUNBOOK_LIST_PARAMETER = 'deliveries';
/** An approval older than this (its approve step's end) no longer opens a gate. */
export const MAX_RUNBOOK_APPROVAL_AGE_MS = 60 * 60_000;

/** A step of an Automation execution, as GetAutomationExecution returns it. */
export interface AutomationStep {
  readonly name: string;
  readonly action: string;
  /** `Pending`, `InProgress`, `Waiting`, `Success`, `TimedOut`, `Cancelling`, `Cancelled`, `Failed`. */
  readonly status: string;
  readonly startTime?: Date;
  readonly endTime?: Date;
  /** Output name → values (`ApprovalStatus`, `ApproverDecisions` for aws:approve). */
  readonly outputs: Readonly<Record<string, readonly string[]>>;
}

/** Systems Manager's record of an Automation execution. */
export interface AutomationRecord {
  readonly executionId: string;
  readonly documentName: string;
  /** The principal that started the execution. */
  readonly executedBy?: string;
  /** When the execution was started (`ExecutionStartTime`). */
  readonly startTime?: Date;
  /** `Auto` (Automation runs each step itself) or `Interactive` (a StartStep signal runs each). */
  readonly mode?: string;
  readonly parameters: Readonly<Record<string, readonly string[]>>;
  readonly steps: readonly AutomationStep[];
}

/** Reads an execution from Systems Manager (GetAutomationExecution); undefined when there is none. */
export type ReadAutomation = (executionId: string) => Promise<AutomationRecord | undefined>;

export interface RunbookDeps {
  /** Gate name → its runbook's document name, as the construct set them (never from the event). */
  readonly runbooks: ReadonlyMap<string, string>;
  readonly readAutomation: ReadAutomation;
  /** The break-glass runbook's document name, as the construct set it; undefined when it has none. */
  readonly breakGlassRunbook?: string;
}

/** The invocation a runbook's last step makes: `{"ssmExecution": "<execution id>"}` and nothing else. */
export interface RunbookEvent {
  readonly ssmExecution: string;
}

/** Why a runbook's report that came through `through` (an entry's name) is refused; nothing was read. */
export const runbookEntryRefused = (through: string): GateEventError =>
  new GateEventError(
    `a runbook execution is taken only through the gate function's ${RUNBOOKS_ALIAS} entry, which the gate runbooks' Automation role invokes (the break-glass runbook's through ${BREAK_GLASS_ALIAS}), not through ${through}; nothing was recorded`,
  );

export const isRunbookEvent = (event: unknown): event is RunbookEvent =>
  typeof event === 'object' && event !== null && !Array.isArray(event) && 'ssmExecution' in event;

/** What AWS's record of a runbook execution approves. */
export interface RunbookApproval {
  readonly gate: string;
  readonly executionId: string;
  /** The principals (ARNs) whose `Approve` signals the approve step recorded, distinct, in order. */
  readonly approvers: readonly string[];
  /** When the approve step began asking: every approval was given after it. */
  readonly askedAt: Date;
  readonly startedBy?: string;
  readonly event: GateEvent;
}

const EXECUTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The record Systems Manager keeps of the execution an invocation names. The invocation is trusted
 * for nothing but the id: any other field is refused as a claim, and an unknown id changes nothing.
 */
export async function readExecution(
  event: RunbookEvent,
  deps: Pick<RunbookDeps, 'readAutomation'>,
): Promise<AutomationRecord> {
  const extra = Object.keys(event).filter((key) => key !== 'ssmExecution');
  if (extra.length > 0)
    throw new GateEventError(
      `a runbook invocation carries only "ssmExecution"; ${extra.map((k) => `"${k}"`).join(', ')} would be a claim: what it asks is read from Systems Manager`,
    );
  const id = event.ssmExecution;
  if (typeof id !== 'string' || !EXECUTION_ID.test(id))
    throw new GateEventError(`"ssmExecution": ${JSON.stringify(id)} is not an Automation execution id`);
  const record = await deps.readAutomation(id);
  if (!record) throw new GateEventError(`Automation execution ${id} does not exist: nothing changed`);
  return record;
}

/**
 * Verifies an invocation that names an Automation execution against Systems Manager's record of
 * it: the execution ran this function's runbook of a gate, its approve step succeeded with the
 * status Approved within the last hour, and who approved and what (revision, window, reason) come
 * from that record. The invocation itself is trusted for nothing but the id; anything else throws
 * GateEventError naming what is wrong.
 */
export async function verifyRunbookApproval(
  event: RunbookEvent,
  deps: RunbookDeps,
  now: Date,
): Promise<RunbookApproval> {
  const record = await readExecution(event, deps);
  const id = record.executionId;
  const gate = [...deps.runbooks].find(([, document]) => document === record.documentName)?.[0];
  if (gate === undefined)
    throw new GateEventError(
      `Automation execution ${id} ran the document '${record.documentName}', which is not a gate runbook of this function (${[...deps.runbooks.values()].join(', ') || 'it has none'}): nothing changed`,
    );

  const step = record.steps.find((s) => s.name === RUNBOOK_STEPS.approve);
  if (!step || step.action !== 'aws:approve')
    throw new GateEventError(
      `Automation execution ${id} has no aws:approve step '${RUNBOOK_STEPS.approve}': nothing changed`,
    );
  const approvalStatus = output(step, 'ApprovalStatus')[0];
  if (step.status !== 'Success' || approvalStatus !== 'Approved')
    throw new GateEventError(
      `gate '${gate}': the approval of Automation execution ${id} is not given (approve step ${step.status}${approvalStatus ? `, ${approvalStatus}` : ''}): nothing changed`,
    );
  if (!step.endTime || now.getTime() - step.endTime.getTime() > MAX_RUNBOOK_APPROVAL_AGE_MS)
    throw new GateEventError(
      `gate '${gate}': the approval of Automation execution ${id} ended ${step.endTime?.toISOString() ?? 'at no recorded time'}, more than an hour ago: start the runbook again`,
    );
  const approvers = approversOf(step, id);
  if (!step.startTime)
    throw new GateEventError(
      `gate '${gate}': Automation execution ${id} records no start of its approve step: nothing changed`,
    );

  const raw: Record<string, unknown> = { gate, action: 'open' };
  for (const name of RUNBOOK_PARAMETERS) {
    const values = record.parameters[name] ?? [];
    if (values.length > 1)
      throw new GateEventError(`Automation execution ${id}: parameter ${name} has several values`);
    if (values[0]) raw[name] = values[0];
  }
  const deliveries = (record.parameters[RUNBOOK_LIST_PARAMETER] ?? []).filter((name) => name !== '');
  if (deliveries.length > 0) raw.deliveries = deliveries;
  let parsed: GateEvent;
  try {
    parsed = parseGateEvent(raw, { signed: true });
  } catch (error) {
    throw new GateEventError(`Automation execution ${id}'s parameters: ${(error as Error).message}`);
  }
  return {
    gate,
    executionId: id,
    approvers,
    askedAt: step.startTime,
    ...(record.executedBy && { startedBy: record.executedBy }),
    event: { ...parsed, source: 'runbook', reason: `${parsed.reason ?? ''} [runbook ${id}]`.trim() },
  };
}

function output(step: AutomationStep, name: string): readonly string[] {
  const key = Object.keys(step.outputs).find((k) => k === name || k.endsWith(`.${name}`));
  return key === undefined ? [] : (step.outputs[key] ?? []);
}

/** The distinct principals whose decision was Approve, from the step's ApproverDecisions (a JSON map per decision). */
function approversOf(step: AutomationStep, id: string): string[] {
  const decisions: unknown[] = [];
  for (const value of output(step, 'ApproverDecisions')) {
    try {
      const parsed: unknown = JSON.parse(value);
      decisions.push(...(Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]));
    } catch {
      throw new GateEventError(`Automation execution ${id}: an approver decision is not JSON: ${value}`);
    }
  }
  const approvers = new Set<string>();
  for (const decision of decisions) {
    const { Approver, Decision } = (decision ?? {}) as { Approver?: unknown; Decision?: unknown };
    if (Decision === 'Approve' && typeof Approver === 'string' && Approver) approvers.add(Approver);
  }
  if (approvers.size === 0)
    throw new GateEventError(`Automation execution ${id} records no approver who approved: nothing changed`);
  return [...approvers];
}

/**
 * Opens a gate on a verified runbook approval: every approver must be a grantee of the gate's open
 * entry, the execution id is claimed (once only, so a replay changes nothing), and the approve step
 * must have begun after the gate's last close; then each approver counts as one verified approval
 * of the runbook's request, toward the gate's `approvers`. Once the execution is verified, a
 * refusal is an answer, not a function error: it is written to the gate's audit trail with why,
 * logged, and returned with outcome `refused` (the runbook's branch fails the execution on it).
 * The id is claimed first, so an execution is answered once: a refused one is not accepted later
 * (after a grant), and a replay is refused without another row (it would name the approvers for
 * an invocation anyone able to invoke the function made).
 * An invocation that cannot be verified throws: there is nothing trustworthy to record.
 */
export async function handleRunbookApproval(
  event: RunbookEvent,
  invokedFunctionArn: string | undefined,
  deps: GateDeps,
  runbooks: RunbookDeps,
): Promise<GateRequestResult> {
  // Whatever routed it here, only the runbooks' Automation role's entry is taken: an execution id
  // is no secret (it is in the console), so anyone able to invoke another entry could send one.
  if (qualifierOf(invokedFunctionArn) !== RUNBOOKS_ALIAS)
    throw runbookEntryRefused(entryNameOf(invokedFunctionArn));
  const now = deps.clock.now();
  const approval = await verifyRunbookApproval(event, runbooks, now);
  // A gate the construct named but the table no longer registers has no history to write to.
  if (!(await getGate(deps.db, approval.gate))) {
    const known = await listGateNames(deps.db);
    throw new GateEventError(
      `gate '${approval.gate}' is not registered (${known.length > 0 ? `registered gates: ${known.join(', ')}` : 'no gates are registered'}): Automation execution ${approval.executionId} opens nothing, and nothing was recorded`,
    );
  }
  // Claimed before anything else is decided: an execution gets one answer, accepted or refused, and
  // one row of history; a replay (by whoever may invoke the function) is answered and writes nothing.
  const used = await claimRunbookExecution(deps.db, approval.executionId, approval.gate, now);
  if (used)
    return refuseApproval(
      approval,
      `Automation execution ${approval.executionId} was already used (gate '${used.gate}', ${used.usedAt}): an execution is answered once, and its answer is in the gate's history; a replay changes nothing`,
      deps,
      now,
      { audit: false },
    );
  try {
    // Systems Manager lets the approvers the runbook lists signal it; each must also be a grantee of
    // the gate's open entry now, of a trusted account (a document may outlive a grant).
    for (const approver of approval.approvers)
      authorizeSigner(approver, gateAliasName(approval.gate, 'open'), deps.signers, {
        what: `gate '${approval.gate}': the approval of Automation execution ${approval.executionId}`,
        leaves: 'the gate is unchanged',
      });
    await refuseIfClosedSince(approval, deps.db, now);
    let result: GateRequestResult | undefined;
    for (const approver of approval.approvers) {
      result = await handleGateEvent(approval.event, deps, { principal: approver, verified: true });
      if (result.outcome === 'accepted') break;
    }
    return result!;
  } catch (error) {
    if (!(error instanceof GateEventError || error instanceof ProofRefused)) throw error;
    const by = error instanceof SignerRefused ? error.signer : undefined;
    return refuseApproval(approval, error.message, deps, now, { audit: true, ...(by && { by }) });
  }
}

/**
 * A verified approval turned down: an audit row saying why (unless `audit` is false: a replay,
 * whose execution's answer is already in the history), a warning, and the `refused` answer.
 */
async function refuseApproval(
  approval: RunbookApproval,
  why: string,
  deps: GateDeps,
  now: Date,
  /** `by`: the approver refused, when the refusal is of one (else the first). */
  { audit, by = approval.approvers[0]! }: { readonly audit: boolean; readonly by?: string },
): Promise<GateRequestResult> {
  const { event } = approval;
  const request: GateRequest = {
    action: 'open',
    requestedAt: now.toISOString(),
    requestedBy: by,
    reason: event.reason ?? '',
    source: 'runbook',
    verified: true,
    ...(approval.approvers.length > 1 && { approvedBy: approval.approvers }),
    ...(event.windowMs !== undefined && { windowMs: event.windowMs }),
    ...(event.revision !== undefined && { revision: event.revision }),
    ...(event.deliveries !== undefined && { deliveries: event.deliveries }),
  };
  if (audit) await auditRefusal(deps.db, approval.gate, request, why, now);
  const { status, nextChange } = await gateStatus(approval.gate, deps);
  const message = `gate '${approval.gate}': the approval of Automation execution ${approval.executionId} by ${approval.approvers.join(', ')} was refused; the gate is ${status.state}: ${why}`;
  deps.log?.(message);
  return {
    gate: approval.gate,
    action: 'open',
    outcome: 'refused',
    status,
    nextChange,
    reconciling: [],
    message,
  };
}

/**
 * Approvals given before the gate's last close (a close request, a close schedule's firing, or
 * the start of a freeze or calendar event) do not open it after that close, as for signed approvals: a runbook whose approve step began
 * before the close must be started again.
 */
async function refuseIfClosedSince(approval: RunbookApproval, db: TableClient, now: Date): Promise<void> {
  const gate = await getGate(db, approval.gate);
  if (!gate) return; // handleGateEvent names the unregistered gate
  const periods = await datedPeriodsOf(gate, now);
  const closedAt = lastClosedAt(gate, await getGateRequest(db, gate.name), now, periods);
  if (approval.askedAt.getTime() <= closedAt)
    throw new GateEventError(
      `gate '${gate.name}': Automation execution ${approval.executionId} asked for approval at ${approval.askedAt.toISOString()}, before the gate was last closed (${new Date(closedAt).toISOString()}): approvals given before a close do not open the gate after it; start the runbook again`,
    );
}
