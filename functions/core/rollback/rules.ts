// The rules of a delivery's rollback, on plain values: which gates hold it, which revision it
// returns to, and what a run does while one is asked for.
import type { BlockingGate } from '../model/status.ts';
import type { AppliedRevision, RollbackRequest } from '../model/rollback.ts';
import type { GateVerdict } from '../gates/evaluate.ts';
import { GateEventError } from '../gates/event.ts';

/** The digest of `revision` (`<tag>@sha256:<hex>` or `sha256:<hex>`). */
export const digestOf = (revision: string): string => revision.slice(revision.lastIndexOf('sha256:'));

/**
 * The gates that hold a rollback: of those holding the revision it returns to (closed, or open
 * for another revision only), the ones that list `rollback` in `holds`. Every other closed gate
 * lets it through, whatever its `blocks`: the revision passed the gates when it was applied.
 */
export const rollbackHolders = (verdict: GateVerdict): BlockingGate[] =>
  [...verdict.blockAll, ...verdict.blockRevisions].filter((gate) => gate.holdsRollback === true);

/** The closed gates a rollback passes (held otherwise, not holding rollback). */
export const rollbackPasses = (verdict: GateVerdict): string[] =>
  [...verdict.blockAll, ...verdict.blockRevisions]
    .filter((gate) => gate.holdsRollback !== true)
    .map((gate) => gate.name);

/** A rollback that cannot be made as asked; its message names the delivery, and nothing was written. */
export class RollbackRefused extends GateEventError {}

/**
 * The revision a rollback of `delivery` returns to, from the revisions it applied (`history`,
 * those pulled from its source `url` only), running `current`:
 * - with `requested` (a digest, or a revision naming one): that one, if the delivery applied it;
 *   a tag alone is refused, as a rollback never looks a tag up;
 * - without: the revision applied before the current one (the latest one another replaced),
 *   skipping the one the last rollback in force (`rolledBackFrom`) left.
 */
export function chooseRollbackTarget(options: {
  readonly delivery: string;
  readonly url: string;
  readonly current: string;
  readonly history: readonly AppliedRevision[];
  readonly requested?: string;
  readonly rolledBackFrom?: string;
  /** Digests earlier rollbacks in force rolled back from: skipped as `rolledBackFrom` is. */
  readonly rejected?: readonly string[];
}): AppliedRevision {
  const { delivery, current, requested } = options;
  const applied = options.history.filter((entry) => entry.url === options.url);
  const currentDigest = digestOf(current);
  if (requested !== undefined) {
    if (!/sha256:[0-9a-f]{64}$/.test(requested))
      throw new RollbackRefused(
        `delivery '${delivery}': ${JSON.stringify(requested)} names no digest: a rollback goes to a digest the delivery applied (--to <tag>@sha256:<hex> or sha256:<hex>, as sluice status shows it), never looks a tag up`,
      );
    const digest = digestOf(requested);
    if (digest === currentDigest)
      throw new RollbackRefused(
        `delivery '${delivery}' runs ${current} already: there is nothing to roll back to`,
      );
    const found = applied.find((entry) => entry.digest === digest);
    if (!found)
      throw new RollbackRefused(
        `delivery '${delivery}' has never applied ${digest}: a rollback returns only to a revision it applied before (${listed(applied, currentDigest)}); nothing was rolled back`,
      );
    return found;
  }
  const skipped = options.rolledBackFrom && digestOf(options.rolledBackFrom);
  const rejected = new Set(options.rejected ?? []);
  const candidates = applied
    .filter(
      (entry) => entry.digest !== currentDigest && entry.digest !== skipped && !rejected.has(entry.digest),
    )
    .sort((a, b) => (b.replacedAt ?? '').localeCompare(a.replacedAt ?? ''));
  const previous = candidates[0];
  if (!previous)
    throw new RollbackRefused(
      `delivery '${delivery}' has applied no revision before ${current}${skipped ? ` but ${options.rolledBackFrom}, which it was rolled back from` : ''}: there is nothing to roll back to${skipped ? ' (name it with --to to go back to it)' : ''}`,
    );
  return previous;
}

/** `it applied: 1.2.0@sha256:… (replaced 2026-…), …` or `it applied none other` */
function listed(applied: readonly AppliedRevision[], currentDigest: string): string {
  const others = applied.filter((entry) => entry.digest !== currentDigest);
  if (others.length === 0) return 'it has applied no other';
  const shown = [...others]
    .sort((a, b) => (b.replacedAt ?? '').localeCompare(a.replacedAt ?? ''))
    .slice(0, 5)
    .map((entry) => entry.revision);
  return `it applied ${shown.join(', ')}${others.length > shown.length ? ', …' : ''}`;
}

/** What a run of a delivery does about its rollback request. */
export type RollbackForRun =
  /**
   * Apply `request.to` as a rollback: only the gates that hold rollback may hold it. With `newer`
   * (a revision pushed since it was asked), that one instead if the gates let it through.
   */
  | { readonly kind: 'apply'; readonly request: RollbackRequest; readonly newer?: string }
  /** Stay at `request.to` (a re-apply): the source still resolves to the digest rolled back from. */
  | { readonly kind: 'keep'; readonly request: RollbackRequest }
  /** As any run: no request, or one settled. `settle`: one the delivery has left `from` without. */
  | { readonly kind: 'none'; readonly settle?: RollbackRequest };

/**
 * What a run does, given the delivery's rollback `request`, the id of the last one a run settled,
 * the revision applied last, and the digest its source resolves to now (undefined: it could not
 * be resolved):
 * - not yet settled and the delivery still at `from`: apply it; when the source resolves to a
 *   revision pushed since (not `from`, `to`, nor the one held when it was asked), that one goes
 *   instead if the gates let it through (a newer push goes forward, as after a rollout's rollback);
 * - not yet settled, but the delivery left `from` some other way: a normal run, which settles it;
 * - settled, the delivery still at `to`, and the source still at `from` (or a digest an earlier
 *   rollback in force left, `rejected`): keep `to`;
 * - otherwise a normal run.
 */
export function rollbackForRun(options: {
  readonly request: RollbackRequest | undefined;
  readonly settled: string | undefined;
  readonly lastApplied: string | undefined;
  readonly resolvedDigest: string | undefined;
}): RollbackForRun {
  const { request, lastApplied, resolvedDigest } = options;
  if (!request || !lastApplied) return { kind: 'none' };
  const at = digestOf(lastApplied);
  if (request.id !== options.settled) {
    if (at !== digestOf(request.from)) return { kind: 'none', settle: request };
    // A digest an earlier rollback left (`rejected`) is no newer push: it stays rolled back.
    const known = [
      request.from,
      request.to,
      ...(request.held ? [request.held] : []),
      ...(request.rejected ?? []),
    ].map(digestOf);
    if (resolvedDigest === undefined || known.includes(resolvedDigest)) return { kind: 'apply', request };
    return { kind: 'apply', request, newer: resolvedDigest };
  }
  const left = [request.from, ...(request.rejected ?? [])].map(digestOf);
  if (at === digestOf(request.to) && resolvedDigest !== undefined && left.includes(resolvedDigest))
    return { kind: 'keep', request };
  return { kind: 'none' };
}
