import { compileCondition } from '../cel/compile.ts';
import type { HealthCheckExpr } from '../config/types.ts';
import { groupKind } from './health.ts';
import type { CompiledCheck, ExpressionField, HealthCheckExprs } from './health-exprs.ts';

/**
 * Compiles each expression once, for every poll of a run. They were checked when the delivery was
 * registered; an error here names the entry and field all the same.
 */
export function compileHealthCheckExprs(entries: readonly HealthCheckExpr[] = []): HealthCheckExprs {
  return new Map(entries.map((entry, index) => [groupKind(entry), compileEntry(entry, index)]));
}

function compileEntry(entry: HealthCheckExpr, index: number): CompiledCheck {
  const compile = (field: ExpressionField, source: string) => {
    try {
      return compileCondition(source);
    } catch (error) {
      throw new Error(`healthCheckExprs[${index}].${field}: ${(error as Error).message}`, { cause: error });
    }
  };
  return {
    current: compile('current', entry.current),
    ...(entry.inProgress !== undefined && { inProgress: compile('inProgress', entry.inProgress) }),
    ...(entry.failed !== undefined && { failed: compile('failed', entry.failed) }),
  };
}
