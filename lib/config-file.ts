import { ConfigError, parseConfig } from '../functions/core/config/index.ts';
import { parseYaml, withCalendarFiles } from '../functions/core/config/load.ts';
import { isRecord } from '../functions/core/config/issues.ts';
import { readFileSync } from 'node:fs';
import { PROPS_ORIGIN, resolveSpecs } from './config.ts';
import type { SluiceClusterTarget, SluiceDelivery, SluiceGate, SluiceProps, SluiceRollout } from './props.ts';

/** What `Sluice.fromConfigFile` takes besides the file: the construct's own props, and clusters. */
export interface SluiceConfigFileOverrides extends Omit<SluiceProps, 'deliveries' | 'gates' | 'rollouts'> {
  /**
   * Per delivery name (each must be one of the file's deliveries), the cluster to use instead of
   * the file's `cluster`: an `eks.ICluster` of this app, or `{ eks: { name, region, roleArn? } }`.
   * The CLI reads a kubeconfig; the construct needs an EKS cluster, so a file whose deliveries name
   * `kubeconfig` clusters is deployable when each is given here.
   * @default each delivery's `cluster` from the file
   */
  readonly clusters?: Readonly<Record<string, SluiceClusterTarget>>;
}

/**
 * The construct's props from a `sluice.yaml`, the file the CLI reads: the file validated by the
 * CLI's parser (errors name the file), its deliveries, gates and rollouts as props (durations stay the
 * file's `5m`-style text, which the construct validates with the same schema), `overrides` on top.
 */
export function sluicePropsFromConfigFile(
  path: string,
  overrides: SluiceConfigFileOverrides = {},
): SluiceProps {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [{ path: '', message: `cannot read the file: ${(error as Error).message}` }]);
  }
  // Calendar files are read relative to the config file, as the CLI reads them.
  const raw = withCalendarFiles(parseYaml(text, path), path);
  const config = parseConfig(raw, path);
  const { clusters = {}, ...props } = overrides;
  const names = new Set(config.deliveries.map((delivery) => delivery.name));
  const unknown = Object.keys(clusters).filter((name) => !names.has(name));
  if (unknown.length > 0)
    throw new ConfigError(
      `Sluice.fromConfigFile(${path})`,
      unknown.map((name) => ({
        path: `clusters.${name}`,
        message: `no delivery "${name}" in the file (it has ${[...names].join(', ') || 'none'})`,
      })),
    );
  const file = isRecord(raw) ? raw : {};
  const deliveries = (Array.isArray(file.deliveries) ? file.deliveries : []) as Record<string, unknown>[];
  const result: SluiceProps = {
    ...props,
    // Durations as text: the construct's validation takes the file's form as well as Duration.
    gates: (Array.isArray(file.gates) ? file.gates : []) as unknown as SluiceGate[],
    rollouts: (Array.isArray(file.rollouts) ? file.rollouts : []) as unknown as SluiceRollout[],
    deliveries: deliveries.map((delivery) => {
      const cluster = typeof delivery.name === 'string' ? clusters[delivery.name] : undefined;
      return (cluster ? { ...delivery, cluster } : delivery) as unknown as SluiceDelivery;
    }),
  };
  // What the file's parser accepts but the construct does not (a kubeconfig cluster, service
  // limits): the same checks as the constructor's, reported with the file's name.
  try {
    resolveSpecs(result);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${path} (${PROPS_ORIGIN})`, error.issues);
  }
  return result;
}
