// Who an approval counts as: a key the approver cannot choose (pure logic).
import { describe, expect, it } from 'vitest';
import { approverKey } from '../../../functions/core/access/approver-key.ts';

const LISTED = { sessionNamedRoles: ['arn:aws:iam::111111111111:role/teams/Approver'] };

describe('approverKey', () => {
  it('an IAM user is the person its name names, whatever its path, case or account', () => {
    expect(approverKey('arn:aws:iam::111111111111:user/carol', {})).toBe('aws:person/carol');
    expect(approverKey('arn:aws:iam::222222222222:user/team/Carol', {})).toBe('aws:person/carol');
    expect(approverKey('arn:aws:iam::111111111111:user/dave', {})).not.toBe('aws:person/carol');
  });

  it('a session of a listed role is the person its name names: the IAM user of that name, the same name in another listed role', () => {
    const listed = {
      sessionNamedRoles: ['arn:aws:iam::111111111111:role/Developer', ...LISTED.sessionNamedRoles!],
    };
    const carol = approverKey('arn:aws:iam::111111111111:user/carol', listed);
    expect(approverKey('arn:aws:sts::111111111111:assumed-role/Developer/carol', listed)).toBe(carol);
    expect(approverKey('arn:aws:sts::111111111111:assumed-role/Approver/carol', listed)).toBe(carol);
    // Unlisted, the role's sessions are the role, whatever they are called.
    expect(approverKey('arn:aws:sts::111111111111:assumed-role/Developer/carol', {})).not.toBe(carol);
  });

  it('sessions of a role count once, whatever their names', () => {
    const key = (session: string) =>
      approverKey(`arn:aws:sts::111111111111:assumed-role/Approver/${session}`, {});
    expect(key('mallory')).toBe('arn:aws:iam::111111111111:role/approver');
    expect(approverKey('arn:aws:sts::111111111111:assumed-role/APPROVER/x', {})).toBe(key('mallory'));
    expect(key('mallory-as-bob')).toBe(key('mallory'));
  });

  it('an Identity Center user counts once across permission sets and accounts', () => {
    const sso = (account: string, set: string) =>
      approverKey(`arn:aws:sts::${account}:assumed-role/AWSReservedSSO_${set}_0123456789abcdef/alice`, {});
    expect(sso('111111111111', 'Approver')).toBe('aws:person/alice');
    expect(sso('222222222222', 'Admin')).toBe(sso('111111111111', 'Approver'));
  });

  it('a listed role counts per session in its own account only, whatever the path', () => {
    const session = (account: string, name: string) =>
      approverKey(`arn:aws:sts::${account}:assumed-role/Approver/${name}`, LISTED);
    expect(session('111111111111', 'alice')).not.toBe(session('111111111111', 'bob'));
    // The same role name in another account is another role: its sessions count once.
    expect(session('222222222222', 'alice')).toBe(session('222222222222', 'bob'));
  });

  it('federated users count once per account', () => {
    const fed = (name: string) => approverKey(`arn:aws:sts::111111111111:federated-user/${name}`, {});
    expect(fed('alice')).toBe(fed('bob'));
  });
});
