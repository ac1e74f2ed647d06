import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { ensureTable } from '../functions/core/store/table.ts';
import { startDynamoDbLocal } from './dynamodb-local.ts';
import { startEtcd } from './etcd.ts';
import { startKubeApiServer } from './kube-apiserver.ts';
import {
  allStarted,
  freePort,
  isAlive,
  onFreshPortsIfTaken,
  startDaemon,
  stopDaemon,
  stopSpawnedIn,
  waitUntilReady,
} from './processes.ts';
import { startLocalKms } from './local-kms.ts';
import {
  dynamoDbLocalDir,
  javaBinary,
  kubeBinaries,
  kubectlBinary,
  localKmsBinary,
  registryBinary,
} from './provision.ts';
import { startRegistry } from './registry.ts';
import { writeStandInStack } from './cloudformation-endpoint.ts';
import { writeStandInEksCluster } from './eks-clusters.ts';
import { LOCAL_IDENTITY } from './sigv4-identity.ts';
import { STACK_OUTPUTS, stackOutputExportName } from '../functions/core/runtime-contract.ts';

/** The stand-in stack naming the local components' table: `sluice --stack sluice-local status`. */
export const LOCAL_STACK = 'sluice-local';

/** The EKS cluster name the local API server answers to: `{ eks: { name: 'sluice-local', region: 'us-east-1' } }`. */
export const LOCAL_EKS_CLUSTER = 'sluice-local';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Everything a test, the demo or a user's shell needs to reach the running local components. */
export interface Components {
  readonly dir: string;
  readonly kube: {
    readonly server: string;
    readonly caFile: string;
    /** base64 of the CA PEM, as in kubeconfig. */
    readonly caData: string;
    readonly token: string;
    readonly restrictedToken: string;
    readonly auditLog: string;
    readonly kubeconfig: string;
  };
  readonly registry: { readonly host: string; readonly username: string; readonly password: string };
  readonly dynamodb: { readonly endpoint: string; readonly table: string };
  /** The etcd kube-apiserver keeps its objects in (more API servers may share it under other prefixes). */
  readonly etcd: { readonly url: string };
  readonly ecr: { readonly endpoint: string };
  /** The same local process as `ecr` answers Secrets Manager (in memory). */
  readonly secretsManager: { readonly endpoint: string };
  /** And STS `GetCallerIdentity`, verifying signatures of the test identities (dev/sigv4-identity.ts). */
  readonly sts: { readonly endpoint: string };
  /** And CloudWatch alarms (PutMetricAlarm, SetAlarmState, DescribeAlarms), in memory. */
  readonly cloudWatch: { readonly endpoint: string };
  /**
   * And CloudFormation DescribeStacks (dev/cloudformation-endpoint.ts): the stacks are files in
   * `stacksDir` (writeStandInStack); `sluice-local` names the local table.
   */
  readonly cloudFormation: { readonly endpoint: string; readonly stacksDir: string };
  /**
   * And EKS DescribeCluster (dev/eks-endpoint.ts) and the API server's token authenticator for EKS
   * tokens (dev/eks-authenticator.ts): the clusters and their access entries are files in
   * `clustersDir` (writeStandInEksCluster, putStandInAccessEntry). `sluice-local` names the local
   * API server, with an admin access entry for the local key pair (AWS_ACCESS_KEY_ID=local).
   */
  readonly eks: { readonly endpoint: string; readonly clustersDir: string };
  /**
   * And EventBridge PutEvents (dev/eventbridge-endpoint.ts), routed by the rules of the templates
   * in `rulesDir` (writeEventRules); what it delivers is recorded in `deliveriesDir`
   * (eventBridgeDeliveries). Its events and ARNs carry `region` and `account`.
   */
  readonly eventBridge: {
    readonly endpoint: string;
    readonly rulesDir: string;
    readonly deliveriesDir: string;
    readonly region: string;
    readonly account: string;
  };
  /** local-kms, with the test keys of dev/local-kms-seed.yaml. */
  readonly kms: { readonly endpoint: string };
  readonly kubectl: string;
  readonly region: string;
  /** Process ids, stopped by stopComponents. */
  readonly pids: Readonly<Record<string, number>>;
}

const STATE_FILE = 'components.json';

/** The environment that points the AWS SDK, kubectl and the sluice CLI at the components. */
export function componentsEnv(c: Components): Record<string, string> {
  return {
    KUBECONFIG: c.kube.kubeconfig,
    AWS_REGION: c.region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: c.dynamodb.endpoint,
    AWS_ENDPOINT_URL_ECR: c.ecr.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: c.secretsManager.endpoint,
    AWS_ENDPOINT_URL_STS: c.sts.endpoint,
    AWS_ENDPOINT_URL_CLOUDWATCH: c.cloudWatch.endpoint,
    AWS_ENDPOINT_URL_KMS: c.kms.endpoint,
    AWS_ENDPOINT_URL_CLOUDFORMATION: c.cloudFormation.endpoint,
    AWS_ENDPOINT_URL_EKS: c.eks.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: c.eventBridge.endpoint,
    SLUICE_TABLE: c.dynamodb.table,
    SLUICE_REGISTRY: c.registry.host,
    PATH: `${dirname(c.kubectl)}:${process.env.PATH ?? ''}`,
  };
}

/**
 * `.sluice/dev/env`, to source in a shell: the same variables, but PATH gains only kubectl's folder
 * in front of the shell's own PATH (not the PATH of the process that started the components).
 */
export function envFile(c: Components): string {
  const lines = Object.entries(componentsEnv(c))
    .filter(([key]) => key !== 'PATH')
    .map(([key, value]) => `export ${key}=${JSON.stringify(value)}`);
  lines.push(`export PATH=${JSON.stringify(dirname(c.kubectl))}":$PATH"`);
  return `${lines.join('\n')}\n`;
}

/** The components recorded in `dir`, if every one of their processes is still alive. */
export function runningComponents(dir: string): Components | undefined {
  const file = join(dir, STATE_FILE);
  if (!existsSync(file)) return undefined;
  const state = JSON.parse(readFileSync(file, 'utf8')) as Components;
  return Object.values(state.pids).every(isAlive) ? state : undefined;
}

/**
 * Provisions what is missing, then starts etcd, kube-apiserver, the registry, DynamoDB Local,
 * local-kms and the ECR (and Secrets Manager, STS, CloudFormation, EKS) endpoint on 127.0.0.1 with their state in `dir`. Writes `dir/kubeconfig`,
 * `dir/env` and `dir/components.json`. If anything fails, what was started is stopped.
 */
export async function startComponents(dir: string, table = 'sluice'): Promise<Components> {
  mkdirSync(dir, { recursive: true });
  const bins = kubeBinaries();
  const registryBin = registryBinary();
  const java = javaBinary();
  const dynamoHome = await dynamoDbLocalDir();
  const kubectl = kubectlBinary();
  const kmsBin = localKmsBinary();

  const pids: Record<string, number> = {};
  try {
    // All four settle before a failure is thrown, so each one that did start is recorded and stopped.
    const [etcd, registry, dynamodb, kms] = await allStarted([
      onFreshPortsIfTaken(() => startEtcd(bins.etcd, dir)).then((e) => ((pids.etcd = e.pid), e)),
      onFreshPortsIfTaken(() => startRegistry(registryBin, dir)).then((r) => ((pids.registry = r.pid), r)),
      onFreshPortsIfTaken(() => startDynamoDbLocal(java, dynamoHome, dir)).then(
        (d) => ((pids.dynamodb = d.pid), d),
      ),
      onFreshPortsIfTaken(() => startLocalKms(kmsBin, dir)).then((k) => ((pids.kms = k.pid), k)),
    ] as const);
    const stacksDir = join(dir, 'cloudformation-stacks');
    const clustersDir = join(dir, 'eks-clusters');
    const eventBridgeDirs = {
      rulesDir: join(dir, 'eventbridge-rules'),
      deliveriesDir: join(dir, 'eventbridge-deliveries'),
    };
    const ecr = await startEcrEndpoint(dir, {
      registryUrl: `http://${registry.host}`,
      username: registry.username,
      password: registry.password,
      stacksDir,
      clustersDir,
      eventBridge: eventBridgeDirs,
    });
    pids.ecr = ecr.pid;
    // The stand-ins (and so the API server's EKS token webhook) are up before the API server starts.
    const api = await onFreshPortsIfTaken(() =>
      startKubeApiServer(bins.kubeApiserver, etcd.url, dir, { eksAuthenticator: ecr.endpoint }),
    );
    pids.kubeApiserver = api.pid;

    const region = 'us-east-1';
    await ensureTable(
      new DynamoDBClient({
        endpoint: dynamodb.endpoint,
        region,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
      table,
    );
    const caData = readFileSync(api.caFile).toString('base64');
    const kubeconfig = join(dir, 'kubeconfig');
    const components: Components = {
      dir,
      kube: { ...api, caData, kubeconfig },
      registry: { host: registry.host, username: registry.username, password: registry.password },
      dynamodb: { endpoint: dynamodb.endpoint, table },
      etcd: { url: etcd.url },
      ecr: { endpoint: ecr.endpoint },
      secretsManager: { endpoint: ecr.endpoint },
      sts: { endpoint: ecr.endpoint },
      cloudWatch: { endpoint: ecr.endpoint },
      cloudFormation: { endpoint: ecr.endpoint, stacksDir },
      eks: { endpoint: ecr.endpoint, clustersDir },
      eventBridge: { endpoint: ecr.endpoint, ...eventBridgeDirs, region, account: '000000000000' },
      kms: { endpoint: kms.endpoint },
      kubectl,
      region,
      pids,
    };
    // `sluice --stack sluice-local` finds the local table as it finds a deployed stack's.
    writeStandInStack(stacksDir, LOCAL_STACK, {
      outputs: [
        {
          OutputKey: `Sluice${STACK_OUTPUTS.table}`,
          OutputValue: table,
          Description: 'sluice: the table (local)',
          ExportName: stackOutputExportName(LOCAL_STACK, STACK_OUTPUTS.table),
        },
      ],
    });
    writeStandInEksCluster(clustersDir, LOCAL_EKS_CLUSTER, {
      endpoint: api.server,
      caData,
      region,
      accessEntries: [{ principalArn: LOCAL_IDENTITY.arn, accessPolicies: ['AmazonEKSClusterAdminPolicy'] }],
    });
    writeFileSync(kubeconfig, kubeconfigYaml(components.kube), { mode: 0o600 });
    writeFileSync(join(dir, 'env'), envFile(components));
    writeFileSync(join(dir, STATE_FILE), JSON.stringify(components, null, 2), { mode: 0o600 });
    return components;
  } catch (error) {
    await Promise.all(Object.values(pids).map((pid) => stopDaemon(pid)));
    throw error;
  }
}

/** Stops the components recorded in `dir` by process id. Returns the names it stopped. */
export async function stopComponents(dir: string): Promise<string[]> {
  const file = join(dir, STATE_FILE);
  const stopped: string[] = [];
  if (existsSync(file)) {
    const { pids } = JSON.parse(readFileSync(file, 'utf8')) as Components;
    // The API server goes first so it does not log etcd connection errors on the way down.
    const order = ['kubeApiserver', 'ecr', 'kms', 'registry', 'dynamodb', 'etcd'];
    for (const name of order) {
      const pid = pids[name];
      if (pid !== undefined && isAlive(pid)) {
        await stopDaemon(pid);
        stopped.push(name);
      }
    }
    rmSync(file);
  }
  // Daemons a start spawned but had not recorded yet (it was killed while they came up).
  for (const command of await stopSpawnedIn(dir)) stopped.push(basename(command));
  rmSync(join(dir, 'etcd-data'), { recursive: true, force: true });
  rmSync(join(dir, 'registry-data'), { recursive: true, force: true });
  rmSync(join(dir, 'kms-data'), { recursive: true, force: true });
  return stopped;
}

async function startEcrEndpoint(
  dir: string,
  {
    registryUrl,
    username,
    password,
    stacksDir,
    clustersDir,
    eventBridge,
  }: {
    readonly registryUrl: string;
    readonly username: string;
    readonly password: string;
    readonly stacksDir: string;
    readonly clustersDir: string;
    readonly eventBridge: { readonly rulesDir: string; readonly deliveriesDir: string };
  },
) {
  const port = await freePort();
  const log = join(dir, 'ecr-endpoint.log');
  // A clone runs the source through tsx; the installed package, its compiled copy beside the CLI
  // bundle (dist/bin/ecr-endpoint-main.js, where this code is bundled too).
  const source = join(repoRoot, 'dev', 'ecr-endpoint-main.ts');
  const main = existsSync(source)
    ? ['--import', 'tsx', source]
    : [join(dirname(fileURLToPath(import.meta.url)), 'ecr-endpoint-main.js')];
  const pid = startDaemon(process.execPath, [...main, String(port)], log, {
    cwd: repoRoot,
    env: {
      ...process.env,
      SLUICE_ECR_REGISTRY_URL: registryUrl,
      SLUICE_ECR_USERNAME: username,
      SLUICE_ECR_PASSWORD: password,
      SLUICE_CLOUDFORMATION_STACKS: stacksDir,
      SLUICE_EKS_CLUSTERS: clustersDir,
      SLUICE_EVENTBRIDGE_RULES: eventBridge.rulesDir,
      SLUICE_EVENTBRIDGE_DELIVERIES: eventBridge.deliveriesDir,
    },
  });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntilReady({
    name: 'ECR endpoint',
    pid,
    logFile: log,
    ready: async () => (await fetch(endpoint, { method: 'POST' })).status === 400,
  });
  return { pid, endpoint };
}

/** A kubeconfig reaching an API server as a member of system:masters. */
export function kubeconfigYaml(kube: {
  readonly server: string;
  readonly caData: string;
  readonly token: string;
}): string {
  return contextsKubeconfigYaml([{ name: 'sluice-local', ...kube }]);
}

/** A kubeconfig with a context per API server, named after it, each as a member of system:masters; the first is current. */
export function contextsKubeconfigYaml(
  servers: readonly {
    readonly name: string;
    readonly server: string;
    readonly caData: string;
    readonly token: string;
  }[],
): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: servers.map((s) => ({
      name: s.name,
      cluster: { server: s.server, 'certificate-authority-data': s.caData },
    })),
    users: servers.map((s) => ({ name: `${s.name}-admin`, user: { token: s.token } })),
    contexts: servers.map((s) => ({
      name: s.name,
      context: { cluster: s.name, user: `${s.name}-admin`, namespace: 'default' },
    })),
    'current-context': servers[0]?.name,
  });
}
