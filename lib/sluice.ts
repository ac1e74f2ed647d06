import { Aws, CustomResource, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as cr from 'aws-cdk-lib/custom-resources';
import { entryAlias } from './function-entry.ts';
import { Construct } from 'constructs';
import { deliveryMonitoring } from './delivery-monitoring.ts';
import { RolloutControl } from './rollout-control.ts';
import { RollbackControl } from './rollback-control.ts';
import { BreakGlass, type BreakGlassProps } from './break-glass.ts';
import { DASHBOARD_ROWS_MAX, dashboardUrl, SluiceDashboard } from './dashboard.ts';
import { ReleaseNotifications } from './release-notifications.ts';
import { FailureRoutes } from './failure-routes.ts';
import { FunctionAlarms } from './function-alarms.ts';
import { warnOfRiskyChoices } from './warnings.ts';
import { allowLogsToUse } from './log-encryption.ts';
import { checkFunctionUrlRegion } from './regions.ts';
import { ClusterAccess } from './cluster-access.ts';
import { foreignSignatureKeys, resolveSpecs, type SluiceSpecs } from './config.ts';
import { sluicePropsFromConfigFile, type SluiceConfigFileOverrides } from './config-file.ts';
import { SluiceFunction } from './function.ts';
import { GateEntries, type GateRequestGrantOptions } from './gate-entries.ts';
import { EntryGrantees } from './entry-grantees.ts';
import { gateAliasName } from '../functions/core/access/entry.ts';
import {
  BREAK_GLASS_ALIAS,
  ROLLBACKS_ALIAS,
  ROLLOUTS_ALIAS,
  SCHEDULES_ALIAS,
} from '../functions/core/gates/contract.ts';
import { acknowledgeNagFindings } from './nag.ts';
import {
  clusterStatements,
  calendarObjectStatements,
  changeCalendarStatements,
  decryptionStatements,
  signatureKeyStatements,
  signerRevocationStatements,
  ecrPullStatements,
  grantTableUse,
  invokeStatement,
  VPC_ACCESS_STATEMENT,
} from './permissions.ts';
import type { SluiceProps } from './props.ts';
import { GateRunbooks } from './runbooks.ts';
import { readStatements } from './read-grant.ts';
import { resolveProps } from './resolved-props.ts';
import { STACK_OUTPUTS, SluiceOutputs } from './outputs.ts';
import { GateSchedules, GateStateSchedules, IntervalSchedules } from './schedules.ts';
import { GATE_STATE_RATE_MINUTES } from '../functions/gate/metrics.ts';
import { GateTestEvents } from './test-events.ts';
import { SluiceTable } from './table.ts';
import { AlarmStateTriggers, describeAlarmsStatement, gateAlarmArns } from './alarm-triggers.ts';
import { alarmsReportWithoutData, gateWaitsOn } from './gate-dependencies.ts';
import { nameAlarms } from './alarm-names.ts';
import { EcrPushTriggers, ImagePushRecords, ecrRepositories } from './triggers.ts';
import { KubectlLayer } from './kubectl-layer.ts';
import { LAYER_KUBECTL, RUNTIME_ENV } from '../functions/core/runtime-contract.ts';

/** Where the kubectl layer puts kubectl (kustomize builds run `kubectl kustomize`). */
export { LAYER_KUBECTL };

/**
 * The spec function's timeout: a removal that cannot finish in it fails, and the Provider framework
 * (15 minutes) reports the reason to CloudFormation.
 */
export const SPEC_TIMEOUT = Duration.minutes(10);
/** CloudFormation's own limit for a spec custom resource, should the framework itself not answer. */
export const SPEC_SERVICE_TIMEOUT = Duration.minutes(12);
/** How old an asynchronous invocation of the reconcile or gate function may grow before it is a failure. */
const ASYNC_MAX_EVENT_AGE = Duration.hours(1);
const GATE_TIMEOUT = Duration.seconds(30);

/**
 * sluice in an AWS account: the table, the reconcile, gate and spec functions, the schedules and
 * ECR push rules that trigger them, a spec custom resource per delivery and gate, cluster access
 * entries and alarms. Deliveries and gates take the config file's schema, validated here.
 */
export class Sluice extends Construct {
  readonly table: SluiceTable;
  /** Reconciles deliveries: `{"delivery": name}`, ECR push events, `{"gateOpened": gate}`. */
  readonly reconcileFunction: lambda.IFunction;
  /** Takes gate requests: `{"gate","action","window","reason","requestedBy"}`. */
  readonly gateFunction: lambda.IFunction;
  /** The spec custom resources' handler (writes specs, deletes removed deliveries). */
  readonly specFunction: lambda.IFunction;
  /**
   * The role of the reconcile and spec functions: the principal that applies to and prunes from
   * clusters. Give it access to clusters named by `{ eks: { name, region } }` (an access entry).
   */
  readonly deployerRole: iam.IRole;
  /** One-time schedules: gate window ends (the gate function) and retries of failed runs (the reconcile function). */
  readonly windowScheduleGroup: scheduler.ScheduleGroup;
  /** The gates' cron schedules and the deliveries' interval schedules. */
  readonly scheduleGroup: scheduler.ScheduleGroup;
  /**
   * Per delivery name: the reconcile-failed, blocked-too-long, kept-objects and (unless suspended) stale alarms;
   * empty with `monitoring: 'fleet'`.
   */
  readonly alarms: ReadonlyMap<string, readonly cloudwatch.Alarm[]>;
  /** With `monitoring: 'fleet'`: the failed, blocked-too-long, kept-objects and stale alarms for all deliveries together. */
  readonly fleetAlarms: readonly cloudwatch.Alarm[];
  /** Per function (`reconcile`, `gate`, `spec`): the errors, throttles and near-timeout alarms. */
  readonly functionAlarms: ReadonlyMap<string, readonly cloudwatch.Alarm[]>;
  /**
   * Every asynchronous path's failure route: schedules' and rules' dead-letter queue and the
   * functions' on-failure destination, with an alarm on its first message.
   */
  readonly failures: FailureRoutes;
  /** The validated, normalised deliveries and gates. */
  readonly specs: SluiceSpecs;
  /** The CloudWatch dashboard of deliveries and gates; undefined with `dashboard: false`. */
  readonly dashboard?: cloudwatch.Dashboard;
  /**
   * Per gate, the EventBridge rule sending its `Release Waiting` events that an approval lifts
   * (`lift: approve`) to the approval topic (`approvalTopic`, else `alarmTopic`), with the gate
   * function's name; empty without an `eventBus` or a topic.
   */
  readonly releaseWaitingRules: ReadonlyMap<string, events.Rule>;
  /**
   * Per gate, the rule sending its `Release Waiting` events that no approval lifts (a freeze or
   * calendar to wait out, an alarm to fix) to the same topic, with who may break the glass.
   */
  readonly releaseHeldRules: ReadonlyMap<string, events.Rule>;
  /** The stack outputs (`<exportPrefix>-TableName`, ...) that `sluice --stack` reads. */
  readonly outputs: SluiceOutputs;
  private readonly gateEntries: GateEntries;
  private readonly entryGrantees: EntryGrantees;
  private readonly gateRunbooks: GateRunbooks;
  private readonly breakGlassProps: BreakGlassProps;
  private breakGlass?: BreakGlass;
  private rolloutControl?: RolloutControl;
  private rollbackControl?: RollbackControl;
  /** Alarm gates whose alarms may hold them closed for want of data (a synth warning). */
  private readonly gatesWaitingForData: string[] = [];

  /**
   * sluice with the gates and deliveries of a `sluice.yaml` (the file `sluice register -f` reads),
   * and the construct's other props, or a delivery's EKS cluster, from `overrides`. Errors in the
   * file name the file.
   */
  static fromConfigFile(
    scope: Construct,
    id: string,
    path: string,
    overrides: SluiceConfigFileOverrides = {},
  ): Sluice {
    return new Sluice(scope, id, sluicePropsFromConfigFile(path, overrides));
  }

  constructor(scope: Construct, id: string, props: SluiceProps = {}) {
    super(scope, id);
    this.specs = resolveSpecs(props, { account: Stack.of(scope).account, region: Stack.of(scope).region });
    const { config, clusters } = this.specs;
    const stack = Stack.of(this);
    const resolved = resolveProps(props, stack);
    const { logRetention, runtime } = resolved;
    const repositories = ecrRepositories(config.deliveries);
    const fleetMonitoring = resolved.monitoring === 'fleet';
    checkFunctionUrlRegion(stack.region, config.gates);
    const logEncryptionKey = props.logEncryptionKey;
    if (logEncryptionKey) allowLogsToUse(this, logEncryptionKey);

    const table = new SluiceTable(this, 'Table', {
      encryptionKey: props.encryptionKey,
      removalPolicy: resolved.removalPolicy,
      deletionProtection: resolved.tableDeletionProtection,
    });
    this.table = table;
    const failures = new FailureRoutes(this, 'Failures', { alarmTopic: props.alarmTopic });
    this.failures = failures;

    const deployerRole = new iam.Role(this, 'DeployerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'sluice: reconciles deliveries (applies to and prunes from their clusters)',
      roleName: props.deployerRoleName,
    });
    this.deployerRole = deployerRole;
    grantTableUse(table, deployerRole);
    for (const statement of [
      ...ecrPullStatements(repositories),
      ...clusterStatements(this, config.deliveries, clusters),
      ...decryptionStatements(config.deliveries),
      ...signatureKeyStatements([...config.deliveries, ...config.rollouts].map((owner) => owner.source)),
      ...signerRevocationStatements([...config.deliveries, ...config.rollouts].map((owner) => owner.source)),
      // Gates with change calendars (and live calendars) are evaluated by reconciles and by the gate function.
      ...changeCalendarStatements(this, config.gates),
      ...calendarObjectStatements(this, config.gates),
    ]) {
      deployerRole.addToPrincipalPolicy(statement);
    }
    if (props.vpc) deployerRole.addToPrincipalPolicy(VPC_ACCESS_STATEMENT());
    props.eventBus?.grantPutEventsTo(deployerRole);

    const eventBusEnv: Record<string, string> = props.eventBus
      ? { [RUNTIME_ENV.eventBus]: props.eventBus.eventBusName }
      : {};
    // The functions that evaluate gates read calendar URLs on these hosts only.
    const calendarHostsEnv: Record<string, string> = config.calendarHosts?.length
      ? { [RUNTIME_ENV.calendarHosts]: JSON.stringify(config.calendarHosts) }
      : {};
    const vpcPlacement = {
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
      securityGroups: props.securityGroups,
    };

    this.scheduleGroup = new scheduler.ScheduleGroup(this, 'Schedules', {
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // One-time schedules: gate window ends (created by the gate function) and retries of failed
    // runs (by the reconcile function). Deleting the group deletes those still pending, which
    // would invoke a deleted function.
    this.windowScheduleGroup = new scheduler.ScheduleGroup(this, 'WindowSchedules', {
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const reconcileInvoker = this.schedulerRole('ReconcileInvokerRole', 'invokes the reconcile function', [
      this.scheduleGroup,
      this.windowScheduleGroup,
    ]);
    const windowSchedulesArn = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.windowScheduleGroup.scheduleGroupName}/*`,
    });
    const oneTimeScheduleStatements = [
      // GetSchedule: a name found taken counts as created only if that schedule does the same.
      new iam.PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:GetSchedule'],
        resources: [windowSchedulesArn],
      }),
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [reconcileInvoker.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    ];
    // A one-time schedule that cannot invoke the reconcile function sends its event to the failure queue.
    reconcileInvoker.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [failures.queue.queueArn] }),
    );
    const oneTimeScheduleEnv = {
      [RUNTIME_ENV.windowScheduleGroup]: this.windowScheduleGroup.scheduleGroupName,
      [RUNTIME_ENV.schedulerRoleArn]: reconcileInvoker.roleArn,
      [RUNTIME_ENV.failureQueueArn]: failures.queue.queueArn,
    };
    // Retries of failed runs (retryInterval): the reconcile function schedules itself.
    for (const statement of oneTimeScheduleStatements) deployerRole.addToPrincipalPolicy(statement);

    const kubectlLayer = new KubectlLayer(this, 'KubectlLayer');
    const reconcileFunction = new SluiceFunction(this, 'Reconcile', {
      handler: 'reconcile',
      description: 'sluice: reconcile deliveries (pull from ECR, build, apply, prune)',
      role: deployerRole,
      // The kubectl in the layer is an x86-64 binary.
      architecture: lambda.Architecture.X86_64,
      layers: [kubectlLayer],
      memorySize: resolved.reconcileMemorySize,
      timeout: resolved.reconcileTimeout,
      environment: {
        [RUNTIME_ENV.table]: table.tableName,
        [RUNTIME_ENV.kubectl]: LAYER_KUBECTL,
        ...oneTimeScheduleEnv,
        ...eventBusEnv,
        ...calendarHostsEnv,
        ...(fleetMonitoring && { [RUNTIME_ENV.metricsScope]: 'fleet' }),
      },
      logRetention,
      logEncryptionKey,
      runtime,
      reservedConcurrentExecutions: props.reconcileReservedConcurrency,
      ...vpcPlacement,
    });
    const reconcile = reconcileFunction.function;
    this.reconcileFunction = reconcile;
    failures.routeAsyncInvocations(reconcile, ASYNC_MAX_EVENT_AGE);

    reconcileInvoker.addToPrincipalPolicy(invokeStatement(reconcile.functionArn));

    const gateRole = new iam.Role(this, 'GateRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'sluice: records gate requests, reconciles deliveries when a gate opens',
    });
    grantTableUse(table, gateRole);
    gateRole.addToPrincipalPolicy(invokeStatement(reconcile.functionArn));
    for (const statement of [
      ...oneTimeScheduleStatements,
      ...changeCalendarStatements(this, config.gates),
      ...calendarObjectStatements(this, config.gates),
    ])
      gateRole.addToPrincipalPolicy(statement);
    props.eventBus?.grantPutEventsTo(gateRole);

    const gate = new SluiceFunction(this, 'Gate', {
      handler: 'gate',
      description: 'sluice: open and close gates (console test event, CLI, schedules)',
      role: gateRole,
      memorySize: 512,
      timeout: GATE_TIMEOUT,
      environment: {
        [RUNTIME_ENV.table]: table.tableName,
        [RUNTIME_ENV.reconcileFunction]: reconcile.functionArn,
        ...oneTimeScheduleEnv,
        ...eventBusEnv,
        ...calendarHostsEnv,
      },
      logRetention,
      logEncryptionKey,
      runtime,
    }).function;
    this.gateFunction = gate;
    failures.routeAsyncInvocations(gate, ASYNC_MAX_EVENT_AGE);
    this.gateEntries = new GateEntries(this, 'GateEntries', { gates: config.gates, gateFunction: gate });
    this.entryGrantees = new EntryGrantees(this, 'EntryGrantees', {
      gateFunction: gate,
      trustedAccounts: props.trustedAccounts,
    });
    this.breakGlassProps = {
      gateFunction: gate,
      gateRole,
      alarmTopic: props.alarmTopic,
      eventBus: props.eventBus,
      deadLetterQueue: failures.queue,
    };
    this.gateRunbooks = new GateRunbooks(this, 'GateRunbooks', {
      gates: config.gates,
      gateFunction: gate,
      gateRole,
      notificationTopic: resolved.approvalTopic,
    });
    // Release Waiting events name the gate's runbook (names fixed by stack and gate: no reference).
    reconcile.addEnvironment(RUNTIME_ENV.gateRunbooks, this.gateRunbooks.names());
    const runbookOf = (name: string) =>
      this.gateRunbooks.has(name) ? this.gateRunbooks.documentName(name) : undefined;
    const testEvents = resolved.consoleTestEvents;
    if (testEvents !== 'none' && config.gates.length > 0)
      new GateTestEvents(this, 'GateTestEvents', {
        gates: config.gates,
        gateFunction: gate,
        registry: testEvents,
      });

    // The spec function deletes removed deliveries from their clusters, so it shares the
    // reconcile function's role (and with it the clusters' access entries and ECR pulls), and the
    // kubectl layer: it builds the other deliveries' artifacts to keep what they apply. Invoking the
    // reconcile function (the spec function after a deploy; the reconcile function itself when an
    // event concerns several deliveries, one invocation each, and for dependsOn) is a policy of its
    // own: in the role's default policy it would be a circular dependency.
    const invokesReconcile = new iam.Policy(this, 'InvokesReconcile', {
      roles: [deployerRole],
      statements: [invokeStatement(reconcile.functionArn)],
    });
    const spec = new SluiceFunction(this, 'Spec', {
      handler: 'spec-resource',
      description: 'sluice: write delivery and gate specs on deploy; delete removed deliveries',
      role: deployerRole,
      architecture: lambda.Architecture.X86_64,
      layers: [kubectlLayer],
      memorySize: 1024,
      timeout: SPEC_TIMEOUT,
      environment: {
        [RUNTIME_ENV.table]: table.tableName,
        [RUNTIME_ENV.reconcileFunction]: reconcile.functionArn,
        [RUNTIME_ENV.kubectl]: LAYER_KUBECTL,
      },
      logRetention,
      logEncryptionKey,
      runtime,
      ...vpcPlacement,
    }).function;
    spec.node.addDependency(invokesReconcile);
    this.specFunction = spec;

    new IntervalSchedules(this, 'Intervals', {
      deliveries: config.deliveries,
      reconcileFunction: reconcile,
      role: reconcileInvoker,
      group: this.scheduleGroup,
      deadLetterQueue: failures.queue,
      spread: resolved.spreadIntervals,
    });
    const gateInvoker = this.schedulerRole('GateInvokerRole', 'invokes the gate function', [
      this.scheduleGroup,
    ]);
    // The gates' cron schedules and the dashboard's state schedules invoke an alias of their own,
    // and the role may invoke only it: not the entries' aliases (open_<gate>, close_<gate>,
    // break_glass, record_pushes) nor the runbooks'. Invoking the function itself would not do:
    // a grant on a function is also one on every alias of it (<arn>:*).
    const dashboard = resolved.dashboard;
    let scheduleTarget: lambda.IFunction = gate;
    if (config.gates.some((g) => g.schedules.length > 0) || (dashboard && config.gates.length > 0)) {
      scheduleTarget = entryAlias(this, 'GateSchedulesAlias', gate, SCHEDULES_ALIAS);
      // Scheduler invokes asynchronously, and an alias has its own asynchronous invocation config.
      failures.routeAsyncInvocations(scheduleTarget, ASYNC_MAX_EVENT_AGE);
    }
    new GateSchedules(this, 'GateSchedules', {
      gates: config.gates,
      gateFunction: scheduleTarget,
      role: gateInvoker,
      group: this.scheduleGroup,
      deadLetterQueue: failures.queue,
    });
    // The dashboard's gate state: read on a schedule, so freezes, calendars and alarms show too.
    if (dashboard)
      new GateStateSchedules(this, 'GateStateSchedules', {
        gates: config.gates.slice(0, DASHBOARD_ROWS_MAX),
        gateFunction: scheduleTarget,
        role: gateInvoker,
        group: this.scheduleGroup,
        deadLetterQueue: failures.queue,
        rateMinutes: GATE_STATE_RATE_MINUTES,
      });
    // Alarm gates: both functions read the alarms (a reconcile's gates, `sluice gates` through the
    // gate function); their state changes reconcile the deliveries behind them.
    const alarmArns = gateAlarmArns(Stack.of(this), this.specs.alarmEntries);
    if (alarmArns.length > 0) {
      deployerRole.addToPrincipalPolicy(describeAlarmsStatement(alarmArns));
      gateRole.addToPrincipalPolicy(describeAlarmsStatement(alarmArns));
      new AlarmStateTriggers(this, 'AlarmStateChanges', {
        alarmArns,
        reconcileFunction: reconcile,
        deadLetterQueue: failures.queue,
      });
    }
    const pushTriggers = new EcrPushTriggers(this, 'EcrPush', {
      repositories,
      reconcileFunction: reconcile,
      deadLetterQueue: failures.queue,
      forwarded: resolved.forwardedPushEvents,
    });

    const access = new ClusterAccess(this, 'ClusterAccess', {
      clusters: clusters.values(),
      role: deployerRole,
      accessPolicies: props.clusterAccessPolicies,
    });
    const specProviderRole = this.specResources(spec, access, logRetention, logEncryptionKey);

    const monitoring = deliveryMonitoring(this, {
      deliveries: config.deliveries,
      monitoring: resolved.monitoring,
      blockedAlarmThreshold: resolved.blockedAlarmThreshold,
      alarmTopic: props.alarmTopic,
    });
    this.alarms = monitoring.alarms;
    this.fleetAlarms = monitoring.fleetAlarms;
    this.functionAlarms = new FunctionAlarms(this, 'FunctionAlarms', {
      functions: [
        { name: 'reconcile', function: reconcile, timeout: resolved.reconcileTimeout },
        { name: 'gate', function: gate, timeout: GATE_TIMEOUT },
        { name: 'spec', function: spec, timeout: SPEC_TIMEOUT },
      ],
      alarmTopic: props.alarmTopic,
    }).alarms;

    const approvalTopic = resolved.approvalTopic;
    const notifications =
      props.eventBus && approvalTopic
        ? new ReleaseNotifications(this, 'ReleaseWaiting', {
            gates: config.gates,
            eventBus: props.eventBus,
            topic: approvalTopic,
            gateFunction: gate,
            breakGlassOf: () =>
              this.breakGlass && {
                runbook: this.breakGlass.runbook.documentName,
                grantees: this.entryGrantees.granteesOf(BREAK_GLASS_ALIAS),
              },
            deadLetterQueue: failures.queue,
          })
        : undefined;
    this.releaseWaitingRules = notifications?.rules ?? new Map();
    this.releaseHeldRules = notifications?.holdRules ?? new Map();
    if (dashboard) {
      this.dashboard = new SluiceDashboard(this, 'Dashboard', {
        deliveries: config.deliveries,
        gates: config.gates,
        rollouts: config.rollouts,
        reconcileLogs: reconcileFunction.logGroup,
        gateLogs: gate.logGroup,
        gateFunction: gate,
        runbookOf,
        fleet: fleetMonitoring,
      }).dashboard;
    }

    const selfApprovalGates = config.gates.filter((g) => g.preventSelfApproval);
    if (selfApprovalGates.length > 0) {
      const pushRecords = new ImagePushRecords(this, 'ImagePushRecords', {
        gateFunction: gate,
        deadLetterQueue: failures.queue,
      });
      // An alias's asynchronous invocations have their own retries and destination.
      failures.routeAsyncInvocations(pushRecords.entry, ASYNC_MAX_EVENT_AGE);
    }

    this.outputs = this.stackOutputs(resolved.exportPrefix);
    nameAlarms(this, resolved.alarmNamePrefix);

    warnOfRiskyChoices(this, {
      deliveries: config.deliveries,
      selfApprovalGates,
      narrowedAccessPolicies: props.clusterAccessPolicies !== undefined,
      accessEntryDeliveries: new Set(clusters.keys()),
      alarmTopic: props.alarmTopic !== undefined,
      unwatchedRepositories: pushTriggers.unwatched,
      environmentAgnostic: Token.isUnresolved(stack.account) || Token.isUnresolved(stack.region),
      gatesWaitingForData: this.gatesWaitingForData,
      foreignSignatureKeys: foreignSignatureKeys(
        [...config.deliveries, ...config.rollouts].map((owner) => owner.source),
        stack,
      ),
    });

    acknowledgeNagFindings({
      functions: [reconcile, gate, spec],
      deployerRole,
      gateRole,
      customerKey: props.encryptionKey !== undefined,
      windowSchedulesArn,
      failureQueue: failures.queue,
      invokers: [
        [reconcileInvoker, reconcile],
        [specProviderRole, spec],
      ],
    });
  }

  /**
   * Lets `grantee` read what `sluice status`, `gates`, `gate history`, `rollout status` and `diff`
   * read, and nothing they would change: the table's items, the gates' alarms
   * (cloudwatch:DescribeAlarms) and Change Calendars (ssm:GetCalendarState), this stack's outputs
   * (`sluice --stack`), and for `diff` the deliveries' ECR repositories and EKS clusters
   * (DescribeCluster; its dry-run needs the grantee's own Kubernetes access to the cluster, and a
   * delivery with SOPS decryption the keys, which this does not give).
   */
  grantRead(grantee: iam.IGrantable): iam.Grant {
    const statements = readStatements(this, { table: this.table, specs: this.specs });
    let grant = iam.Grant.addToPrincipal({
      grantee,
      actions: statements[0]!.actions,
      resourceArns: statements[0]!.resources,
    });
    for (const statement of statements.slice(1))
      grant = grant.combine(
        iam.Grant.addToPrincipal({ grantee, actions: statement.actions, resourceArns: statement.resources }),
      );
    const key = this.table.encryptionKey;
    if (key) grant = grant.combine(key.grantDecrypt(grantee));
    if (grantee instanceof Construct && statements.some((statement) => statement.resources.includes('*')))
      Validations.of(grantee).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason:
          'sluice grantRead: ecr:GetAuthorizationToken (for sluice diff) has no resource to scope to; image reads are scoped to the named repositories.',
      });
    return grant;
  }

  /**
   * Lets `grantee` open and/or close one gate with signed requests (`sluice gate open <gate>
   * --function <gate function>`): it may invoke that gate's entry URLs and look them up. One granted
   * open requests is also an approver in the gate's Systems Manager runbook (see
   * grantRequestApproval). The gate function records the verified principal.
   */
  grantGateRequests(grantee: iam.IGrantable, gate: string, options?: GateRequestGrantOptions): iam.Grant {
    const grant = this.gateEntries.grant(grantee, gate, options);
    this.entryGrantees.add(
      grantee,
      (options?.actions ?? ['open', 'close']).map((action) => gateAliasName(gate, action)),
      `grantGateRequests(…, '${gate}')`,
    );
    if (!(options?.actions ?? ['open']).includes('open')) return grant;
    return grant.combine(this.gateRunbooks.addApprover(grantee, gate));
  }

  /**
   * Lets `grantee` ask for a gate to open in the AWS console: start the gate's Systems Manager
   * runbook (revision, window, reason), which waits for the gate's approvers (those granted open
   * requests with grantGateRequests) and then has the gate function verify the approval with
   * Systems Manager. Starting it approves nothing by itself.
   */
  grantRequestApproval(grantee: iam.IGrantable, gate: string): iam.Grant {
    return this.gateRunbooks.grantRequest(grantee, gate);
  }

  /**
   * Lets `grantee` make break-glass overrides (`sluice gate override <gate>... --revision R --for
   * 1h --reason … --function <gate function>`): let one pinned revision through any of the gates
   * (at most each gate's maxOverride), never opening the mass-deletion brake. It is an entry of its
   * own (alias `break_glass`), so grantGateRequests never allows it. The grantee may also break
   * the glass in the AWS console: start the break-glass runbook (breakGlassRunbookName) with the
   * same fields; the function makes the override as the principal Systems Manager records as its
   * starter. The first grant makes the entry, the runbook and the alarm (breakGlassAlarm); with an `eventBus` and an `alarmTopic`, each override is
   * also sent to the topic as a message naming who, what and why.
   */
  grantBreakGlass(grantee: iam.IGrantable): iam.Grant {
    if (this.specs.config.gates.length === 0)
      throw new Error('grantBreakGlass: this Sluice has no gates, so there is nothing to override');
    this.entryGrantees.add(grantee, [BREAK_GLASS_ALIAS], 'grantBreakGlass');
    this.breakGlass ??= new BreakGlass(this, 'BreakGlass', this.breakGlassProps);
    return this.breakGlass.grant(grantee);
  }

  /**
   * Lets `grantee` halt, resume and roll back the rollouts (`sluice rollout halt|resume|rollback
   * <rollout> --reason … --function <gate function>`), signed with its AWS credentials: the gate
   * function records the principal STS verifies, and the reason, as the rollout's audit trail. It
   * is an entry of its own (alias `rollouts`), so no gate grant allows it; the first grant makes it.
   */
  grantRolloutControl(grantee: iam.IGrantable): iam.Grant {
    if (this.specs.config.rollouts.length === 0)
      throw new Error('grantRolloutControl: this Sluice has no rollouts, so there is nothing to control');
    this.entryGrantees.add(grantee, [ROLLOUTS_ALIAS], 'grantRolloutControl');
    this.rolloutControl ??= new RolloutControl(this, 'RolloutControl', {
      gateFunction: this.breakGlassProps.gateFunction,
    });
    return this.rolloutControl.grant(grantee);
  }

  /**
   * Lets `grantee` roll a delivery back to a revision it applied before (`sluice rollback
   * <delivery> [--to <revision>] --reason … --function <gate function>`), signed with its AWS
   * credentials: the gate function records the principal STS verifies and the reason, publishes a
   * `Delivery Rollback` event and a DeliveryRollback metric. A closed gate lets the rollback
   * through unless it holds rollback (`holds: [revisions, rollback]`). It is an entry of its own
   * (alias `rollbacks`), so no gate or break-glass grant allows it; the first grant makes it.
   */
  grantRollback(grantee: iam.IGrantable): iam.Grant {
    if (this.specs.config.deliveries.length === 0)
      throw new Error('grantRollback: this Sluice has no deliveries, so there is nothing to roll back');
    this.entryGrantees.add(grantee, [ROLLBACKS_ALIAS], 'grantRollback');
    this.rollbackControl ??= new RollbackControl(this, 'RollbackControl', {
      gateFunction: this.breakGlassProps.gateFunction,
    });
    return this.rollbackControl.grant(grantee);
  }

  /** The function URL of the rollbacks entry; undefined until grantRollback is called. */
  get rollbackUrl(): string | undefined {
    return this.rollbackControl?.url.url;
  }

  /** The function URL of the rollouts entry; undefined until grantRolloutControl is called. */
  get rolloutControlUrl(): string | undefined {
    return this.rolloutControl?.url.url;
  }

  /** The alarm on any break-glass override made; undefined until grantBreakGlass is called. */
  get breakGlassAlarm(): cloudwatch.Alarm | undefined {
    return this.breakGlass?.alarm;
  }

  /** The function URL of the break-glass entry; undefined until grantBreakGlass is called. */
  get breakGlassUrl(): string | undefined {
    return this.breakGlass?.url.url;
  }

  /** The break-glass runbook's name (Automation document), which grantees start in the console; undefined until grantBreakGlass is called. */
  get breakGlassRunbookName(): string | undefined {
    return this.breakGlass?.runbook.documentName;
  }

  /** The name of a gate's Systems Manager runbook (Automation document). */
  gateRunbookName(gate: string): string {
    return this.gateRunbooks.documentName(gate);
  }

  /** The function URL through which `action` requests for `gate` reach the gate function. */
  gateUrl(gate: string, action: 'open' | 'close'): string {
    return this.gateEntries.url(gate, action);
  }

  /** Everything the CLI and the docs name, as outputs with stable export names. */
  private stackOutputs(exportPrefix: string): SluiceOutputs {
    const stack = Stack.of(this);
    const outputs = new SluiceOutputs(this, 'Outputs', { exportPrefix, logicalIdPrefix: this.node.id });
    outputs.add(
      STACK_OUTPUTS.table,
      this.table.tableName,
      'the table (sluice --stack reads it; SLUICE_TABLE)',
    );
    outputs.add(
      STACK_OUTPUTS.gateFunction,
      this.gateFunction.functionName,
      'the gate function (sluice gate open <gate> --function <this>; SLUICE_GATE_FUNCTION)',
    );
    outputs.add(
      STACK_OUTPUTS.reconcileFunction,
      this.reconcileFunction.functionName,
      'the reconcile function',
    );
    outputs.add(
      STACK_OUTPUTS.deployerRole,
      this.deployerRole.roleArn,
      'the role that applies to clusters: the principal of their access entries',
    );
    outputs.add(
      STACK_OUTPUTS.gateRunbooks,
      this.gateRunbooks.names(),
      "the gates' Systems Manager runbooks, {gate: document name}",
    );
    if (this.specs.config.gates.length > 0)
      outputs.add(
        STACK_OUTPUTS.gateEntryUrls,
        stack.toJsonString(
          Object.fromEntries(
            this.specs.config.gates.map((gate) => [
              gate.name,
              { open: this.gateUrl(gate.name, 'open'), close: this.gateUrl(gate.name, 'close') },
            ]),
          ),
        ),
        "the gates' entries, {gate: {open: URL, close: URL}}",
      );
    if (this.dashboard)
      outputs.add(
        STACK_OUTPUTS.dashboardUrl,
        dashboardUrl(Aws.REGION, this.dashboard.dashboardName),
        'the CloudWatch dashboard of deliveries and gates',
      );
    outputs.addLater(STACK_OUTPUTS.breakGlassUrl, () => this.breakGlassUrl, 'the break-glass entry');
    outputs.addLater(
      STACK_OUTPUTS.breakGlassRunbook,
      () => this.breakGlassRunbookName,
      'the break-glass runbook (Systems Manager Automation)',
    );
    outputs.addLater(STACK_OUTPUTS.rolloutControlUrl, () => this.rolloutControlUrl, 'the rollouts entry');
    return outputs;
  }

  /** A role EventBridge Scheduler assumes for schedules in the given groups (and no others). */
  private schedulerRole(id: string, what: string, groups: scheduler.IScheduleGroup[]): iam.Role {
    const stack = Stack.of(this);
    return new iam.Role(this, id, {
      description: `sluice: EventBridge Scheduler ${what}`,
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': groups.map((group) => group.scheduleGroupArn) },
        },
      }),
    });
  }

  /** One Provider, and a custom resource per gate, rollout and delivery writing its spec to the table. */
  private specResources(
    spec: lambda.IFunction,
    access: ClusterAccess,
    logRetention: logs.RetentionDays,
    encryptionKey: kms.IKey | undefined,
  ): iam.Role {
    const stack = Stack.of(this);
    const frameworkLogs = new logs.LogGroup(this, 'SpecProviderLogs', {
      retention: logRetention,
      encryptionKey,
    });
    const frameworkRole = new iam.Role(this, 'SpecProviderRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'sluice: the CloudFormation custom resource provider of delivery and gate specs',
    });
    frameworkLogs.grantWrite(frameworkRole);
    const provider = new cr.Provider(this, 'SpecProvider', {
      onEventHandler: spec,
      frameworkOnEventRole: frameworkRole,
      logGroup: frameworkLogs,
    });

    const gates = [...this.specs.gateInputs].map(([name, input]) => {
      const resource = new CustomResource(this, `Gate-${name}`, {
        serviceToken: provider.serviceToken,
        resourceType: 'Custom::SluiceGate',
        properties: { Kind: 'gate', Name: name, Spec: stack.toJsonString(input) },
        serviceTimeout: SPEC_SERVICE_TIMEOUT,
      });
      // Written after the alarms and Change Calendars of the app it waits on (and the deliveries
      // and rollouts using it after it): a first deploy's first reconcile finds them.
      const gate = this.specs.config.gates.find((candidate) => candidate.name === name)!;
      const alarms = Array.isArray(input.alarms) ? (input.alarms as string[]) : [];
      const constructs = this.specs.gateAlarmConstructs.get(name) ?? [];
      const waitedOn = gateWaitsOn(this, gate, alarms, constructs);
      for (const construct of waitedOn) resource.node.addDependency(construct);
      if (
        alarms.length > 0 &&
        gate.insufficientData !== 'open' &&
        !alarmsReportWithoutData(alarms, constructs, waitedOn)
      )
        this.gatesWaitingForData.push(name);
      return resource;
    });
    // A rollout is written before its members, so that their first run takes the rollout's
    // revision in its waves (not their own tags'); on delete, after them.
    const rolloutOf = new Map<string, CustomResource>();
    for (const [name, input] of this.specs.rolloutInputs) {
      const resource = new CustomResource(this, `Rollout-${name}`, {
        serviceToken: provider.serviceToken,
        resourceType: 'Custom::SluiceRollout',
        properties: { Kind: 'rollout', Name: name, Spec: stack.toJsonString(input) },
        serviceTimeout: SPEC_SERVICE_TIMEOUT,
      });
      for (const gate of gates) resource.node.addDependency(gate);
      const rollout = this.specs.config.rollouts.find((candidate) => candidate.name === name)!;
      for (const member of rollout.waves.flatMap((wave) => wave.deliveries)) rolloutOf.set(member, resource);
    }
    for (const [name, input] of this.specs.deliveryInputs) {
      const resource = new CustomResource(this, `Delivery-${name}`, {
        serviceToken: provider.serviceToken,
        resourceType: 'Custom::SluiceDelivery',
        properties: { Kind: 'delivery', Name: name, Spec: stack.toJsonString(input) },
        serviceTimeout: SPEC_SERVICE_TIMEOUT,
      });
      // Gates are registered before the deliveries using them reconcile; on delete, a delivery is
      // removed while it can still reach its cluster.
      const rollout = rolloutOf.get(name);
      for (const dependency of [...gates, ...access.entries, ...(rollout ? [rollout] : [])])
        resource.node.addDependency(dependency);
    }
    return frameworkRole;
  }
}
