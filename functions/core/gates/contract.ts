// The names the CDK construct and the gate function share: aliases, runbook steps, event types.
// Nothing here imports the engine, so the construct takes them without the AWS SDK.

/** The gate function's alias through which overrides come: its function URL is what grantBreakGlass allows. */
export const BREAK_GLASS_ALIAS = 'break_glass';
/** The EventBridge detail type the gate function publishes when an override is made. */
export const GATE_OVERRIDE = 'Gate Override';
/** The gate function's alias through which rollout actions come (grantRolloutControl). */
export const ROLLOUTS_ALIAS = 'rollouts';
/** The gate function's alias through which delivery rollbacks come (grantRollback). */
export const ROLLBACKS_ALIAS = 'rollbacks';
/** The EventBridge detail type the gate function publishes when a delivery's rollback is asked for. */
export const DELIVERY_ROLLBACK = 'Delivery Rollback';
/** The gate function's alias the gate runbooks' Automation role invokes (console approvals). */
export const RUNBOOKS_ALIAS = 'runbooks';
/** The gate function's alias the gates' cron schedules invoke (unsigned claims from EventBridge Scheduler). */
export const SCHEDULES_ALIAS = 'schedules';

/** The names the construct gives a gate runbook's steps; the gate function reads them back from AWS's record. */
export const RUNBOOK_STEPS = {
  approve: 'approve',
  openGate: 'openGate',
  /** aws:branch on the function's answer: a refusal goes on to `refused`, anything else ends the execution. */
  checkOutcome: 'checkOutcome',
  /** aws:executeScript that fails the execution with the function's refusal, so the console shows it failed. */
  refused: 'refused',
} as const;
/** What a refused approval's answer (the invoke step's Payload, JSON) contains; the runbook branches on it. */
export const REFUSED_OUTCOME_MARK = '"outcome":"refused"';

/** The name the construct gives the break-glass runbook's one step. */
export const BREAK_GLASS_RUNBOOK_STEP = 'override';
