/**
 * The config file's schema, parser and types: what `sluice register -f` reads, and what the
 * `Sluice` construct validates its gate and delivery props with.
 *
 * @module sluice/config
 */
export { clusterKey } from './cluster-key.ts';
export { DEFAULTS } from './defaults.ts';
export { parseDuration, formatDuration } from './duration.ts';
export { ConfigError, type ConfigIssue } from './issues.ts';
export { parseConfig, parseDelivery, parseGate, parseRollout } from './parse.ts';
export { loadConfigFile } from './load.ts';
export {
  configSchema,
  type ConfigInput,
  type DeliveryInput,
  type GateInput,
  type RolloutInput,
} from './schema.ts';
export { deliverySchema } from './delivery-schema.ts';
export { gateSchema } from './gate-schema.ts';
export { rolloutSchema, matchesPattern } from './rollout-schema.ts';
export { defaultProvider } from './source-schema.ts';
export type * from './types.ts';
export type { NotationLevel, NotationTrustPolicy, NotationVerification } from '../oci/notation-policy.ts';
