import { DescribeClusterCommand, type EKSClient } from '@aws-sdk/client-eks';
import { AssumeRoleCommand, type STSClient } from '@aws-sdk/client-sts';
import type { Cluster, User } from '@kubernetes/client-node';
import { KubeConfig } from './client-node.ts';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { Clock } from '../clock.ts';
import type { ClusterConnection } from './connection.ts';
import { eksToken } from './eks-token.ts';

/** Where a delivery's target cluster is: an EKS cluster by name, or a kubeconfig file. */
export type ClusterSpec =
  | { readonly eks: { readonly name: string; readonly region: string; readonly roleArn?: string } }
  | { readonly kubeconfig: string; readonly context?: string };

export interface ClusterAccessDeps {
  /** An EKS client for the region, signing with the given credentials. */
  readonly eks: (
    region: string,
    credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider,
  ) => EKSClient;
  /** An STS client for the region, signing with the given credentials (for AssumeRole). */
  readonly sts: (region: string, credentials: AwsCredentialIdentityProvider) => STSClient;
  /** The caller's own AWS credentials (the Lambda role, or the CLI user's). */
  readonly credentials: AwsCredentialIdentityProvider;
  readonly clock: Clock;
}

/** A connection, and for EKS tokens when to get a new one. */
export interface ClusterAccess extends ClusterConnection {
  /** When the token stops being usable; absent for kubeconfig tokens, whose lifetime is unknown. */
  readonly expiresAt?: Date;
}

/** Resolves a cluster spec to the API server URL, its CA bundle and a bearer token. */
export async function connectToCluster(
  cluster: ClusterSpec,
  deps: ClusterAccessDeps,
): Promise<ClusterAccess> {
  if ('eks' in cluster) return connectToEks(cluster.eks, deps);
  return connectWithKubeconfig(cluster.kubeconfig, cluster.context);
}

async function connectToEks(
  spec: { readonly name: string; readonly region: string; readonly roleArn?: string },
  deps: ClusterAccessDeps,
): Promise<ClusterAccess> {
  const { name, region, roleArn } = spec;
  const what = `EKS cluster "${name}" in ${region}`;
  const credentials = roleArn
    ? await assumeRole({ roleArn, clusterName: name, region, what }, deps)
    : deps.credentials;

  let described;
  try {
    described = await deps.eks(region, credentials).send(new DescribeClusterCommand({ name }));
  } catch (err) {
    throw new Error(`cannot describe ${what}: ${errorText(err)}`, { cause: err });
  }
  const found = described.cluster;
  const status = found?.status ?? 'UNKNOWN';
  if (status === 'DELETING' || status === 'FAILED') throw new Error(`${what} is ${status}`);
  if (!found?.endpoint) throw new Error(`${what} has no endpoint yet (status ${status})`);
  const caData = found.certificateAuthority?.data;
  if (!caData) throw new Error(`${what} has no certificate authority data yet (status ${status})`);

  const { token, expiresAt } = await eksToken({ clusterName: name, region, credentials, clock: deps.clock });
  return { server: found.endpoint, caData, token, expiresAt };
}

/** The role to assume for a cluster; `what` names the cluster in errors. */
interface RoleToAssume {
  readonly roleArn: string;
  readonly clusterName: string;
  readonly region: string;
  readonly what: string;
}

async function assumeRole(
  { roleArn, clusterName, region, what }: RoleToAssume,
  deps: ClusterAccessDeps,
): Promise<AwsCredentialIdentity> {
  let assumed;
  try {
    assumed = await deps
      .sts(region, deps.credentials)
      .send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: roleSessionName(clusterName) }));
  } catch (err) {
    throw new Error(`cannot assume role ${roleArn} for ${what}: ${errorText(err)}`, { cause: err });
  }
  const c = assumed.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey) {
    throw new Error(`assuming role ${roleArn} for ${what} returned no credentials`);
  }
  return {
    accessKeyId: c.AccessKeyId,
    secretAccessKey: c.SecretAccessKey,
    sessionToken: c.SessionToken,
    expiration: c.Expiration,
  };
}

/** `sluice-<cluster>` within STS's limits (2-64 characters of `[\w+=,.@-]`). */
function roleSessionName(clusterName: string): string {
  return `sluice-${clusterName}`.replace(/[^\w+=,.@-]/g, '-').slice(0, 64);
}

function connectWithKubeconfig(path: string, contextName: string | undefined): ClusterAccess {
  const kc = loadKubeconfig(path);
  const name = contextName ?? kc.getCurrentContext();
  if (!name) throw new Error(`kubeconfig ${path} has no current-context; name the context to use`);
  const context = kc.getContextObject(name);
  if (!context) {
    const known = kc.getContexts().map((c) => `"${c.name}"`);
    throw new Error(
      `kubeconfig ${path} has no context "${name}" (it has ${known.length ? known.join(', ') : 'none'})`,
    );
  }
  const where = `kubeconfig ${path}, context "${name}"`;

  const cluster = kc.getCluster(context.cluster);
  if (!cluster) throw new Error(`${where}: cluster "${context.cluster}" is not defined`);
  if (cluster.skipTLSVerify) {
    throw new Error(
      `${where}: cluster "${cluster.name}" sets insecure-skip-tls-verify; sluice always verifies the API server`,
    );
  }
  if (cluster.tlsServerName) {
    throw new Error(
      `${where}: cluster "${cluster.name}" sets tls-server-name, which sluice does not support`,
    );
  }
  if (cluster.proxyUrl) {
    throw new Error(`${where}: cluster "${cluster.name}" sets proxy-url, which sluice does not support`);
  }
  const caData = clusterCaData(cluster, where);

  if (!context.user) throw new Error(`${where} names no user; sluice needs a bearer-token user`);
  const user = kc.getUser(context.user);
  if (!user) throw new Error(`${where}: user "${context.user}" is not defined`);
  const token = bearerToken(user, where);
  return { server: cluster.server, caData, token };
}

/**
 * Loads a kubeconfig as kubectl reads it: relative `certificate-authority`, client certificate
 * and `token-file` paths are relative to the kubeconfig's directory. (`KubeConfig.loadFromFile`
 * resolves the first two that way but reads `token-file` relative to the working directory.)
 */
function loadKubeconfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  const root = dirname(resolve(path));
  try {
    const doc: unknown = parse(readFileSync(path, 'utf8'));
    for (const entry of arrayField(doc, 'users')) {
      const user = isRecord(entry) && isRecord(entry.user) ? entry.user : undefined;
      const tokenFile = user?.['token-file'];
      if (user && typeof tokenFile === 'string' && !isAbsolute(tokenFile))
        user['token-file'] = join(root, tokenFile);
    }
    kc.loadFromString(JSON.stringify(doc ?? {}));
    kc.makePathsAbsolute(root);
  } catch (err) {
    throw new Error(`cannot load kubeconfig ${path}: ${errorText(err)}`, { cause: err });
  }
  return kc;
}

/** The cluster's CA bundle (base64 PEM), from its certificate-authority-data or -file; `where` names the kubeconfig in errors. */
function clusterCaData(
  { name: clusterName, caData, caFile }: Pick<Cluster, 'name' | 'caData' | 'caFile'>,
  where: string,
): string {
  let data = caData;
  if (!data && caFile) {
    try {
      data = readFileSync(caFile).toString('base64');
    } catch (err) {
      throw new Error(`${where}: cannot read certificate-authority ${caFile}: ${errorText(err)}`, {
        cause: err,
      });
    }
  }
  if (!data) {
    throw new Error(
      `${where}: cluster "${clusterName}" has neither certificate-authority-data nor certificate-authority`,
    );
  }
  if (!Buffer.from(data, 'base64').toString('utf8').includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(
      `${where}: the certificate authority of cluster "${clusterName}" is not a base64 PEM certificate`,
    );
  }
  return data;
}

function bearerToken(user: User, where: string): string {
  const refuse = (how: string, hint = '') =>
    new Error(`${where}: user "${user.name}" ${how}; only bearer-token users are supported${hint}`);
  const eksHint = ' (EKS uses tokens: target the cluster with { eks: { name, region } } instead)';
  if (user.exec)
    throw refuse(`uses an exec plugin (${execCommand(user.exec)})`, execHint(user.exec) ?? eksHint);
  if (user.authProvider)
    throw refuse(`uses the auth provider "${authProviderName(user.authProvider)}"`, eksHint);
  if (user.certData || user.certFile || user.keyData || user.keyFile)
    throw refuse('uses a client certificate', eksHint);
  if (user.username || user.password) throw refuse('uses basic authentication');
  if (user.impersonateUser) throw refuse('impersonates another user (as)');
  const token = user.token?.trim();
  if (!token) throw new Error(`${where}: user "${user.name}" has no token or token-file`);
  return token;
}

function execCommand(exec: unknown): string {
  return isRecord(exec) && typeof exec.command === 'string' ? exec.command : 'unknown command';
}

/** For `aws eks get-token --cluster-name X --region R` users, the eks spec that does the same. */
function execHint(exec: unknown): string | undefined {
  if (!isRecord(exec) || !Array.isArray(exec.args)) return undefined;
  const args = exec.args.filter((a): a is string => typeof a === 'string');
  if (!args.includes('get-token')) return undefined;
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  };
  const name = flag('--cluster-name');
  if (!name) return undefined;
  const region = flag('--region') ?? (isRecord(exec) ? envValue(exec.env, 'AWS_REGION') : undefined);
  const role = flag('--role-arn');
  const fields = [
    `name: "${name}"`,
    `region: "${region ?? '<region>'}"`,
    ...(role ? [`roleArn: "${role}"`] : []),
  ];
  return ` (EKS uses tokens: target the cluster with { eks: { ${fields.join(', ')} } } instead)`;
}

function envValue(env: unknown, name: string): string | undefined {
  if (!Array.isArray(env)) return undefined;
  const entry: unknown = env.find((e) => isRecord(e) && e.name === name);
  return isRecord(entry) && typeof entry.value === 'string' ? entry.value : undefined;
}

function authProviderName(provider: unknown): string {
  return isRecord(provider) && typeof provider.name === 'string' ? provider.name : 'unknown';
}

function arrayField(value: unknown, key: string): unknown[] {
  const field = isRecord(value) ? value[key] : undefined;
  return Array.isArray(field) ? field : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorText(err: unknown): string {
  if (err instanceof Error)
    return err.name && err.name !== 'Error' ? `${err.name}: ${err.message}` : err.message;
  return String(err);
}

/** How long before its token expires a reused EKS connection is replaced. */
const REUSE_MARGIN_MS = 60_000;

/**
 * connectToCluster, with EKS connections kept (per cluster, region and role) until their token is
 * a minute from expiring: a warm function reconciling every few minutes describes each cluster
 * about once per token, not once per run. A kubeconfig is read every time (it may change).
 */
export function reusedConnections(deps: ClusterAccessDeps): (cluster: ClusterSpec) => Promise<ClusterAccess> {
  const kept = new Map<string, ClusterAccess>();
  return async (cluster) => {
    if (!('eks' in cluster)) return connectToCluster(cluster, deps);
    const key = JSON.stringify([cluster.eks.name, cluster.eks.region, cluster.eks.roleArn ?? null]);
    const known = kept.get(key);
    if (known?.expiresAt && known.expiresAt.getTime() - REUSE_MARGIN_MS > deps.clock.now().getTime())
      return known;
    const fresh = await connectToCluster(cluster, deps);
    kept.set(key, fresh);
    return fresh;
  };
}
