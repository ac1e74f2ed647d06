// The CloudFormation stand-in, through @aws-sdk/client-cloudformation (the AWS query protocol):
// DescribeStacks of the stacks in its folder, answered only to a signature that holds.
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleCloudFormationRequest, writeStandInStack } from '../../dev/cloudformation-endpoint.ts';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';

const stacksDir = mkdtempSync(join(tmpdir(), 'sluice-cfn-'));
const options = {
  stacksDir,
  identities: [TEST_IDENTITIES.carol],
  region: 'eu-west-1',
  account: '123456789012',
};
const server = createServer((req, res) => handleCloudFormationRequest(options, req, res));
let endpoint: string;

beforeAll(async () => {
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  rmSync(stacksDir, { recursive: true, force: true });
});

const client = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
  new CloudFormationClient({ endpoint, region: 'eu-west-1', credentials, maxAttempts: 1 });
const carol = () => client(TEST_IDENTITIES.carol);

describe('the CloudFormation stand-in', () => {
  it("answers DescribeStacks with a stack's outputs, export names and an ARN as stack id", async () => {
    writeStandInStack(stacksDir, 'Shop', {
      outputs: [
        {
          OutputKey: 'SluiceTableName',
          OutputValue: 'shop-table',
          ExportName: 'Shop-TableName',
          Description: 'sluice: <the table>',
        },
      ],
    });
    const { Stacks } = await carol().send(new DescribeStacksCommand({ StackName: 'Shop' }));
    expect(Stacks).toHaveLength(1);
    expect(Stacks![0]).toMatchObject({
      StackName: 'Shop',
      StackStatus: 'CREATE_COMPLETE',
      Outputs: [
        {
          OutputKey: 'SluiceTableName',
          OutputValue: 'shop-table',
          ExportName: 'Shop-TableName',
          Description: 'sluice: <the table>',
        },
      ],
    });
    expect(Stacks![0]!.StackId).toMatch(
      /^arn:aws:cloudformation:eu-west-1:123456789012:stack\/Shop\/[0-9a-f-]{36}$/,
    );
    const byId = await carol().send(new DescribeStacksCommand({ StackName: Stacks![0]!.StackId }));
    expect(byId.Stacks![0]!.StackName).toBe('Shop');
  });

  it('says a stack that is not there does not exist, as CloudFormation does', async () => {
    await expect(carol().send(new DescribeStacksCommand({ StackName: 'Nope' }))).rejects.toMatchObject({
      name: 'ValidationError',
      message: 'Stack with id Nope does not exist',
    });
  });

  it('refuses a signature made with the wrong secret, and an unknown key', async () => {
    const forged = client({
      accessKeyId: TEST_IDENTITIES.carol.accessKeyId,
      secretAccessKey: 'not-carols-secret',
    });
    await expect(forged.send(new DescribeStacksCommand({ StackName: 'Shop' }))).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
    });
    const stranger = client({ accessKeyId: 'AKIASTRANGER0000000', secretAccessKey: 'whatever' });
    await expect(stranger.send(new DescribeStacksCommand({ StackName: 'Shop' }))).rejects.toMatchObject({
      name: 'InvalidClientTokenId',
    });
  });

  it('refuses an unsigned request', async () => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Action=DescribeStacks&Version=2010-05-15',
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>MissingAuthenticationToken</Code>');
  });
});
