// What `--exit-code` makes `sluice status` and `sluice rollout status` exit with, for scripts
// that wait on a delivery or a rollout: 0 all good, 4 held or under way, 1 failed.
import type { DeliveryStatus } from '../../functions/core/model/status.ts';
import { HOLDS, type RolloutPhase } from '../../functions/core/rollout/state.ts';
import { EXIT } from './output.ts';

/** 0 when Ready; 4 when held, under way or never reconciled; 1 when its last run failed. */
export function deliveryExitCode(status: Pick<DeliveryStatus, 'ready' | 'reason'> | undefined): number {
  if (status === undefined) return EXIT.blocked;
  if (status.ready) return EXIT.ok;
  return HOLDS.has(status.reason) ? EXIT.blocked : EXIT.failed;
}

/** The worst of the deliveries' codes: a failure (1) before a hold (4) before Ready (0). */
export function deliveriesExitCode(
  statuses: readonly (Pick<DeliveryStatus, 'ready' | 'reason'> | undefined)[],
): number {
  const codes = statuses.map(deliveryExitCode);
  if (codes.includes(EXIT.failed)) return EXIT.failed;
  return codes.includes(EXIT.blocked) ? EXIT.blocked : EXIT.ok;
}

/** 0 when complete (or idle: nothing to roll out), 4 while under way, 1 when halted. */
export function rolloutExitCode(phase: RolloutPhase): number {
  if (phase === 'Halted') return EXIT.failed;
  return phase === 'Progressing' ? EXIT.blocked : EXIT.ok;
}
