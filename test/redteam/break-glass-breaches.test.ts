// Red team: break-glass overrides, attacked on the real components (DynamoDB Local, the
// kube-apiserver, the registry, the STS stand-in). Each test asserts the secure behaviour; a test
// that fails shows a breach of the override's promise.
//
// 1. Loudness depends on the catch-up reconcile: the override is written (and in force) before the
//    gate function asks the reconcile function to run; when that invocation fails, the function
//    fails the request (HTTP 500 / a function error), so the BreakGlassOverride metric (what
//    breakGlassAlarm watches) is never recorded and the caller is told it failed, yet the override
//    lets its revision through at the next scheduled reconcile.
// 2. maxOverride bounds an override only when it is made: lowering the gate's maxOverride (the
//    operator's lever against an abused override) leaves an override already made in force for
//    its whole original window, longer than the gate now allows.
// 3. An override without --delivery covers deliveries that start naming the gate after it was
//    made: its event, message and reconcile list named only the deliveries of the time.
import { Metrics } from '@aws-lambda-powertools/metrics';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import {
  overrideRequestDigest,
  type OverrideFields,
} from '../../functions/core/break-glass/override-event.ts';
import type { OverrideResult } from '../../functions/core/break-glass/override-request.ts';
import type { GateDeps } from '../../functions/core/gates/requests.ts';
import { activeOverrides } from '../../functions/core/store/gate-overrides.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { proveRequest } from '../../bin/commands/signed-gate-request.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { configMapValue, inProcessGateDeps, manualClock, registerGate } from '../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const REGION = 'eu-west-1';
const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
const BREAK_GLASS = `${FUNCTION_ARN}:break_glass`;

/** A ConfigMap without a namespace: each delivery applies it to its targetNamespace. */
const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: "1.3.1"\n';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A break-glass override signed by `who` and sent by direct invocation of the break_glass alias. */
async function override(
  gateDeps: GateDeps,
  fields: OverrideFields,
  who: TestIdentity = TEST_IDENTITIES.alice,
): Promise<OverrideResult> {
  process.env.AWS_ENDPOINT_URL_STS = inject('components').sts.endpoint;
  const proof = await proveRequest(overrideRequestDigest(fields), FUNCTION_ARN, REGION, {
    accessKeyId: who.accessKeyId,
    secretAccessKey: who.secretAccessKey,
    ...(who.sessionToken && { sessionToken: who.sessionToken }),
  });
  return (await gateHandler(() => gateDeps)(
    { ...fields, proof },
    { invokedFunctionArn: BREAK_GLASS },
  )) as OverrideResult;
}

/** A closed gate, a delivery behind it (blocks: all) and a revision it holds. */
async function heldRelease(gateSpec: Record<string, unknown> = {}) {
  const clock = manualClock(new Date().toISOString());
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('freeze');
  const delivery = uniqueName('bg');
  const ns = uniqueName('bg');
  const repository = uniqueName('bg/app');
  await createNamespace(bed.kubeConfig(), ns);
  await registerGate(deps, { name: gate, default: 'closed', window: '1h', ...gateSpec });
  await registerDelivery(deps, bed, {
    name: delivery,
    repository,
    tag: 'release',
    targetNamespace: ns,
    gates: [{ name: gate, blocks: 'all' }],
  });
  const digest = await pushFiles(bed, repository, 'release', { 'cm.yaml': CONFIG_MAP });
  const revision = `release@${digest}`;
  expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision });
  return { clock, deps, gate, delivery, ns, repository, revision };
}

describe('break-glass: an override is loud whenever it is in force', () => {
  it('an override whose catch-up reconcile could not be invoked is not left in force unreported (no metric, caller told it failed)', async () => {
    const { deps, gate, delivery, ns, revision } = await heldRelease();
    const metricNames: string[] = [];
    const real = Metrics.prototype.addMetric;
    vi.spyOn(Metrics.prototype, 'addMetric').mockImplementation(function (this: Metrics, ...args) {
      metricNames.push(args[0]);
      return real.apply(this, args);
    });
    // The reconcile function's asynchronous invocation fails (throttled, a KMS or permission hiccup).
    const gateDeps: GateDeps = {
      ...inProcessGateDeps(deps),
      reconcileNow: async () => {
        throw new Error('Rate exceeded (TooManyRequestsException)');
      },
    };
    const answer = await override(gateDeps, {
      action: 'override',
      gates: [gate],
      revision,
      window: '1h',
      reason: 'INC-77 hotfix',
    }).then(
      (result) => ({ failed: false as const, result }),
      (error: unknown) => ({ failed: true as const, error: String(error) }),
    );

    const inForce = (await activeOverrides(deps.db, gate, deps.clock.now())).length > 0;
    // The next scheduled reconcile (the interval schedule) lets the revision through.
    const next = await run(delivery, deps);
    const applied = (await configMapValue(core, 'app', ns)) === '1.3.1';

    if (inForce || applied) {
      // In force: it must have been reported as made, and counted for breakGlassAlarm.
      expect
        .soft(answer, 'the override is in force, but the gate function answered with an error')
        .toMatchObject({ failed: false });
      expect
        .soft(metricNames, 'the override is in force, but BreakGlassOverride was never recorded')
        .toContain('BreakGlassOverride');
    }
    expect(next.outcome === 'Succeeded' ? applied : true).toBe(true);
  });
});

describe("break-glass: an override lasts at most its gate's maxOverride", () => {
  it('lowering maxOverride bounds the overrides already in force', async () => {
    const { clock, deps, gate, delivery, revision } = await heldRelease({ maxOverride: '4h' });
    const gateDeps = inProcessGateDeps(deps);
    const made = await override(gateDeps, {
      action: 'override',
      gates: [gate],
      revision,
      window: '4h',
      reason: 'INC-78 hotfix',
    });
    expect(made.outcome).toBe('accepted');
    expect(gateDeps.reconciled.at(-1)).toMatchObject({ delivery, outcome: 'Succeeded', revision });

    // The operator lowers the gate's maxOverride to 30m (a deploy re-registers the gate).
    await registerGate(deps, { name: gate, default: 'closed', window: '1h', maxOverride: '30m' });
    clock.advance(60 * 60_000);
    // An hour after it was made, twice what the gate now allows, the override still lets the revision through.
    const later = await run(delivery, deps);
    expect(later, "the override outlived the gate's maxOverride (30m)").toMatchObject({ outcome: 'Blocked' });
  });
});

describe('break-glass: an override applies to the deliveries in its scope only', () => {
  it('an override without --delivery does not cover a delivery that names the gate only after it was made', async () => {
    const { deps, gate, delivery, repository, revision } = await heldRelease();
    const gateDeps = inProcessGateDeps(deps);
    const made = await override(gateDeps, {
      action: 'override',
      gates: [gate],
      revision,
      window: '1h',
      reason: 'INC-79 hotfix for checkout',
    });
    expect(made.reconciling).toEqual([delivery]);

    // Afterwards another delivery of the same artifact (another environment's) is put behind the gate.
    const late = uniqueName('bg-late');
    const ns = uniqueName('bg-late');
    await createNamespace(bed.kubeConfig(), ns);
    await registerDelivery(deps, bed, {
      name: late,
      repository,
      tag: 'release',
      targetNamespace: ns,
      gates: [{ name: gate, blocks: 'all' }],
    });
    const result = await run(late, deps);
    expect(
      result,
      `the override (made and announced for ${delivery} only) let ${late} through`,
    ).toMatchObject({
      outcome: 'Blocked',
    });
    expect(await configMapValue(core, 'app', ns)).toBeUndefined();
  });
});
