import type { RequestSource } from '../store/gates.ts';

/** Who sent a gate request: a principal AWS verified, or a name the caller claimed. */
export interface Caller {
  readonly principal: string;
  readonly verified: boolean;
}

/** A request that reached the function directly carries only a claim; its real caller is in CloudTrail. */
export function claimedCaller(requestedBy: string | undefined, source: RequestSource): Caller {
  return { principal: requestedBy ?? `unknown (${source})`, verified: false };
}

/**
 * A principal as people read it: `arn:aws:sts::123456789012:assumed-role/Approver/alice` →
 * `alice (role Approver, 123456789012)`; an IAM user → `bob (user, 123456789012)`. A claim is
 * marked: `alice (unverified)`.
 */
export function readablePrincipal(principal: string, verified: boolean | undefined): string {
  if (!verified) return principal.startsWith('schedule/') ? principal : `${principal} (unverified)`;
  const match = /^arn:aws[\w-]*:(?:sts|iam)::(\d{12}):(assumed-role|user|role|root)(?:\/(.*))?$/.exec(
    principal,
  );
  if (!match) return principal;
  const [, account, kind, path = ''] = match;
  const parts = path.split('/');
  if (kind === 'assumed-role') return `${parts.at(-1)} (role ${parts.slice(0, -1).join('/')}, ${account})`;
  if (kind === 'root') return `root (${account})`;
  return `${parts.at(-1)} (${kind}, ${account})`;
}
