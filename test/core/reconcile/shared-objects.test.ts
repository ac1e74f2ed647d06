// sameCluster: which registered deliveries a removal consults (pure logic on cluster specs).
import { describe, expect, it } from 'vitest';
import type { ClusterTarget } from '../../../functions/core/config/index.ts';
import { sameCluster } from '../../../functions/core/reconcile/shared-objects.ts';

const eks = (name: string, region: string, roleArn?: string): ClusterTarget => ({
  eks: { name, region, ...(roleArn && { roleArn }) },
});
const role = (account: string, name = 'deployer') => `arn:aws:iam::${account}:role/${name}`;

describe('sameCluster', () => {
  it('EKS: the same name and region, through roles of the same account', () => {
    expect(sameCluster(eks('prod', 'eu-west-1'), eks('prod', 'eu-west-1'))).toBe(true);
    expect(sameCluster(eks('prod', 'eu-west-1', role('111111111111')), eks('prod', 'eu-west-1'))).toBe(true);
    expect(
      sameCluster(
        eks('prod', 'eu-west-1', role('111111111111', 'a')),
        eks('prod', 'eu-west-1', role('111111111111', 'b')),
      ),
    ).toBe(true);
  });

  it('EKS: another name, region or account is another cluster', () => {
    expect(sameCluster(eks('prod', 'eu-west-1'), eks('staging', 'eu-west-1'))).toBe(false);
    expect(sameCluster(eks('prod', 'eu-west-1'), eks('prod', 'us-east-1'))).toBe(false);
    expect(
      sameCluster(
        eks('prod', 'eu-west-1', role('111111111111')),
        eks('prod', 'eu-west-1', role('222222222222')),
      ),
    ).toBe(false);
  });

  it('kubeconfig: the same file (however written), and the same context when both name one', () => {
    expect(sameCluster({ kubeconfig: '/etc/k/config' }, { kubeconfig: '/etc/k/../k/config' })).toBe(true);
    expect(sameCluster({ kubeconfig: '/etc/k/config', context: 'a' }, { kubeconfig: '/etc/k/config' })).toBe(
      true,
    );
    expect(
      sameCluster(
        { kubeconfig: '/etc/k/config', context: 'a' },
        { kubeconfig: '/etc/k/config', context: 'b' },
      ),
    ).toBe(false);
    expect(sameCluster({ kubeconfig: '/etc/k/config' }, { kubeconfig: '/etc/k/other' })).toBe(false);
  });

  it('an EKS cluster and a kubeconfig are never taken for the same cluster', () => {
    expect(sameCluster(eks('prod', 'eu-west-1'), { kubeconfig: '/etc/k/config' })).toBe(false);
  });
});
