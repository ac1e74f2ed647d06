// Who signed must be who may act. STS answers GetCallerIdentity for any valid credentials of any
// account, so a proof says only who signed it. The signer counts only when it is a principal the
// stack granted the very entry the request came through, of an account the stack trusts, and (on
// the function URL) the caller IAM let through the URL. Everything else is refused, naming both.
import { ProofRefused } from './proof.ts';

/** What the construct tells the gate function of who may act (SLUICE_TRUSTED_ACCOUNTS, SLUICE_ENTRY_GRANTEES). */
export interface SignerRules {
  /** The accounts whose principals may sign: the stack's own, and those the app names in `trustedAccounts`. */
  readonly trustedAccounts: readonly string[];
  /**
   * Entry (the alias a request comes through: `open_<gate>`, `close_<gate>`, `break_glass`,
   * `rollouts`) → the principals the stack granted it: IAM role and user ARNs (any path), an
   * assumed-role session ARN, `arn:<partition>:iam::<account>:root` or a 12-digit account id
   * (an account grant: every principal of it that its own IAM policies let in).
   */
  readonly grantees: ReadonlyMap<string, readonly string[]>;
}

/** The caller IAM authenticated for a function URL request (`requestContext.authorizer.iam`). */
export interface UrlCaller {
  readonly userArn?: string;
  readonly accountId?: string;
  readonly callerId?: string;
}

interface Principal {
  readonly partition: string;
  readonly account: string;
  readonly kind: 'role' | 'user' | 'root' | 'session' | 'federated' | 'account';
  /** The role or user name (no path); for a session also its session name. */
  readonly name?: string;
  readonly session?: string;
}

const SIGNER_FORMS: readonly [RegExp, Principal['kind']][] = [
  [/^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/(.+)$/, 'session'],
  [/^arn:(aws[\w-]*):iam::(\d{12}):user\/(?:.*\/)?([^/]+)$/, 'user'],
  [/^arn:(aws[\w-]*):iam::(\d{12}):root$/, 'root'],
  [/^arn:(aws[\w-]*):sts::(\d{12}):federated-user\/(.+)$/, 'federated'],
];

/** What STS (or Systems Manager's record) names, parsed; undefined for a form it never returns. */
function parseSigner(arn: string): Principal | undefined {
  for (const [form, kind] of SIGNER_FORMS) {
    const match = form.exec(arn);
    if (match) return { partition: match[1]!, account: match[2]!, kind, name: match[3], session: match[4] };
  }
  // Systems Manager's aws:approve records an approver as the IAM ARN its Approvers list names.
  const role = /^arn:(aws[\w-]*):iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/.exec(arn);
  return role ? { partition: role[1]!, account: role[2]!, kind: 'role', name: role[3] } : undefined;
}

/** A grant as the construct wrote it; undefined for a form no signer can match. */
function parseGrant(grant: string): Principal | undefined {
  if (/^\d{12}$/.test(grant)) return { partition: '', account: grant, kind: 'account' };
  const root = /^arn:(aws[\w-]*):iam::(\d{12}):root$/.exec(grant);
  if (root) return { partition: root[1]!, account: root[2]!, kind: 'account' };
  return parseSigner(grant);
}

const same = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();

/** True when `grant` covers `signer`: the same role (any of its sessions), user, session, or the signer's account. */
function covers(grant: Principal, signer: Principal): boolean {
  if (grant.account !== signer.account) return false;
  if (grant.kind === 'account') return grant.partition === '' || grant.partition === signer.partition;
  if (grant.partition !== signer.partition) return false;
  // IAM names roles and users without regard to case: one name in two cases is one principal.
  if (grant.kind === 'role')
    return (signer.kind === 'session' || signer.kind === 'role') && same(grant.name, signer.name);
  if (grant.kind === 'session')
    return signer.kind === 'session' && same(grant.name, signer.name) && grant.session === signer.session;
  if (grant.kind === 'user') return signer.kind === 'user' && same(grant.name, signer.name);
  if (grant.kind === 'root') return signer.kind === 'root';
  return false;
}

/** The account of a principal ARN, if it names one. */
export const accountOf = (arn: string): string | undefined =>
  /^arn:aws[\w-]*:(?:sts|iam)::(\d{12}):/.exec(arn)?.[1];

/**
 * Refuses (ProofRefused) unless `signer` may act through `entry`: it must be of a trusted account,
 * one of the entry's grantees, and, for a request through the function URL, the very caller IAM
 * authenticated there. `what` names the request in the refusal, `leaves` what it leaves.
 */
export function authorizeSigner(
  signer: string,
  entry: string,
  rules: SignerRules | undefined,
  options: {
    readonly what: string;
    readonly urlCaller?: UrlCaller | 'absent';
    /** What the refusal leaves, at the end of its message; by default `nothing was recorded`. */
    readonly leaves?: string;
  } = { what: 'the request' },
): void {
  const called = urlCallerText(options.urlCaller);
  const refuse = (why: string) =>
    new SignerRefused(
      `${options.what} refused: signed by ${signer}${called}: ${why}; ${options.leaves ?? 'nothing was recorded'}`,
      signer,
      typeof options.urlCaller === 'object' ? options.urlCaller.userArn : undefined,
    );
  if (options.urlCaller !== undefined) {
    const caller = options.urlCaller === 'absent' ? undefined : options.urlCaller;
    if (!caller?.userArn)
      throw refuse(
        'the function URL named no IAM caller (requestContext.authorizer.iam), so the signer cannot be matched to one',
      );
    if (
      caller.userArn !== signer ||
      (caller.accountId !== undefined && caller.accountId !== accountOf(signer))
    )
      throw refuse('the proof must be signed by the same principal that calls the function URL');
  }
  if (!rules)
    throw refuse(
      'this gate function knows no grantees (SLUICE_ENTRY_GRANTEES is not set), so it lets no one act',
    );
  const parsed = parseSigner(signer);
  if (!parsed) throw refuse('that is not a principal this function knows how to match to a grant');
  if (!rules.trustedAccounts.includes(parsed.account))
    throw refuse(
      `account ${parsed.account} is not one this stack trusts (${rules.trustedAccounts.join(', ') || 'none'}; trustedAccounts adds more)`,
    );
  const grantees = rules.grantees.get(entry) ?? [];
  if (
    !grantees.some((grant) => {
      const parsedGrant = parseGrant(grant);
      return parsedGrant !== undefined && covers(parsedGrant, parsed);
    })
  )
    throw refuse(
      `${signer} is not granted the entry ${entry} (${grantees.length > 0 ? `its grantees: ${grantees.join(', ')}` : 'no one is granted it'})`,
    );
}

const urlCallerText = (caller: UrlCaller | 'absent' | undefined): string =>
  caller === undefined
    ? ''
    : `, called through the function URL by ${caller === 'absent' ? 'no named caller' : (caller.userArn ?? 'no named caller')}`;

/** A proof by someone who may not act through its entry: who signed and who called are named. */
export class SignerRefused extends ProofRefused {
  constructor(
    message: string,
    readonly signer: string,
    readonly caller?: string,
  ) {
    super(message);
  }
}

/**
 * The rules from the construct's environment values: `trusted` is JSON `["<account>", …]`,
 * `grantees` JSON `{"<entry>": ["<principal>", …]}`; undefined when neither is set. A malformed
 * value throws naming the variable.
 */
export function parseSignerRules(
  trusted: string | undefined,
  grantees: string | undefined,
): SignerRules | undefined {
  if (!trusted && !grantees) return undefined;
  const accounts = parseJson(trusted || '[]', 'SLUICE_TRUSTED_ACCOUNTS', '["<12-digit account>", …]');
  if (!Array.isArray(accounts) || !accounts.every((a) => typeof a === 'string' && /^\d{12}$/.test(a)))
    throw new Error('SLUICE_TRUSTED_ACCOUNTS must be a JSON list of 12-digit account ids');
  const entries = parseJson(
    grantees || '{}',
    'SLUICE_ENTRY_GRANTEES',
    '{"<entry>": ["<principal ARN or account>", …]}',
  );
  if (
    typeof entries !== 'object' ||
    entries === null ||
    Array.isArray(entries) ||
    !Object.values(entries).every((list) => Array.isArray(list) && list.every((p) => typeof p === 'string'))
  )
    throw new Error('SLUICE_ENTRY_GRANTEES must be JSON {"<entry>": ["<principal ARN or account>", …]}');
  return {
    trustedAccounts: accounts as string[],
    grantees: new Map(Object.entries(entries as Record<string, string[]>)),
  };
}

function parseJson(text: string, name: string, form: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${name} is not JSON: ${form}`);
  }
}
