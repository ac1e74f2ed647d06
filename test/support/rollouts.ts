// A fleet of deliveries in one rollout on the real components (kube-apiserver, registry, DynamoDB
// Local), and rollout actions as `sluice rollout … --function` sends them: signed with a proof of
// the sender, through the gate function's rollouts alias.
import { CoreV1Api } from '@kubernetes/client-node';
import { proveRequest } from '../../bin/commands/signed-gate-request.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { parseRollout } from '../../functions/core/config/index.ts';
import {
  rolloutActionDigest,
  ROLLOUTS_ALIAS,
  type RolloutActionFields,
} from '../../functions/core/gates/rollout-action-event.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import type { RolloutActionResult } from '../../functions/core/reconcile/rollout-actions.ts';
import { readRolloutState } from '../../functions/core/reconcile/rollout-target.ts';
import { getRollout, putRollout } from '../../functions/core/store/rollouts.ts';
import { gateHandler, type GateFunctionDeps } from '../../functions/gate/handler.ts';
import { credentialsOf, GATE_FUNCTION } from './break-glass.ts';
import { engineDeps, pushFiles, registerDelivery } from './deliveries.ts';
import { configMapValue, configMapYaml, inProcessGateDeps, manualClock } from './gates.ts';
import { createNamespace, uniqueName, type testbed } from './testbed.ts';

/** The Lambda context of an invocation through the rollouts alias. */
export const ROLLOUTS_ENTRY = { invokedFunctionArn: `${GATE_FUNCTION}:${ROLLOUTS_ALIAS}` };

export interface FleetOptions {
  /** Members per wave. */
  readonly waves: readonly number[];
  /** The first wave's soak. */
  readonly soak?: string;
  /** A gate on the given wave (0-based index). */
  readonly waveGate?: { readonly wave: number; readonly gate: string };
  readonly supersede?: 'wait' | 'restart';
  readonly maxParallel?: number;
  /** When the test's clock starts. @default 2026-04-01T10:00:00Z (signed actions need now) */
  readonly start?: string;
  /** Extra engine dependencies (an alarm reader). */
  readonly deps?: Partial<ReconcileDeps>;
}

/**
 * A fleet of deliveries of one repository, each into its own namespace, in a rollout of
 * `waves` (sizes); follow-up reconciles run in this process until `loseEvents` (then nothing
 * follows). `handler` is the gate function on the same table, clock and STS stand-in.
 */
export async function fleet(bed: ReturnType<typeof testbed>, options: FleetOptions) {
  const core = bed.kubeConfig().makeApiClient(CoreV1Api);
  const clock = manualClock(options.start ?? '2026-04-01T10:00:00Z');
  const asked: string[][] = [];
  const followed: ReconcileResult[] = [];
  let lost = false;
  const deps: ReconcileDeps = {
    ...engineDeps(),
    clock,
    retryTimer: { retryAt: async (_delivery, at) => at },
    reconcileNow: async (names) => {
      asked.push([...names]);
      if (lost) return;
      for (const name of names) followed.push(await reconcile(name, deps));
    },
    ...options.deps,
  };
  const repository = uniqueName('rollout/app');
  const waves = options.waves.map((size, w) =>
    Array.from({ length: size }, (_, i) => uniqueName(`w${w + 1}m${i + 1}`)),
  );
  const push = (value: string, text = configMapYaml('app', 'default', value)) =>
    pushFiles(bed, repository, 'main', { 'cm.yaml': text });
  await push('v1');
  for (const name of waves.flat()) {
    await createNamespace(bed.kubeConfig(), name);
    await registerDelivery(deps, bed, { name, repository, targetNamespace: name });
  }
  const name = uniqueName('rollout');
  const rollout = parseRollout({
    name,
    source: { url: `oci://${bed.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
    waves: waves.map((deliveries, w) => ({
      deliveries,
      ...(w === 0 && options.soak && { soak: options.soak }),
      ...(options.waveGate?.wave === w && { gate: options.waveGate.gate }),
    })),
    ...(options.supersede && { supersede: options.supersede }),
    ...(options.maxParallel && { maxParallel: options.maxParallel }),
  });
  await putRollout(deps.db, rollout, clock.now());
  const inProcess = inProcessGateDeps(deps);
  // The reconcile function's invocation lands a moment after the action (a second here), as in AWS.
  const gateDeps: typeof inProcess & GateFunctionDeps = {
    ...inProcess,
    rolloutEvents: deps.events,
    reconcileNow: async (names) => {
      clock.advance(1_000);
      await inProcess.reconcileNow!(names);
    },
  };
  const handler = gateHandler(() => gateDeps);
  return {
    deps,
    gateDeps,
    handler,
    clock,
    asked,
    followed,
    waves,
    name,
    push,
    value: (member: string) => configMapValue(core, 'app', member),
    state: async () => readRolloutState((await getRollout(deps.db, name))!, deps, clock.now()),
    /** A signed rollout action by `who` (alice by default) through the rollouts alias. */
    act: (
      action: 'halt' | 'resume' | 'rollback',
      reason: string,
      who: TestIdentity = TEST_IDENTITIES.alice,
    ) => signedRolloutAction(handler, { rollout: name, action, reason }, who),
    loseEvents: () => {
      lost = true;
    },
  };
}

/** A signed rollout action by `who` sent to `handler` as a direct invocation of the rollouts alias. */
export async function signedRolloutAction(
  handler: ReturnType<typeof gateHandler>,
  fields: RolloutActionFields,
  who: TestIdentity = TEST_IDENTITIES.alice,
  context: { invokedFunctionArn: string } = ROLLOUTS_ENTRY,
): Promise<RolloutActionResult> {
  const proof = await proveRequest(
    rolloutActionDigest(fields),
    GATE_FUNCTION,
    'eu-west-1',
    credentialsOf(who),
  );
  return (await handler({ ...fields, proof }, context)) as RolloutActionResult;
}
