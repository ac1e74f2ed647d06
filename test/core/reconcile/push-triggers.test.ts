// Which deliveries an ECR push event reconciles: those of the named repository in the event's
// registry, whichever of its hosts (classic, FIPS, dual-stack) the delivery pulls through; on
// DynamoDB Local.
import { describe, expect, it } from 'vitest';
import { parseDelivery } from '../../../functions/core/config/index.ts';
import { deliveriesForEvent } from '../../../functions/core/reconcile/triggers.ts';
import { putDelivery } from '../../../functions/core/store/deliveries.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();
const deps = engineDeps();

async function register(name: string, host: string, repository: string) {
  await putDelivery(
    deps.db,
    parseDelivery({
      name,
      source: { url: `oci://${host}/${repository}` },
      cluster: { eks: { name: 'prod', region: 'us-east-1' } },
    }),
    new Date(),
  );
}

const pushEvent = (account: string, region: string, repository: string) => ({
  source: 'aws.ecr' as const,
  'detail-type': 'ECR Image Action' as const,
  account,
  region,
  detail: { 'action-type': 'PUSH', result: 'SUCCESS', 'repository-name': repository, 'image-tag': 'v1' },
});

describe('ECR push events', () => {
  it("reconcile the repository's deliveries through any of its registry's hosts, and none of another account or region", async () => {
    const repository = uniqueName('team/app');
    const names = {
      classic: uniqueName('classic'),
      fips: uniqueName('fips'),
      dualStack: uniqueName('dual'),
      otherAccount: uniqueName('other-account'),
      otherRegion: uniqueName('other-region'),
      otherAccountDualStack: uniqueName('other-dual'),
    };
    await register(names.classic, '123456789012.dkr.ecr.us-east-1.amazonaws.com', repository);
    await register(names.fips, '123456789012.dkr.ecr-fips.us-east-1.amazonaws.com', repository);
    await register(names.dualStack, '123456789012.dkr-ecr.us-east-1.on.aws', repository);
    await register(names.otherAccount, '210987654321.dkr.ecr.us-east-1.amazonaws.com', repository);
    await register(names.otherRegion, '123456789012.dkr.ecr.eu-west-1.amazonaws.com', repository);
    await register(names.otherAccountDualStack, '210987654321.dkr-ecr.us-east-1.on.aws', repository);

    const reconciled = await deliveriesForEvent(pushEvent('123456789012', 'us-east-1', repository), deps.db);
    expect(reconciled.sort()).toEqual([names.classic, names.fips, names.dualStack].sort());
  });
});
