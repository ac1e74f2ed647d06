/**
 * Stands in for node-fetch in the Lambda bundles (lib/bundle-options.ts aliases it here).
 * @kubernetes/client-node imports node-fetch, a fetch polyfill for old Node.js that brings whatwg-url
 * and tr46's Unicode table along, about 300 KiB of bundle; the Node.js 22 runtime has fetch built in.
 * sluice's own Kubernetes requests do not go through fetch at all (functions/core/kube/transport.ts).
 */
export const Headers = globalThis.Headers;
export default globalThis.fetch;
