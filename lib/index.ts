/**
 * The `Sluice` construct, which deploys the whole of sluice into an AWS account, and the parts it
 * is made of. Its gate and delivery props are the config file's schema (`sluice/config`).
 *
 * @module sluice
 */
export { Sluice, LAYER_KUBECTL } from './sluice.ts';
export type * from './props.ts';
export { PROPS_ORIGIN, type SluiceSpecs } from './config.ts';
export { sluicePropsFromConfigFile, type SluiceConfigFileOverrides } from './config-file.ts';
export { SluiceTable, type SluiceTableProps } from './table.ts';
export { SluiceFunction, type SluiceFunctionProps } from './function.ts';
export { HANDLER_NAMES, handlerCode, type HandlerName } from './bundling.ts';
export {
  GateSchedules,
  IntervalSchedules,
  gateScheduleInput,
  type GateSchedulesProps,
  type IntervalSchedulesProps,
} from './schedules.ts';
export { EcrPushTriggers, ecrRepositories, type EcrPushTriggersProps } from './triggers.ts';
export { ClusterAccess, clusterAdminPolicy, type ClusterAccessProps } from './cluster-access.ts';
export {
  DeliveryAlarms,
  deliveryMetric,
  stalenessWindow,
  type DeliveryAlarmsProps,
  type StalenessWindow,
} from './alarms.ts';
export { REGIONS_WITHOUT_FUNCTION_URLS } from './regions.ts';
export { ecrRepositoryOf, type EcrRepository } from './sources.ts';
export { GateEntries, type GateEntriesProps, type GateRequestGrantOptions } from './gate-entries.ts';
export { FailureRoutes, type FailureRoutesProps } from './failure-routes.ts';
export { FunctionAlarms, type FunctionAlarmsProps, type AlarmedFunction } from './function-alarms.ts';
export { WARNINGS } from './warnings.ts';
export { SluiceOutputs, STACK_OUTPUTS, type SluiceOutputsProps } from './outputs.ts';
export type { StackOutputKey } from '../functions/core/runtime-contract.ts';
