// The SSM stand-in for runbook tests: identities it verifies, a client signing as one of them, and
// the stand-in listening on a free local port.
import { SSMClient } from '@aws-sdk/client-ssm';
import type { AddressInfo } from 'node:net';
import { createSsmEndpoint, type SsmEndpoint, type SsmEndpointOptions } from '../../dev/ssm-endpoint.ts';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';

/** A principal of the test account the stand-in knows by its key pair. */
export const ssmIdentity = (name: string, arn: string): TestIdentity => ({
  accessKeyId: `AKIA${name.toUpperCase().padEnd(16, 'X')}`,
  secretAccessKey: `secret-of-${name}-${'k'.repeat(20)}`,
  arn,
});

/** An SSM client of `endpoint` signing as `who` (its clock `offset` ms ahead, as AWS's may be). */
export const ssmClient = (endpoint: string, who: TestIdentity, offset = 0): SSMClient =>
  new SSMClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: who.accessKeyId, secretAccessKey: who.secretAccessKey },
    systemClockOffset: offset,
  });

/** The stand-in listening on 127.0.0.1, with its endpoint URL; close it with `ssm.server.close`. */
export async function listenSsm(
  options: SsmEndpointOptions,
): Promise<{ ssm: SsmEndpoint; endpoint: string }> {
  const ssm = createSsmEndpoint(options);
  await new Promise<void>((ready) => ssm.server.listen(0, '127.0.0.1', ready));
  return { ssm, endpoint: `http://127.0.0.1:${(ssm.server.address() as AddressInfo).port}` };
}
