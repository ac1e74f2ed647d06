// `sluice rollback` as an on-call engineer runs it during a freeze: signed with their AWS
// credentials, sent to the gate function's rollbacks entry URL (the stand-in checks SigV4, the STS
// stand-in the proof), on DynamoDB Local, the registry and the kube-apiserver. Without --function
// it is refused: locally the CLI could only claim who you are.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { startAwsRecorder } from '../support/aws-recorder.ts';
import { sluice, sluiceAs } from '../support/cli.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { REGION, startFunctionUrls, type FunctionUrls, type TestPrincipal } from '../support/function-url.ts';
import { configMapValue, configMapYaml, inProcessGateDeps, registerGate } from '../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const deps = engineDeps();
const gateDeps = inProcessGateDeps(deps);
const { alice } = TEST_IDENTITIES;
const ALICE = 'alice@example.com (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012)';

let urls: FunctionUrls;
let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;
beforeAll(async () => {
  urls = await startFunctionUrls([alice], () => gateDeps);
  recorder = await startAwsRecorder({ functionUrl: (alias) => urls.url(alias) });
});
afterAll(async () => {
  await urls.stop();
  await recorder.stop();
});

const as = (who: TestPrincipal, ...args: string[]) =>
  sluiceAs({ who, lambdaEndpoint: recorder.url, region: REGION }, ...args);

/** A delivery behind a freeze gate (`blocks: revisions`) that applied v1 then v2; the gate is then closed. */
async function frozenAfterTwo() {
  const gate = uniqueName('friday');
  const delivery = uniqueName('roll');
  const ns = uniqueName('roll');
  const repository = uniqueName('cli/roll');
  await createNamespace(bed.kubeConfig(), ns);
  await registerGate(deps, { name: gate, default: 'open' });
  await registerDelivery(deps, bed, {
    name: delivery,
    repository,
    tag: 'v',
    gates: [{ name: gate, blocks: 'revisions' }],
  });
  const push = async (value: string) =>
    `v@${await pushFiles(bed, repository, 'v', { 'cm.yaml': configMapYaml('app', ns, value) })}`;
  const v1 = await push('v1');
  expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded', revision: v1 });
  const v2 = await push('v2');
  expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded', revision: v2 });
  await registerGate(deps, { name: gate, default: 'closed' });
  return { gate, delivery, ns, v1, v2, value: () => configMapValue(core, 'app', ns) };
}

describe('sluice rollback', () => {
  it('sends a signed rollback to the rollbacks entry: the delivery returns to its previous digest through the closed gate', async () => {
    const { gate, delivery, v1, v2, value } = await frozenAfterTwo();
    const made = await as(
      alice,
      'rollback',
      delivery,
      '--reason',
      'INC-90 errors',
      '--function',
      'sluice-gate',
    );
    expect(made.stderr).toBe('');
    expect(made.stdout).toContain(
      `delivery '${delivery}': rollback from ${v2.split('@')[1]} (tag v) to ${v1.split('@')[1]} (tag v) by ${ALICE}: INC-90 errors; through closed gate '${gate}'`,
    );
    expect(recorder.requests.some((r) => r.path.includes('/url?Qualifier=rollbacks'))).toBe(true);
    expect(await value()).toBe('v1');
    expect(await getStatus(deps.db, delivery)).toMatchObject({
      lastAppliedRevision: v1,
      rollback: { from: v2, to: v1, by: alice.arn, source: 'url' },
    });
  });

  it('refuses without --function (a local claim), and a bad request before anything is sent', async () => {
    const { delivery, value } = await frozenAfterTwo();
    const local = await sluice('rollback', delivery, '--reason', 'x');
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('a rollback takes a verified identity');
    const sent = urls.invocations;
    const noReason = await as(alice, 'rollback', delivery, '--function', 'f');
    expect(noReason.stderr).toContain('"reason" is required and may not be blank');
    const tag = await as(alice, 'rollback', delivery, '--to', 'v', '--reason', 'x', '--function', 'f');
    expect(tag.stderr).toContain('"revision": "v" names no digest');
    expect(urls.invocations).toBe(sent);
    expect((await getStatus(deps.db, delivery))?.rollback).toBeUndefined();
    expect(await value()).toBe('v2');
  });
});
