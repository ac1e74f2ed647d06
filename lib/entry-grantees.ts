// Who the stack granted each entry of the gate function, passed to it (SLUICE_ENTRY_GRANTEES) with
// the accounts it trusts (SLUICE_TRUSTED_ACCOUNTS): the function lets a request's signer act only
// when it is one of them. Role and user ARNs are CloudFormation references at synthesis, so the
// lists are resolved at deploy (Stack.toJsonString).
import { Lazy, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { RUNTIME_ENV } from '../functions/core/runtime-contract.ts';

export interface EntryGranteesProps {
  readonly gateFunction: lambda.Function;
  /** Accounts besides the stack's own whose principals may sign. */
  readonly trustedAccounts?: readonly string[];
}

const ACCOUNT = /^\d{12}$/;
/** The principal ARNs a signer can be matched to (signers.ts): roles and users (any path), sessions, account roots. */
const MATCHABLE_ARN =
  /^arn:aws[\w-]*:(?:iam::\d{12}:(?:role|user)\/.+|iam::\d{12}:root|sts::\d{12}:assumed-role\/[^/]+\/.+)$/;

/** The entries' grantees and the trusted accounts, set in the gate function's environment. */
export class EntryGrantees extends Construct {
  private readonly grantees = new Map<string, string[]>();

  constructor(scope: Construct, id: string, props: EntryGranteesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    for (const account of props.trustedAccounts ?? [])
      if (!Token.isUnresolved(account) && !ACCOUNT.test(account))
        throw new Error(`trustedAccounts: '${account}' is not a 12-digit AWS account id`);
    const trusted = [stack.account, ...(props.trustedAccounts ?? [])];
    props.gateFunction.addEnvironment(
      RUNTIME_ENV.trustedAccounts,
      Lazy.string({ produce: () => stack.toJsonString(trusted) }),
    );
    props.gateFunction.addEnvironment(
      RUNTIME_ENV.entryGrantees,
      Lazy.string({
        produce: () =>
          stack.toJsonString(Object.fromEntries([...this.grantees].sort(([a], [b]) => a.localeCompare(b)))),
      }),
    );
  }

  /** The principals granted `entry` (alias) so far. */
  granteesOf(entry: string): readonly string[] {
    return this.grantees.get(entry) ?? [];
  }

  /**
   * Records `grantee` as one who may act through `entries` (aliases). `what` names the grant in
   * the error thrown for a principal the function could not match to a signer.
   */
  add(grantee: iam.IGrantable, entries: readonly string[], what: string): void {
    const principal = granteePrincipal(grantee, what);
    for (const entry of entries) {
      const list = this.grantees.get(entry) ?? [];
      if (!list.includes(principal)) list.push(principal);
      this.grantees.set(entry, list);
    }
  }
}

/**
 * The ARN (or account) a signer is matched to: a role's or user's ARN, an ARN principal's, an
 * account's root. Anything else (a group, whose members sign as themselves; a service; an
 * organization; a principal with conditions) is refused here, at synthesis: the function would
 * not know whom it lets act.
 */
function granteePrincipal(grantee: iam.IGrantable, what: string): string {
  const principal = grantee.grantPrincipal;
  if (principal instanceof iam.AccountPrincipal) return String(principal.accountId);
  if (principal instanceof iam.ArnPrincipal) {
    if (!Token.isUnresolved(principal.arn) && !MATCHABLE_ARN.test(principal.arn))
      throw new Error(
        `${what}: ${principal.arn} is not an IAM role, user, role session or account root ARN, so the gate function could not tell whether a request's signer is it: grant a role or user`,
      );
    return principal.arn;
  }
  const candidate = principal as Partial<iam.IRole & iam.IUser>;
  const arn = candidate.roleArn ?? candidate.userArn;
  if (arn !== undefined) return arn;
  throw new Error(
    `${what}: ${principal.toString()} is not an IAM role, user or account, so the gate function could not match a request's signer to it (a group's members sign as themselves: grant each user, or a role they assume)`,
  );
}
