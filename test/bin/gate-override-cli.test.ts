// `sluice gate override` as an on-call engineer runs it: signed with their AWS credentials, sent to
// the gate function's break_glass entry URL (the stand-in checks SigV4, the STS stand-in the
// proof), on DynamoDB Local and the kube-apiserver. Without --function it is refused: locally the
// CLI could only claim who you are.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { activeOverrides } from '../../functions/core/store/gate-overrides.ts';
import { startAwsRecorder } from '../support/aws-recorder.ts';
import { sluice, sluiceAs } from '../support/cli.ts';
import { engineDeps, pushFiles, registerDelivery } from '../support/deliveries.ts';
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

/** The words of `sluice gate override <gate> --revision <revision> --for <window>`, then `more`. */
const override = (
  { gate, revision, window }: { gate: string; revision: string; window: string },
  ...more: string[]
) => ['gate', 'override', gate, '--revision', revision, '--for', window, ...more];

describe('sluice gate override', () => {
  it('sends a signed override to the break_glass entry: the hotfix applies through the closed gate', async () => {
    const gate = uniqueName('freeze');
    const delivery = uniqueName('hotfix');
    const ns = uniqueName('hotfix');
    const repository = uniqueName('cli/hotfix');
    await createNamespace(bed.kubeConfig(), ns);
    await registerGate(deps, { name: gate, default: 'closed' });
    await registerDelivery(deps, bed, {
      name: delivery,
      repository,
      tag: 'v1',
      gates: [{ name: gate, blocks: 'all' }],
    });
    const digest = await pushFiles(bed, repository, 'v1', { 'cm.yaml': configMapYaml('app', ns, 'hotfix') });
    const revision = `v1@${digest}`;

    const made = await as(
      alice,
      ...override({ gate, revision, window: '1h' }, '--reason', 'INC-77 hotfix', '--function', 'sluice-gate'),
    );
    expect(made.stderr).toBe('');
    expect(made.stdout).toContain(
      `break-glass override of gate '${gate}': lets ${revision.split('@')[1]} (tag "${revision.split('@')[0]}" claimed, not checked against the registry) (deliveries ${delivery}) until`,
    );
    expect(made.stdout).toContain(`by ${ALICE}: INC-77 hotfix; reconciling ${delivery}`);
    expect(recorder.requests.some((r) => r.path.includes('/url?Qualifier=break_glass'))).toBe(true);
    expect(await configMapValue(core, 'app', ns)).toBe('hotfix');
    expect(await activeOverrides(deps.db, gate, new Date())).toMatchObject([
      { gate, revision, madeBy: alice.arn, source: 'url' },
    ]);
  });

  it('refuses without --function (a local claim), and a bad request before anything is sent', async () => {
    const gate = uniqueName('freeze');
    await registerGate(deps, { name: gate, default: 'closed' });
    const revision = `v1@sha256:${'b'.repeat(64)}`;
    const local = await sluice(...override({ gate, revision, window: '1h' }, '--reason', 'x'));
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('a break-glass override ("action": "override") takes a verified identity');
    const sent = urls.invocations;
    const noReason = await as(alice, ...override({ gate, revision, window: '1h' }, '--function', 'f'));
    expect(noReason.stderr).toContain('"reason" is required and may not be blank');
    const tooLong = await as(
      alice,
      ...override({ gate, revision, window: '2d' }, '--reason', 'x', '--function', 'f'),
    );
    expect(tooLong.stderr).toContain('"window": 2d is longer than 1d, the longest any override may last');
    expect(urls.invocations).toBe(sent);
    expect(await activeOverrides(deps.db, gate, new Date())).toEqual([]);
  });
});
