import type { KubernetesObject } from '@kubernetes/client-node';
import { CelEvaluationError, type CelCondition } from '../cel/condition.ts';
import { describeObject } from '../manifests/objects.ts';
import { groupKind, type Health, type HealthStatus, type LiveObject } from './health.ts';

/** A delivery's `healthCheckExprs`, compiled, by `group/Kind` (see groupKind). */
export type HealthCheckExprs = ReadonlyMap<string, CompiledCheck>;

export type ExpressionField = 'inProgress' | 'failed' | 'current';

/** Flux's order: the first expression that is true decides. */
const ORDER: readonly { readonly field: ExpressionField; readonly status: HealthStatus }[] = [
  { field: 'inProgress', status: 'InProgress' },
  { field: 'failed', status: 'Failed' },
  { field: 'current', status: 'Current' },
];

export type CompiledCheck = { readonly [F in ExpressionField]?: CelCondition } & {
  readonly current: CelCondition;
};

/**
 * The health of `object` by the expressions for its group and kind, or undefined when there are
 * none (kstatus's rules apply). As Flux: a generation not yet observed is in progress whatever the
 * expressions say; kstatus's Reconciling and Stalled conditions are not read. Unlike Flux, an
 * object being deleted is Terminating, as for every other kind: it will not stay. An expression
 * that cannot be evaluated (a field not there yet) leaves the object in progress, the message
 * saying why, as Flux keeps waiting with the error until the timeout.
 */
export function assessByExprs(object: LiveObject, exprs: HealthCheckExprs): Health | undefined {
  const check = exprs.get(groupKind(object));
  if (!check) return undefined;
  const name = describeObject(object as KubernetesObject);
  const say = (status: HealthStatus, message: string): Health => ({ status, message: `${name}: ${message}` });
  const generic = genericHealth(object);
  if (generic) return say(generic.status, generic.message);
  for (const { field, status } of ORDER) {
    const condition = check[field];
    if (!condition) continue;
    try {
      if (condition.evaluate(object))
        return say(status, `the ${field} expression is true: ${condition.source}`);
    } catch (error) {
      if (!(error instanceof CelEvaluationError)) throw error;
      return say(
        'InProgress',
        `the ${field} expression cannot be evaluated (${error.message}): ${condition.source}`,
      );
    }
  }
  return say('InProgress', `waiting for the current expression to be true: ${check.current.source}`);
}

/** What decides before the expressions: deletion, and a generation the controller has not seen. */
function genericHealth(object: LiveObject): Health | undefined {
  const { metadata, status } = object as {
    metadata?: { deletionTimestamp?: unknown; generation?: unknown };
    status?: { observedGeneration?: unknown };
  };
  if (metadata?.deletionTimestamp) return { status: 'Terminating', message: 'being deleted' };
  const generation = metadata?.generation;
  const observed = status?.observedGeneration;
  if (Number.isInteger(generation) && Number.isInteger(observed) && generation !== observed) {
    return {
      status: 'InProgress',
      message: `generation ${String(generation)} not yet observed (observed ${String(observed)})`,
    };
  }
  return undefined;
}
