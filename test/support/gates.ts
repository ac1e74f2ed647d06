import type { CoreV1Api } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { stsCallerIdentity } from '../../functions/core/aws/sts-caller-identity.ts';
import type { Clock } from '../../functions/core/clock.ts';
import { parseGate, type Gate } from '../../functions/core/config/index.ts';
import type { GateDeps, WindowTimer } from '../../functions/core/gates/requests.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile, type ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { putGate } from '../../functions/core/store/gates.ts';

/** A clock the test moves by hand. */
export interface ManualClock extends Clock {
  set(iso: string): void;
  advance(ms: number): void;
}

export function manualClock(start: string): ManualClock {
  let now = new Date(start);
  return {
    now: () => new Date(now),
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
