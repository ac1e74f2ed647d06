import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { stsCallerIdentity } from '../../functions/core/aws/sts-caller-identity.ts';
import { timerSleep, type Clock } from '../../functions/core/clock.ts';
import { parseGate, type Gate } from '../../functions/core/config/index.ts';
import type { GateDeps, WindowTimer } from '../../functions/core/gates/requests.ts';
import type { SignerRules } from '../../functions/core/access/signers.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { putGate } from '../../functions/core/store/gates.ts';
import type { Components } from '../../dev/components.ts';
import { engineDeps, pushFiles, registerDelivery } from './deliveries.ts';
import { createNamespace, uniqueName } from './testbed.ts';

/** The account of the test identities (dev/sigv4-identity.ts) and of the stand-ins. */
export const TEST_ACCOUNT = '123456789012';
/** The account of the SSM stand-in's identities (test/support/ssm-stand-in.ts). */
const SSM_TEST_ACCOUNT = '000000000000';

/** An entry → grantees map that grants every entry to the same principals. */
class EveryEntry extends Map<string, readonly string[]> {
  constructor(private readonly principals: readonly string[]) {
    super();
  }
  override get(): readonly string[] {
    return this.principals;
  }
}

/**
 * The test accounts (123456789012, every test identity's but the outsiders'; the SSM stand-in's
 * 000000000000) trusted and granted
 * every entry, as `grantGateRequests(new AccountRootPrincipal(), …)` for each gate would: the setup
 * of tests about what happens once a signer may act. Tests of who may act give precise rules.
 */
export const TEST_ACCOUNT_SIGNERS: SignerRules = {
  trustedAccounts: [TEST_ACCOUNT, SSM_TEST_ACCOUNT],
  grantees: new EveryEntry([TEST_ACCOUNT, SSM_TEST_ACCOUNT]),
};

/** Rules trusting the test account and granting each entry exactly the principals given. */
export function signersGranting(grantees: Readonly<Record<string, readonly string[]>>): SignerRules {
  return { trustedAccounts: [TEST_ACCOUNT], grantees: new Map(Object.entries(grantees)) };
}

/** A clock the test moves by hand: its sleep waits for real, and moves nothing. */
export interface ManualClock extends Clock {
  set(iso: string): void;
  advance(ms: number): void;
}

export function manualClock(start: string): ManualClock {
  let now = new Date(start);
  return {
    now: () => new Date(now),
    sleep: timerSleep,
    set: (iso) => {
      now = new Date(iso);
    },
    advance: (ms) => {
      now = new Date(now.getTime() + ms);
    },
  };
}

export async function registerGate(deps: ReconcileDeps, spec: Record<string, unknown>): Promise<Gate> {
  const gate = parseGate(spec);
  await putGate(deps.db, gate, deps.clock.now());
  return gate;
}

/** A delivery in a fresh namespace behind one fresh gate, on a clock the test moves by hand. */
export interface GatedDelivery {
  readonly clock: ManualClock;
  readonly deps: ReconcileDeps & { readonly clock: ManualClock };
  readonly gate: string;
  readonly delivery: string;
  readonly ns: string;
  readonly repository: string;
  /** Pushes a revision of one ConfigMap `app` whose value is `value`, at the delivery's tag; answers `<tag>@<digest>`. */
  readonly pushValue: (value: string) => Promise<string>;
  /** The value of the ConfigMap `app` in the cluster now (undefined: none). */
  readonly applied: () => Promise<string | undefined>;
}

/**
 * Registers a fresh gate and a delivery behind it, with a namespace of the delivery's own (made in
 * the cluster); nothing is pushed. Names are unique, from the prefixes in `names` (the namespace
 * takes the delivery's).
 */
export async function gatedDelivery(
  bed: Components & { readonly kubeConfig: () => KubeConfig },
  options: {
    /** When the clock starts. */
    readonly start: string;
    /** The gate's spec, but its name. */
    readonly gate: Record<string, unknown>;
    /** How the gate holds the delivery; unset, the delivery names the gate alone. */
    readonly blocks?: 'all' | 'revisions';
    /** The delivery's spec, but its name, repository and gates (`tag`: its source's tag, `main` by default). */
    readonly delivery?: Record<string, unknown>;
    readonly names: { readonly gate: string; readonly delivery: string; readonly repository: string };
    /** Engine dependencies besides the clock (a gate timer, a Change Calendar reader). */
    readonly deps?: Partial<ReconcileDeps>;
  },
): Promise<GatedDelivery> {
  const clock = manualClock(options.start);
  const deps = { ...engineDeps(), ...options.deps, clock };
  const gate = uniqueName(options.names.gate);
  const delivery = uniqueName(options.names.delivery);
  const ns = uniqueName(options.names.delivery);
  const repository = uniqueName(options.names.repository);
  const tag = (options.delivery?.tag as string | undefined) ?? 'main';
  await createNamespace(bed.kubeConfig(), ns);
  await registerGate(deps, { name: gate, ...options.gate });
  await registerDelivery(deps, bed, {
    name: delivery,
    repository,
    ...options.delivery,
    gates: [{ name: gate, ...(options.blocks && { blocks: options.blocks }) }],
  });
  const core = bed.kubeConfig().makeApiClient(CoreV1Api);
  return {
    clock,
    deps,
    gate,
    delivery,
    ns,
    repository,
    pushValue: async (value) =>
      `${tag}@${await pushFiles(bed, repository, tag, { 'cm.yaml': configMapYaml('app', ns, value) })}`,
    applied: () => configMapValue(core, 'app', ns),
  };
}

/**
 * Gate dependencies whose catch-up reconciles in this process (what the reconcile function does
 * when the gate function invokes it), with the results and window timers kept for assertions.
 */
export function inProcessGateDeps(deps: ReconcileDeps): GateDeps & {
  readonly reconciled: ReconcileResult[];
  readonly timers: { gate: string; at: string }[];
} {
  const reconciled: ReconcileResult[] = [];
  const timers: { gate: string; at: string }[] = [];
  const windowTimer: WindowTimer = {
    reopenAt: async (gate, at) => {
      timers.push({ gate, at: at.toISOString() });
    },
  };
  return {
    db: deps.db,
    clock: deps.clock,
    alarmStates: deps.alarmStates,
    changeCalendarStates: deps.changeCalendarStates,
    reconcileNow: async (names) => {
      for (const name of names) reconciled.push(await reconcile(name, deps));
    },
    windowTimer,
    sts: stsCallerIdentity(inject('components').sts.endpoint),
    signers: TEST_ACCOUNT_SIGNERS,
    reconciled,
    timers,
  };
}

/** A ConfigMap manifest whose `data.value` tells which revision is applied. */
export const configMapYaml = (name: string, ns: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  value: "${value}"\n`;

/** The `data.value` of a ConfigMap in the cluster, or undefined when there is none. */
export async function configMapValue(core: CoreV1Api, name: string, ns: string): Promise<string | undefined> {
  try {
    return (await core.readNamespacedConfigMap({ name, namespace: ns })).data?.value;
  } catch {
    return undefined;
  }
}
