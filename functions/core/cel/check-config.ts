import { ConfigError, type ConfigIssue } from '../config/issues.ts';
import type { Delivery, SluiceConfig } from '../config/types.ts';
import { celProblem } from './compile.ts';

const FIELDS = ['current', 'inProgress', 'failed'] as const;

/** Every healthCheckExprs expression that does not compile, each issue naming its field. */
export function healthCheckExprIssues(deliveries: readonly Delivery[]): ConfigIssue[] {
  return deliveries.flatMap((delivery) =>
    (delivery.healthCheckExprs ?? []).flatMap((entry, index) =>
      FIELDS.flatMap((field) => {
        const source = entry[field];
        const problem = source === undefined ? undefined : celProblem(source);
        return problem
          ? [{ path: `deliveries[${delivery.name}].healthCheckExprs[${index}].${field}`, message: problem }]
          : [];
      }),
    ),
  );
}

/**
 * Compiles every healthCheckExprs expression of a config the schema accepted (what `sluice
 * register` and `cdk synth` do before anything is written); throws one ConfigError listing each
 * that does not compile.
 */
export function checkHealthCheckExprs(config: SluiceConfig, origin: string): void {
  const issues = healthCheckExprIssues(config.deliveries);
  if (issues.length > 0) throw new ConfigError(origin, issues);
}
