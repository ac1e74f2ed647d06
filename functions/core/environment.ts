import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ECRClient } from '@aws-sdk/client-ecr';
import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { STSClient } from '@aws-sdk/client-sts';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { existsSync } from 'node:fs';
import { systemClock, type Clock } from './clock.ts';
import { eventBridgePublisher, eventBridgeSink } from './aws/eventbridge-events.ts';
import { lambdaReconcileNow } from './aws/reconcile-invocations.ts';
import { schedulerRetryTimer, schedulerWindowTimer } from './aws/scheduler-timers.ts';
import type { AlarmStateReader } from './alarms/alarms.ts';
import type { ReadChangeCalendar } from './calendars/change-calendars.ts';
import type { GateConditionReaders } from './gates/conditions.ts';
import { lazyAlarmStates } from './alarms/lazy-alarms.ts';
import { httpsCalendarReader } from './calendars/https-calendar.ts';
import {
  liveCalendarReader,
  type LiveCalendarReader,
  type ReadCalendarSource,
} from './calendars/live-calendars.ts';
import type { GateDeps } from './gates/requests.ts';
import type { ReadAutomation, RunbookDeps } from './approvals/runbook-approval.ts';
import { parseSignerRules, type SignerRules } from './access/signers.ts';
import { reusedConnections } from './kube/cluster-access.ts';
import { ClusterSessions } from './kube/cluster-sessions.ts';
import { ArtifactCache } from './oci/artifact-cache.ts';
import { KmsPublicKeys, type GetKmsPublicKey } from './oci/kms-public-keys.ts';
import type { GetRevocationStatus } from './oci/notation-aws-signer.ts';
import { kubeConfigFor } from './kube/connection.ts';
import {
  credentialsFor,
  dockerConfigCredentials,
  dockerConfigPath,
  ecrCredentials,
  parseEcrHost,
  type RegistryCredentials,
} from './oci/index.ts';
import { lazyDecryptor } from './sops/lazy.ts';
import type { OneTimeScheduleTarget } from './aws/one-time-schedule.ts';
import { stsCallerIdentity, stsEndpoint } from './aws/sts-caller-identity.ts';
import type { ReconcileDeps } from './reconcile/deps.ts';
import type { RolloutActionDeps } from './reconcile/rollout-actions.ts';
import { tableClient, type TableClient } from './store/table-client.ts';
import { LAYER_KUBECTL, RUNTIME_ENV } from './runtime-contract.ts';
import { commandOnPath } from './manifests/kustomize.ts';

/**
 * CloudWatch DescribeAlarms for alarm gates (AWS_ENDPOINT_URL_CLOUDWATCH locally); the client is
 * loaded on the first read, so functions whose gates name no alarm never load it.
 */
export function alarmStatesFromEnvironment(): AlarmStateReader {
  return lazyAlarmStates(async () => {
    const [{ CloudWatchClient }, { cloudWatchAlarmStates }] = await Promise.all([
      import('@aws-sdk/client-cloudwatch'),
      import('./aws/cloudwatch-alarms.ts'),
    ]);
    return cloudWatchAlarmStates(new CloudWatchClient({}));
  });
}

/**
 * The public keys of the KMS keys cosign signatures are verified against, kept for the container's
 * life: kms:GetPublicKey in each key's Region (AWS_ENDPOINT_URL_KMS locally), the KMS client loaded
 * on the first read, so functions whose sources name no KMS key never load it.
 */
export function kmsPublicKeysFromEnvironment(): KmsPublicKeys {
  let reader: Promise<GetKmsPublicKey> | undefined;
  return new KmsPublicKeys(async (keyArn) => {
    reader ??= import('./aws/kms-public-key.ts')
      .then(({ kmsGetPublicKey }) => kmsGetPublicKey())
      .catch((error: unknown) => {
        reader = undefined;
        throw error;
      });
    return (await reader)(keyArn);
  });
}

/**
 * signer:GetRevocationStatus for AWS Signer signatures, in each signing profile's Region
 * (AWS_ENDPOINT_URL_SIGNER locally), the Signer client loaded on the first check, so functions
 * whose sources use no awsSigner never load it.
 */
export function signerRevocationFromEnvironment(): GetRevocationStatus {
  let reader: Promise<GetRevocationStatus> | undefined;
  return async (query) => {
    reader ??= import('./aws/signer-revocation.ts')
      .then(async ({ signerGetRevocationStatus }) => {
        const { SignerClient } = await import('@aws-sdk/client-signer');
        // GetRevocationStatus goes to data-signer.<region>.amazonaws.com: the SDK prefixes the
        // host with "data-", which a local endpoint (AWS_ENDPOINT_URL_SIGNER) does not have.
        const local = process.env.AWS_ENDPOINT_URL_SIGNER !== undefined;
        return signerGetRevocationStatus((region) => new SignerClient({ region, disableHostPrefix: local }));
      })
      .catch((error: unknown) => {
        reader = undefined;
        throw error;
      });
    return (await reader)(query);
  };
}

/** The table named by SLUICE_TABLE, through the SDK's default endpoint resolution (AWS_ENDPOINT_URL_DYNAMODB locally). */
export function tableFromEnvironment(): TableClient {
  const table = process.env[RUNTIME_ENV.table];
  if (!table)
    throw new Error('SLUICE_TABLE is not set: name the sluice DynamoDB table (locally: . .sluice/dev/env)');
  return tableClient(new DynamoDBClient({}), table);
}

/**
 * ECR credentials per registry region and endpoint (GetAuthorizationToken is regional; a FIPS or
 * dual-stack registry is asked through the matching API endpoint), each cached until it expires.
 */
function ecrCredentialsByRegion(clock: Clock): RegistryCredentials {
  const byEndpoint = new Map<string, RegistryCredentials>();
  return (host) => {
    const ecr = parseEcrHost(host);
    const key = ecr ? `${ecr.region}/${ecr.fips}/${ecr.dualStack}` : '';
    let credentials = byEndpoint.get(key);
    if (!credentials) {
      const client = ecr
        ? new ECRClient({
            region: ecr.region,
            useFipsEndpoint: ecr.fips,
            useDualstackEndpoint: ecr.dualStack,
          })
        : new ECRClient({});
      credentials = ecrCredentials(client, clock);
      byEndpoint.set(key, credentials);
    }
    return credentials(host);
  };
}

/**
 * One-time schedules (gate window ends, retries) invoking `functionArn`, when the schedule group
 * and the role Scheduler assumes are configured (SLUICE_WINDOW_SCHEDULE_GROUP, SLUICE_SCHEDULER_ROLE_ARN);
 * their failures go to SLUICE_FAILURE_QUEUE_ARN when it is set.
 */
function oneTimeScheduleTarget(functionArn: string | undefined): OneTimeScheduleTarget | undefined {
  const group = process.env[RUNTIME_ENV.windowScheduleGroup];
  const roleArn = process.env[RUNTIME_ENV.schedulerRoleArn];
  const deadLetterArn = process.env[RUNTIME_ENV.failureQueueArn];
  if (!functionArn || !group || !roleArn) return undefined;
  return { group, roleArn, functionArn, ...(deadLetterArn && { deadLetterArn }) };
}

/**
 * The composition root shared by the Lambda handlers and the CLI: real AWS SDK clients (their
 * endpoints overridable by AWS_ENDPOINT_URL_<SERVICE>; KMS and Secrets Manager only loaded when a
 * delivery with SOPS decryption is reconciled), the system clock, EventBridge events when
 * SLUICE_EVENT_BUS is set. Given `functionArn` (the reconcile function itself): deliveries waiting on
 * one that succeeds are invoked there, and retries of failed runs scheduled to invoke it when
 * one-time schedules are configured.
 */
export function reconcileDepsFromEnvironment(options: {
  runId: string;
  log?: (message: string) => void;
  functionArn?: string;
  /** Keep pulled artifacts by digest under the temp dir, as a warm Lambda container does. @default false */
  cacheArtifacts?: boolean;
}): ReconcileDeps {
  const retryTarget = oneTimeScheduleTarget(options.functionArn);
  let schedulerClient: SchedulerClient | undefined;
  const scheduler = () => (schedulerClient ??= new SchedulerClient({}));
  const clock = systemClock;
  const providers = {
    aws: ecrCredentialsByRegion(clock),
    generic: dockerConfigCredentials(dockerConfigPath(process.env.DOCKER_CONFIG)),
  };
  const credentials = defaultProvider();
  const bus = process.env[RUNTIME_ENV.eventBus];
  const connections = reusedConnections({
    eks: (region, creds) => new EKSClient({ region, credentials: creds }),
    sts: (region, creds) => new STSClient({ region, credentials: creds }),
    credentials,
    clock,
  });
  const db = tableFromEnvironment();
  return {
    db,
    clock,
    registryCredentials: (source) => credentialsFor(source, providers),
    connect: async (cluster) => kubeConfigFor(await connections(cluster)),
    clusterSessions: new ClusterSessions(),
    slotHints: new Map(),
    artifactCache: options.cacheArtifacts ? new ArtifactCache(join(tmpdir(), 'sluice')) : undefined,
    kmsPublicKeys: kmsPublicKeysFromEnvironment(),
    notation: { now: () => clock.now(), revocation: signerRevocationFromEnvironment() },
    events: bus ? eventBridgeSink(new EventBridgeClient({}), bus) : undefined,
    runId: options.runId,
    log: options.log,
    kubectl: kubectlFromEnvironment(),
    kustomizeMemoryBytes: kustomizeMemoryFromEnvironment(),
    decryptor: lazyDecryptor(async () => (await import('./sops/aws.ts')).awsSopsDecryptor()),
    retryTimer: retryTarget ? schedulerRetryTimer(scheduler(), retryTarget) : undefined,
    gateTimer: retryTarget ? schedulerWindowTimer(scheduler(), retryTarget) : undefined,
    reconcileNow: options.functionArn
      ? lambdaReconcileNow(new LambdaClient({}), options.functionArn)
      : undefined,
    gateRunbooks: gateRunbooksFromEnvironment(),
    gateFunction: process.env.SLUICE_GATE_FUNCTION || undefined,
    ...gateConditionReadersFromEnvironment(db),
  };
}

/**
 * SSM Change Calendars through GetCalendarState (AWS_ENDPOINT_URL_SSM locally); the SSM client is
 * loaded on the first read, so functions whose gates name no Change Calendar never load it.
 */
export function changeCalendarStatesFromEnvironment(): ReadChangeCalendar {
  let reader: Promise<ReadChangeCalendar> | undefined;
  return async (calendar, at) => {
    reader ??= Promise.all([import('@aws-sdk/client-ssm'), import('./aws/ssm-change-calendar.ts')])
      .then(([{ SSMClient }, { ssmChangeCalendarReader }]) => ssmChangeCalendarReader(new SSMClient({})))
      .catch((error: unknown) => {
        reader = undefined;
        throw error;
      });
    return (await reader)(calendar, at);
  };
}

/**
 * Live calendars: S3 objects through GetObject (AWS_ENDPOINT_URL_S3 locally; the S3 client loaded
 * on the first read, so functions whose gates read no S3 calendar never load it) and HTTPS URLs on
 * the hosts SLUICE_CALENDAR_HOSTS allows; their last good copies kept in `db`. Ages count on the
 * system clock.
 */
export function liveCalendarsFromEnvironment(db: TableClient): LiveCalendarReader {
  let s3: Promise<ReadCalendarSource> | undefined;
  return liveCalendarReader({
    db,
    clock: systemClock,
    sources: {
      s3: async (source, etag) => {
        s3 ??= Promise.all([import('@aws-sdk/client-s3'), import('./aws/s3-calendar-object.ts')])
          .then(([{ S3Client }, { s3CalendarReader }]) => s3CalendarReader(new S3Client({})))
          .catch((error: unknown) => {
            s3 = undefined;
            throw error;
          });
        return (await s3)(source, etag);
      },
      https: (source, etag) =>
        httpsCalendarReader({ allowedHosts: calendarHostsFromEnvironment() })(source, etag),
    },
  });
}

/** SLUICE_CALENDAR_HOSTS (`["<host>", …]`, set by the construct from `calendarHosts`), or none. */
function calendarHostsFromEnvironment(): string[] {
  const raw = process.env[RUNTIME_ENV.calendarHosts] || '[]';
  let hosts: unknown;
  try {
    hosts = JSON.parse(raw);
  } catch {
    hosts = undefined;
  }
  if (!Array.isArray(hosts) || !hosts.every((host) => typeof host === 'string'))
    throw new Error(`${RUNTIME_ENV.calendarHosts} is not a JSON list of host names: ${raw.slice(0, 200)}`);
  return hosts as string[];
}

/**
 * The readers of what closes a gate besides its requests: CloudWatch alarms, SSM Change Calendars
 * and, given the table their copies are kept in, live calendars.
 */
export function gateConditionReadersFromEnvironment(db?: TableClient): GateConditionReaders {
  return {
    alarmStates: alarmStatesFromEnvironment(),
    changeCalendarStates: changeCalendarStatesFromEnvironment(),
    ...(db && { liveCalendars: liveCalendarsFromEnvironment(db) }),
  };
}

/** SLUICE_GATE_RUNBOOKS (`{"<gate>": "<runbook document name>"}`, set by the construct), or none. */
function gateRunbooksFromEnvironment(): Map<string, string> {
  try {
    return new Map(
      Object.entries(JSON.parse(process.env[RUNTIME_ENV.gateRunbooks] || '{}') as Record<string, string>),
    );
  } catch {
    throw new Error('SLUICE_GATE_RUNBOOKS is not JSON: {"<gate>": "<runbook document name>"}');
  }
}

/** Half of the function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, MB) for kustomize; the default elsewhere. */
function kustomizeMemoryFromEnvironment(): number | undefined {
  const megabytes = Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  return Number.isFinite(megabytes) && megabytes > 0 ? Math.floor(megabytes / 2) * 1024 * 1024 : undefined;
}

/**
 * SLUICE_KUBECTL, else the kubectl Lambda layer's binary when present, else `kubectl` on PATH,
 * resolved here: kustomize's child runs with an empty PATH.
 */
function kubectlFromEnvironment(): string {
  const kubectl = process.env[RUNTIME_ENV.kubectl] || (existsSync(LAYER_KUBECTL) ? LAYER_KUBECTL : 'kubectl');
  return commandOnPath(kubectl, process.env.PATH);
}

/**
 * The gate function's dependencies: the table, the system clock, and when configured the
 * reconcile function to invoke when a gate opens (SLUICE_RECONCILE_FUNCTION) and the schedule
 * group for window ends (SLUICE_WINDOW_SCHEDULE_GROUP with SLUICE_SCHEDULER_ROLE_ARN).
 */
export function gateDepsFromEnvironment(
  options: { log?: (message: string) => void } = {},
): GateDeps & Pick<RolloutActionDeps, 'rolloutEvents'> {
  const reconcileFunction = process.env[RUNTIME_ENV.reconcileFunction];
  const windowTarget = oneTimeScheduleTarget(reconcileFunction);
  const eventBus = process.env[RUNTIME_ENV.eventBus];
  const publish = eventBus
    ? eventBridgePublisher(new EventBridgeClient({}), eventBus, systemClock)
    : undefined;
  const db = tableFromEnvironment();
  return {
    db,
    clock: systemClock,
    reconcileNow: reconcileFunction ? lambdaReconcileNow(new LambdaClient({}), reconcileFunction) : undefined,
    windowTimer: windowTarget ? schedulerWindowTimer(new SchedulerClient({}), windowTarget) : undefined,
    publish,
    rolloutEvents: publish && { rollout: (detailType, event) => publish(detailType, event) },
    log: options.log,
    sts: stsCallerIdentity(
      stsEndpoint(process.env.AWS_REGION ?? 'us-east-1', process.env.AWS_ENDPOINT_URL_STS),
    ),
    signers: signerRulesFromEnvironment(),
    ...gateConditionReadersFromEnvironment(db),
  };
}

/**
 * Who may act through which entry (SLUICE_ENTRY_GRANTEES) and the accounts trusted
 * (SLUICE_TRUSTED_ACCOUNTS), as the construct set them; none when neither is set, and then no
 * signer may act.
 */
export function signerRulesFromEnvironment(): SignerRules | undefined {
  return parseSignerRules(process.env[RUNTIME_ENV.trustedAccounts], process.env[RUNTIME_ENV.entryGrantees]);
}

/**
 * The gates' Systems Manager runbooks (SLUICE_GATE_RUNBOOKS: `{"<gate>": "<document name>"}`, set
 * by the construct), the break-glass runbook (SLUICE_BREAK_GLASS_RUNBOOK) and GetAutomationExecution (AWS_ENDPOINT_URL_SSM locally).
 */
export function runbookDepsFromEnvironment(): RunbookDeps {
  // The SSM client is loaded only when a runbook invokes the function (it is large to import).
  let reader: Promise<ReadAutomation> | undefined;
  const readAutomation: ReadAutomation = async (executionId) => {
    reader ??= Promise.all([import('@aws-sdk/client-ssm'), import('./aws/ssm-automation.ts')]).then(
      ([{ SSMClient }, { ssmAutomationReader }]) => ssmAutomationReader(new SSMClient({})),
    );
    return (await reader)(executionId);
  };
  const breakGlassRunbook = process.env[RUNTIME_ENV.breakGlassRunbook] || undefined;
  return {
    runbooks: gateRunbooksFromEnvironment(),
    readAutomation,
    ...(breakGlassRunbook && { breakGlassRunbook }),
  };
}
