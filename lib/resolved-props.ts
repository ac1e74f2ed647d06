// The Sluice construct's props with their defaults applied, in one place: the construct and its
// builders read these, never `props.x ?? default`. Each value here is what the prop's `@default` in
// props.ts says (test/lib/resolved-props.test.ts reads the JSDoc and checks).
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { SluiceProps } from './props.ts';
import { functionRuntime } from './runtime.ts';

/** The props' defaults that are values, each as its `@default` in props.ts writes it. */
export const PROP_DEFAULTS = {
  dashboard: true,
  consoleTestEvents: 'none',
  monitoring: 'perDelivery',
  blockedAlarmThreshold: Duration.hours(24),
  removalPolicy: RemovalPolicy.RETAIN,
  tableDeletionProtection: true,
  runtime: lambda.Runtime.NODEJS_22_X,
  forwardedPushEvents: false,
  spreadIntervals: true,
  reconcileMemorySize: 1024,
  reconcileTimeout: Duration.minutes(15),
  logRetention: logs.RetentionDays.THREE_MONTHS,
} as const satisfies { readonly [K in keyof SluiceProps]?: NonNullable<SluiceProps[K]> };

/** The props whose defaults are values, resolved, and those whose defaults are other props. */
export interface ResolvedProps {
  readonly dashboard: boolean;
  readonly consoleTestEvents: NonNullable<SluiceProps['consoleTestEvents']>;
  readonly monitoring: NonNullable<SluiceProps['monitoring']>;
  readonly blockedAlarmThreshold: Duration;
  readonly removalPolicy: RemovalPolicy;
  readonly tableDeletionProtection: boolean;
  /** A runtime the functions' bundles support (others are refused). */
  readonly runtime: lambda.Runtime;
  readonly forwardedPushEvents: boolean;
  readonly spreadIntervals: boolean;
  readonly reconcileMemorySize: number;
  readonly reconcileTimeout: Duration;
  readonly logRetention: logs.RetentionDays;
  /** `approvalTopic`, else `alarmTopic`; undefined with neither. */
  readonly approvalTopic: sns.ITopic | undefined;
  /** `exportPrefix`, else the stack's name. */
  readonly exportPrefix: string;
  /** `alarmNamePrefix`, else `exportPrefix`, else the stack's name. */
  readonly alarmNamePrefix: string;
}

/** The props with every default applied; throws on a runtime the functions do not support. */
export function resolveProps(props: SluiceProps, stack: Stack): ResolvedProps {
  const exportPrefix = props.exportPrefix ?? stack.stackName;
  return {
    dashboard: props.dashboard ?? PROP_DEFAULTS.dashboard,
    consoleTestEvents: props.consoleTestEvents ?? PROP_DEFAULTS.consoleTestEvents,
    monitoring: props.monitoring ?? PROP_DEFAULTS.monitoring,
    blockedAlarmThreshold: props.blockedAlarmThreshold ?? PROP_DEFAULTS.blockedAlarmThreshold,
    removalPolicy: props.removalPolicy ?? PROP_DEFAULTS.removalPolicy,
    tableDeletionProtection: props.tableDeletionProtection ?? PROP_DEFAULTS.tableDeletionProtection,
    runtime: functionRuntime(props.runtime ?? PROP_DEFAULTS.runtime),
    forwardedPushEvents: props.forwardedPushEvents ?? PROP_DEFAULTS.forwardedPushEvents,
    spreadIntervals: props.spreadIntervals ?? PROP_DEFAULTS.spreadIntervals,
    reconcileMemorySize: props.reconcileMemorySize ?? PROP_DEFAULTS.reconcileMemorySize,
    reconcileTimeout: props.reconcileTimeout ?? PROP_DEFAULTS.reconcileTimeout,
    logRetention: props.logRetention ?? PROP_DEFAULTS.logRetention,
    approvalTopic: props.approvalTopic ?? props.alarmTopic,
    exportPrefix,
    alarmNamePrefix: props.alarmNamePrefix ?? exportPrefix,
  };
}
