// What the construct sets in each function's environment and what the handlers read: one list,
// imported by both sides (lib/ and environment.ts), so a renamed variable cannot split them.

/** The environment variables the construct sets and the functions read. */
export const RUNTIME_ENV = {
  /** The DynamoDB table (every function). */
  table: 'SLUICE_TABLE',
  /** The reconcile function's ARN (gate and spec functions: they invoke it). */
  reconcileFunction: 'SLUICE_RECONCILE_FUNCTION',
  /** The kubectl binary that runs kustomize (reconcile and spec functions). */
  kubectl: 'SLUICE_KUBECTL',
  /** The EventBridge bus the engine publishes to, when the app gives one. */
  eventBus: 'SLUICE_EVENT_BUS',
  /** The Scheduler group of one-time window and retry schedules. */
  windowScheduleGroup: 'SLUICE_WINDOW_SCHEDULE_GROUP',
  /** The role Scheduler assumes to invoke the functions. */
  schedulerRoleArn: 'SLUICE_SCHEDULER_ROLE_ARN',
  /** The failure queue (dead-letter queue of the one-time schedules). */
  failureQueueArn: 'SLUICE_FAILURE_QUEUE_ARN',
  /** `fleet`: the reconcile function's metrics carry no delivery dimension. */
  metricsScope: 'SLUICE_METRICS_SCOPE',
  /** The gates' Systems Manager runbooks, JSON `{"<gate>": "<document name>"}` (gate function). */
  gateRunbooks: 'SLUICE_GATE_RUNBOOKS',
  /** The break-glass runbook's document name (gate function), set once grantBreakGlass is called. */
  breakGlassRunbook: 'SLUICE_BREAK_GLASS_RUNBOOK',
  /** The accounts whose principals may sign gate requests, JSON `["<account>", …]` (gate function). */
  trustedAccounts: 'SLUICE_TRUSTED_ACCOUNTS',
  /** Who the stack granted each entry, JSON `{"<entry alias>": ["<principal ARN or account>", …]}` (gate function). */
  entryGrantees: 'SLUICE_ENTRY_GRANTEES',
  /** The hosts live calendars may be read from over HTTPS, JSON `["<host>", …]` (reconcile and gate functions). */
  calendarHosts: 'SLUICE_CALENDAR_HOSTS',
} as const;

/** Where the kubectl Lambda layer puts its binary. */
export const LAYER_KUBECTL = '/opt/kubectl/kubectl';

/**
 * The stack outputs the construct makes and `sluice --stack` reads, by key: each output's export
 * name is `<export prefix>-<key>` (the prefix is the stack's name unless the Sluice sets one).
 */
export const STACK_OUTPUTS = {
  /** The DynamoDB table (SLUICE_TABLE). */
  table: 'TableName',
  /** The gate function: requests, rollout actions and break-glass go to its entries (SLUICE_GATE_FUNCTION). */
  gateFunction: 'GateFunctionName',
  /** The reconcile function. */
  reconcileFunction: 'ReconcileFunctionName',
  /** The role that applies to and prunes from clusters (an access entry names it). */
  deployerRole: 'DeployerRoleArn',
  /** `{"<gate>": "<runbook document name>"}` of the gates that have approvers. */
  gateRunbooks: 'GateRunbooks',
  /** `{"<gate>": {"open": url, "close": url}}`: the gates' entries. */
  gateEntryUrls: 'GateEntryUrls',
  /** The CloudWatch dashboard's URL (with `dashboard: true`). */
  dashboardUrl: 'DashboardUrl',
  /** The break-glass entry's function URL and runbook (after grantBreakGlass). */
  breakGlassUrl: 'BreakGlassUrl',
  breakGlassRunbook: 'BreakGlassRunbookName',
  /** The rollouts entry's function URL (after grantRolloutControl). */
  rolloutControlUrl: 'RolloutControlUrl',
} as const;

export type StackOutputKey = (typeof STACK_OUTPUTS)[keyof typeof STACK_OUTPUTS];

/** An output's export name: `<prefix>-<key>`. */
export const stackOutputExportName = (prefix: string, key: StackOutputKey): string => `${prefix}-${key}`;
