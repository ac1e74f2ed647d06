/**
 * Stands in for js-yaml in the Lambda bundles (lib/bundle-options.ts aliases it here): @kubernetes/client-node
 * uses it only to read a kubeconfig (`load`), and the bundles already carry the `yaml` package, so
 * kubeconfig files are read by that instead of a second YAML parser (about 40 KiB of bundle).
 */
import { parse } from 'yaml';

export function load(text: string): unknown {
  return parse(text);
}

export default { load };
