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
  /**
   * The mass-deletion brake: a run that would prune more than half of an inventory of at least
   * `pruneLimitMinInventory` objects is held (reason PruneLimitExceeded) until `pruneLimitGate` opens.
   */
  pruneLimit: { percent: 50 },
  pruneLimitMinInventory: 10,
} as const;
