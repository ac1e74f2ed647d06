// The EKS stand-ins' cluster folder: what a cluster file may say, refused with the field named
// (and nothing written), and how an access entry's principal is matched. Plain values.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  entryMatchArn,
  putStandInAccessEntry,
  readStandInEksCluster,
  writeStandInEksCluster,
  type StandInAccessEntry,
} from '../../dev/eks-clusters.ts';

const base = { endpoint: 'https://127.0.0.1:6443', caData: 'Y2E=', region: 'us-east-1' };
const role = 'arn:aws:iam::123456789012:role/deployer';

describe('the EKS stand-ins cluster folder', () => {
  it('refuses, writing nothing, a bad name, a non-local endpoint and access entries EKS would refuse', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-eks-clusters-'));
    const refused: [string, Parameters<typeof writeStandInEksCluster>[2], RegExp][] = [
      ['-bad', base, /EKS cluster name '-bad' is not a valid cluster name/],
      [
        'c1',
        { ...base, endpoint: 'https://example.com' },
        /endpoint 'https:\/\/example.com' is not a local API server/,
      ],
      [
        'c2',
        { ...base, accessEntries: [{ principalArn: 'arn:aws:sts::123456789012:assumed-role/deployer/s' }] },
        /principalArn .* is not an IAM role or user ARN/,
      ],
      [
        'c3',
        { ...base, accessEntries: [{ principalArn: role, groups: ['system:masters'] }] },
        /group 'system:masters' is not allowed/,
      ],
      [
        'c4',
        {
          ...base,
          accessEntries: [
            { principalArn: role, accessPolicies: ['AmazonEKSViewPolicy'] } as unknown as StandInAccessEntry,
          ],
        },
        /access policy 'AmazonEKSViewPolicy' is not known to the stand-in/,
      ],
    ];
    for (const [name, cluster, message] of refused) {
      expect(() => writeStandInEksCluster(dir, name, cluster)).toThrow(message);
      expect(existsSync(join(dir, `${name}.json`))).toBe(false);
    }
    expect(() => putStandInAccessEntry(dir, 'nope', { principalArn: role })).toThrow(
      /EKS cluster 'nope' is not known/,
    );
  });

  it('replaces an entry for the same principal, keeping the others', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-eks-clusters-'));
    writeStandInEksCluster(dir, 'shop', { ...base, accessEntries: [{ principalArn: role, groups: ['a'] }] });
    putStandInAccessEntry(dir, 'shop', { principalArn: 'arn:aws:iam::123456789012:user/carol' });
    putStandInAccessEntry(dir, 'shop', { principalArn: role, groups: ['b'] });
    expect(readStandInEksCluster(dir, 'shop')?.accessEntries).toEqual([
      { principalArn: 'arn:aws:iam::123456789012:user/carol' },
      { principalArn: role, groups: ['b'] },
    ]);
  });

  it('matches a role without its path (a session ARN has none), a user with its path', () => {
    expect(
      entryMatchArn('arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_X'),
    ).toBe('arn:aws:iam::123456789012:role/AWSReservedSSO_X');
    expect(entryMatchArn('arn:aws:iam::123456789012:user/team/carol')).toBe(
      'arn:aws:iam::123456789012:user/team/carol',
    );
  });
});
