// Who the demo's gate function lets act, as the construct would tell it (SLUICE_ENTRY_GRANTEES,
// SLUICE_TRUSTED_ACCOUNTS): the approvers' roles as IAM names them (an Identity Center role under
// its path), in the demo's one account.
import type { SignerRules } from '../../functions/core/access/signers.ts';

const ACCOUNT = '123456789012';
/** The Identity Center permission set's role, as IAM names it (path included). */
export const IDENTITY_CENTER_APPROVER = `arn:aws:iam::${ACCOUNT}:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_Approver_0123456789abcdef`;
/** The shared role mallory assumes. */
export const SHARED_APPROVER = `arn:aws:iam::${ACCOUNT}:role/Approver`;

/** The rules for the demo: `entries` granted to both approver roles. */
export function demoSigners(entries: readonly string[]): SignerRules {
  return {
    trustedAccounts: [ACCOUNT],
    grantees: new Map(entries.map((entry) => [entry, [IDENTITY_CENTER_APPROVER, SHARED_APPROVER]])),
  };
}
