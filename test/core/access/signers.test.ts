// Matching a signer (STS's answer, or the principal Systems Manager records) to the grants of an
// entry: pure, on plain values.
import { describe, expect, it } from 'vitest';
import {
  authorizeSigner,
  parseSignerRules,
  SignerRefused,
  type SignerRules,
} from '../../../functions/core/access/signers.ts';

const A = '123456789012';
const rules = (grantees: string[], trusted = [A, '210987654321']): SignerRules => ({
  trustedAccounts: trusted,
  grantees: new Map([['open_g', grantees]]),
});
const allowed = (signer: string, grantees: string[], trusted?: string[]) => {
  try {
    authorizeSigner(signer, 'open_g', rules(grantees, trusted), { what: 'x' });
    return true;
  } catch (error) {
    if (error instanceof SignerRefused) return false;
    throw error;
  }
};

describe('a signer matched to the grants of its entry', () => {
  it.each([
    // role, any path, any session, any case of its name
    [`arn:aws:sts::${A}:assumed-role/Deploy/alice`, `arn:aws:iam::${A}:role/teams/ops/Deploy`, true],
    [`arn:aws:sts::${A}:assumed-role/deploy/alice`, `arn:aws:iam::${A}:role/Deploy`, true],
    [`arn:aws:sts::${A}:assumed-role/Deployer/alice`, `arn:aws:iam::${A}:role/Deploy`, false],
    [`arn:aws:sts::210987654321:assumed-role/Deploy/alice`, `arn:aws:iam::${A}:role/Deploy`, false],
    [`arn:aws-cn:sts::${A}:assumed-role/Deploy/alice`, `arn:aws:iam::${A}:role/Deploy`, false],
    // a session grant: that session only
    [`arn:aws:sts::${A}:assumed-role/Deploy/alice`, `arn:aws:sts::${A}:assumed-role/Deploy/alice`, true],
    [`arn:aws:sts::${A}:assumed-role/Deploy/bob`, `arn:aws:sts::${A}:assumed-role/Deploy/alice`, false],
    // users
    [`arn:aws:iam::${A}:user/ops/dana`, `arn:aws:iam::${A}:user/ops/dana`, true],
    [`arn:aws:iam::${A}:user/dana`, `arn:aws:iam::${A}:role/dana`, false],
    [`arn:aws:sts::${A}:assumed-role/dana/x`, `arn:aws:iam::${A}:user/dana`, false],
    // accounts: any principal of it
    [`arn:aws:sts::${A}:assumed-role/Anything/x`, A, true],
    [`arn:aws:iam::${A}:user/u`, `arn:aws:iam::${A}:root`, true],
    [`arn:aws:sts::${A}:federated-user/f`, A, true],
    [`arn:aws:sts::${A}:federated-user/f`, `arn:aws:iam::${A}:user/f`, false],
    [`arn:aws:iam::${A}:root`, `arn:aws:iam::${A}:root`, true],
    // what is not understood matches nothing
    [`arn:aws:sts::${A}:assumed-role/Deploy/alice`, '*', false],
    [`arn:aws:sts::${A}:assumed-role/Deploy/alice`, 'Deploy', false],
    [`arn:aws:iam::${A}:group/ops`, A, false],
  ])('%s, granted %s: %s', (signer, grant, expected) => {
    expect(allowed(signer, [grant])).toBe(expected);
  });

  it('an untrusted account is refused whatever is granted; no rules refuse everyone', () => {
    const outside = 'arn:aws:sts::999999999999:assumed-role/AWSReservedSSO_Approver_0123/bob@example.com';
    expect(
      allowed(outside, ['999999999999', 'arn:aws:iam::999999999999:role/AWSReservedSSO_Approver_0123']),
    ).toBe(false);
    expect(() => authorizeSigner(`arn:aws:iam::${A}:user/u`, 'open_g', undefined, { what: 'x' })).toThrow(
      'knows no grantees',
    );
  });

  it('through the URL, the signer must be the caller (ARN and account)', () => {
    const signer = `arn:aws:sts::${A}:assumed-role/Deploy/alice`;
    const ok = (urlCaller: NonNullable<Parameters<typeof authorizeSigner>[3]>['urlCaller']) => () =>
      authorizeSigner(signer, 'open_g', rules([A]), { what: 'x', urlCaller });
    expect(ok({ userArn: signer, accountId: A })).not.toThrow();
    expect(ok({ userArn: `arn:aws:sts::${A}:assumed-role/Deploy/bob`, accountId: A })).toThrow(
      `signed by ${signer}, called through the function URL by arn:aws:sts::${A}:assumed-role/Deploy/bob`,
    );
    expect(ok({ userArn: signer, accountId: '210987654321' })).toThrow('the same principal');
    expect(ok('absent')).toThrow('named no IAM caller');
    expect(ok({})).toThrow('named no IAM caller');
  });

  it('reads the environment values, refusing malformed ones by name', () => {
    expect(parseSignerRules(undefined, undefined)).toBeUndefined();
    expect(parseSignerRules(`["${A}"]`, '{"open_g":["x"]}')).toEqual({
      trustedAccounts: [A],
      grantees: new Map([['open_g', ['x']]]),
    });
    expect(() => parseSignerRules('nope', '{}')).toThrow('SLUICE_TRUSTED_ACCOUNTS is not JSON');
    expect(() => parseSignerRules('["123"]', '{}')).toThrow('12-digit');
    expect(() => parseSignerRules('[]', '{"open_g":"x"}')).toThrow('SLUICE_ENTRY_GRANTEES must be JSON');
  });
});
