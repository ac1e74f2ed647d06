/**
 * The two values sluice takes from @kubernetes/client-node, imported from their own modules: the
 * package's index also loads its generated API clients, watch, exec, metrics and their
 * dependencies, which the Lambda bundles would carry unused (docs/benchmarks.md, benchmark 5).
 * Types still come from the package's index.
 */
export { KubeConfig } from '@kubernetes/client-node/dist/config.js';
export { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
