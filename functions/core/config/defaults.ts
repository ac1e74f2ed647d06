/** What an omitted field becomes (kept apart from the zod schema so runtime code imports it cheaply). */
export const DEFAULTS = {
  tag: 'latest',
  insecure: false,
  path: '.',
  prune: false,
  intervalMs: 5 * 60_000,
  timeoutMs: 5 * 60_000,
  wait: false,
  suspend: false,
  blocks: 'all',
  /** `Delete` when prune is true, else `Orphan`. */
  deletionPolicy: (prune: boolean) => (prune ? 'Delete' : 'Orphan'),
  allowEmpty: false,
  timeZone: 'UTC',
  approval: 'any',
  approvers: 1,
  /** An alarm gate's alarm in INSUFFICIENT_DATA closes it: no data is no proof of health. */
  insufficientData: 'closed',
  /**
   * The mass-deletion brake: a run that would prune more than half of an inventory of at least
   * `pruneLimitMinInventory` objects is held (reason PruneLimitExceeded) until `pruneLimitGate` opens.
   */
  pruneLimit: { percent: 50 },
  pruneLimitMinInventory: 10,
  /**
   * Reconciles applying to one cluster at once. sluice's requests all fall in one API Priority and
   * Fairness flow (its one user, in the `global-default` priority level): 49 seats of an API
   * server's 600 (EKS keeps the upstream 400 + 200 in-flight limits; global-default has 20 of the
   * 245 nominal shares), and 6 queues of 50 for that flow. Ten runs of 16 requests in flight each
   * are 160, inside those 349 with half to spare for the level's other users, so none is refused
   * with 429.
   */
  clusterConcurrency: 10,
  /** A newer revision of a rollout's source waits until the current rollout has finished or been halted. */
  supersede: 'wait',
} as const;

/** The most a cluster's concurrency may be set to. */
export const MAX_CLUSTER_CONCURRENCY = 100;

/** The longest a gate request may last: a year. Longer is a typo, and dates past it are not worth evaluating. */
export const MAX_WINDOW_MS = 366 * 24 * 3_600_000;
/** The longest a break-glass override may last by default (a gate's `maxOverride`): 4 h. */
export const DEFAULT_MAX_OVERRIDE_MS = 4 * 3_600_000;
/** The most a gate's `maxOverride` may be set to: a day. A longer override is not break-glass. */
export const MAX_OVERRIDE_LIMIT_MS = 24 * 3_600_000;
/** The most distinct approvers a gate may require (GitHub Environments allows up to six reviewers). */
export const MAX_APPROVERS = 6;

/** The most CloudWatch alarms one gate may name (what one DescribeAlarms call takes by name). */
export const MAX_GATE_ALARMS = 100;

/** The longest a dependency's soak may be: 30 days. */
export const MAX_SOAK_MS = 30 * 24 * 3_600_000;

/** The most deliveries of a rollout's wave that may take its revision at once, when set. */
export const MAX_ROLLOUT_PARALLEL = 1000;
