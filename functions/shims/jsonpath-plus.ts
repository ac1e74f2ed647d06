/**
 * Stands in for jsonpath-plus in the Lambda bundles (lib/bundle-options.ts aliases it here):
 * @kubernetes/client-node needs it only for the legacy `azure` and `gcp` kubeconfig auth-providers,
 * which Kubernetes removed in 1.26 and which EKS never uses (about 25 KiB of bundle).
 */
export function JSONPath(): never {
  throw new Error(
    "sluice does not support the legacy 'azure'/'gcp' kubeconfig auth-providers; use an exec credential plugin",
  );
}
