import type { RequestSource } from '../store/gates.ts';
import { printable } from './audit-text.ts';

/** Who sent a gate request: a principal AWS verified, or a name the caller claimed. */
export interface Caller {
  readonly principal: string;
  readonly verified: boolean;
}

/** A request that reached the function directly carries only a claim; its real caller is in CloudTrail. */
export function claimedCaller(requestedBy: string | undefined, source: RequestSource): Caller {
  return { principal: requestedBy ?? `unknown (${source})`, verified: false };
}

/** `schedule/<gate>/<index>`: how a schedule's request, rebuilt from the gate's spec, names its author. */
const SCHEDULE_PRINCIPAL = /^schedule\/[a-z0-9-]+\/\d+$/;

/**
 * A principal as people read it: `arn:aws:sts::123456789012:assumed-role/Approver/alice` →
 * `alice (role Approver, 123456789012)`; an IAM user → `bob (user, 123456789012)`. A claim is
 * marked: `alice (unverified)`; it reads as a schedule only when its `source` is the schedule
 * (a request sluice rebuilt from the spec), never by its name alone. Control characters are
 * written out (`\n`, `\u001b`), so a stored name cannot add a line or hide the mark.
 */
export function readablePrincipal(
  principal: string,
  verified: boolean | undefined,
  source?: RequestSource,
): string {
  if (source === 'schedule' && SCHEDULE_PRINCIPAL.test(principal)) return principal;
  if (!verified) return `${printable(principal)} (unverified)`;
  const match = /^arn:aws[\w-]*:(?:sts|iam)::(\d{12}):(assumed-role|user|role|root)(?:\/(.*))?$/.exec(
    principal,
  );
  if (!match) return printable(principal);
  const [, account, kind, path = ''] = match;
  const parts = path.split('/');
  if (kind === 'assumed-role')
    return printable(`${parts.at(-1)} (role ${parts.slice(0, -1).join('/')}, ${account})`);
  if (kind === 'root') return `root (${account})`;
  return printable(`${parts.at(-1)} (${kind}, ${account})`);
}
