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
  /**
   * The mass-deletion brake: a run that would prune more than half of an inventory of at least
   * `pruneLimitMinInventory` objects is held (reason PruneLimitExceeded) until `pruneLimitGate` opens.
   */
  pruneLimit: { percent: 50 },
  pruneLimitMinInventory: 10,
} as const;

/** The longest a gate request may last: a year. Longer is a typo, and dates past it are not worth evaluating. */
export const MAX_WINDOW_MS = 366 * 24 * 3_600_000;
/** The most distinct approvers a gate may require (GitHub Environments allows up to six reviewers). */
export const MAX_APPROVERS = 6;
