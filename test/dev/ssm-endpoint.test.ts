// The SSM stand-in checks what real SSM checks: who signed a request (SigV4), and who may signal
// an aws:approve step (the approver forms aws:approve takes).
import { GetAutomationExecutionCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSsmEndpoint, isApprover } from '../../dev/ssm-endpoint.ts';

const ROLE = 'arn:aws:iam::123456789012:role/teams/Approver';

describe('the SSM stand-in: approvers', () => {
  it('a listed role approves through its sessions in its own account, a user by ARN or name', () => {
    expect(isApprover('arn:aws:sts::123456789012:assumed-role/Approver/alice', ROLE)).toBe(true);
    expect(isApprover('arn:aws:sts::999999999999:assumed-role/Approver/alice', ROLE)).toBe(false);
    expect(isApprover('arn:aws:sts::123456789012:assumed-role/Approver2/alice', ROLE)).toBe(false);
    expect(isApprover('arn:aws:iam::123456789012:user/bob', 'arn:aws:iam::123456789012:user/bob')).toBe(true);
    expect(isApprover('arn:aws:iam::123456789012:user/bob', 'bob')).toBe(true);
    expect(isApprover('arn:aws:iam::123456789012:user/bob', 'mallory')).toBe(false);
    expect(isApprover('arn:aws:sts::123456789012:assumed-role/bob/x', 'bob')).toBe(false);
  });
});

describe('the SSM stand-in: signatures', () => {
  const ALICE = {
    accessKeyId: 'AKIAALICEXXXXXXXXXXX',
    secretAccessKey: 'secret-of-alice',
    arn: 'arn:aws:iam::123456789012:user/alice',
  };
  async function serve(now: () => Date) {
    const ssm = createSsmEndpoint({
      identities: [ALICE],
      documents: new Map(),
      invoke: async () => ({ statusCode: 200, payload: '' }),
      now,
    });
    await new Promise<void>((ready) => ssm.server.listen(0, '127.0.0.1', ready));
    const endpoint = `http://127.0.0.1:${(ssm.server.address() as AddressInfo).port}`;
    return { endpoint, close: () => new Promise((done) => ssm.server.close(done)) };
  }
  const get = (endpoint: string, credentials = ALICE) =>
    new SSMClient({ endpoint, region: 'us-east-1', credentials }).send(
      new GetAutomationExecutionCommand({ AutomationExecutionId: '4105a4fc-f944-11e6-9d32-8fb2db27a909' }),
    );

  it('answers a signed request, and refuses an unsigned one, an unknown key and a stale signature', async () => {
    const fresh = await serve(() => new Date());
    try {
      await expect(get(fresh.endpoint)).rejects.toThrow(/Automation execution .* not found/);
      await expect(get(fresh.endpoint, { ...ALICE, accessKeyId: 'AKIAUNKNOWNXXXXXXXXX' })).rejects.toThrow(
        /security token included in the request is invalid/,
      );
      const unsigned = await fetch(fresh.endpoint, {
        method: 'POST',
        headers: {
          'x-amz-target': 'AmazonSSM.GetAutomationExecution',
          'content-type': 'application/x-amz-json-1.1',
        },
        body: '{}',
      });
      expect(await unsigned.json()).toMatchObject({ __type: 'MissingAuthenticationToken' });
    } finally {
      await fresh.close();
    }
    const later = await serve(() => new Date(Date.now() + 10 * 60_000));
    try {
      await expect(get(later.endpoint)).rejects.toThrow(/the request time is too skewed/);
    } finally {
      await later.close();
    }
  });
});
