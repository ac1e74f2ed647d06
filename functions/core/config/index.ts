export { parseDuration, formatDuration } from './duration.ts';
export { ConfigError, type ConfigIssue } from './issues.ts';
export { parseConfig, parseDelivery, parseGate } from './parse.ts';
export { loadConfigFile } from './load.ts';
export {
  DEFAULTS,
  defaultProvider,
  configSchema,
  deliverySchema,
  gateSchema,
  type ConfigInput,
  type DeliveryInput,
  type GateInput,
} from './schema.ts';
export type * from './types.ts';
