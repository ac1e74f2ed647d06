// The EKS clusters the local stand-ins know: a folder with a file `<name>.json` per cluster, naming
// the API server that stands for it and its access entries. DescribeCluster (dev/eks-endpoint.ts)
// and the token authenticator of the API servers (dev/eks-authenticator.ts) read it on every request.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Who may use a cluster, as an EKS access entry says it: the IAM role or user, the Kubernetes user
 * name it gets and its groups. `AmazonEKSClusterAdminPolicy` is the one access policy the stand-in
 * knows; it grants what EKS grants with it (locally: membership of system:masters).
 */
export interface StandInAccessEntry {
  /** `arn:aws:iam::<account>:role/<name>` (a path is ignored, as EKS matches roles) or `…:user/<path/name>`. */
  readonly principalArn: string;
  /**
   * The Kubernetes user name; `{{SessionName}}` and `{{AccountID}}` are filled in as EKS fills them.
   * @default the user's ARN, or for a role `arn:aws:sts::<account>:assumed-role/<role>/{{SessionName}}` (as EKS)
   */
  readonly username?: string;
  /** Kubernetes groups (kubernetesGroups); EKS refuses names starting with `system:`. */
  readonly groups?: readonly string[];
  readonly accessPolicies?: readonly 'AmazonEKSClusterAdminPolicy'[];
}

/** A cluster the stand-ins know. */
export interface StandInEksCluster {
  /** The API server standing for it, e.g. https://127.0.0.1:6443. */
  readonly endpoint: string;
  /** base64 of its CA PEM, as DescribeCluster answers it. */
  readonly caData: string;
  readonly region: string;
  /** @default ACTIVE */
  readonly status?: string;
  readonly accessEntries?: readonly StandInAccessEntry[];
}

/** As EKS names clusters: 1-100 characters, a letter or digit first, then letters, digits, - and _. */
const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/;
const PRINCIPAL_ARN = /^arn:aws(-cn|-us-gov)?:iam::\d{12}:(role|user)\/([\w+=,.@/-]+)$/;

/** Records (or replaces) a cluster in `clustersDir`, written whole and renamed (a reader never sees half of it). */
export function writeStandInEksCluster(clustersDir: string, name: string, cluster: StandInEksCluster): void {
  if (!CLUSTER_NAME.test(name)) throw new Error(`EKS cluster name '${name}' is not a valid cluster name`);
  const where = `EKS cluster '${name}'`;
  if (!/^https:\/\/127\.0\.0\.1:\d+$/.test(cluster.endpoint))
    throw new Error(
      `${where}: endpoint '${cluster.endpoint}' is not a local API server (https://127.0.0.1:<port>)`,
    );
  for (const entry of cluster.accessEntries ?? []) checkAccessEntry(entry, where);
  mkdirSync(clustersDir, { recursive: true });
  const file = join(clustersDir, `${name}.json`);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(cluster, null, 2));
  renameSync(`${file}.${process.pid}.tmp`, file);
}

/** Adds an access entry to a known cluster (replacing one for the same principal), as CreateAccessEntry. */
export function putStandInAccessEntry(clustersDir: string, name: string, entry: StandInAccessEntry): void {
  const cluster = readStandInEksCluster(clustersDir, name);
  if (!cluster) throw new Error(`EKS cluster '${name}' is not known in ${clustersDir}`);
  const others = (cluster.accessEntries ?? []).filter((e) => e.principalArn !== entry.principalArn);
  writeStandInEksCluster(clustersDir, name, { ...cluster, accessEntries: [...others, entry] });
}

/** The cluster named `name`, if the folder has it; a file that is not a valid cluster is an error naming it. */
export function readStandInEksCluster(clustersDir: string, name: string): StandInEksCluster | undefined {
  if (!CLUSTER_NAME.test(name)) return undefined;
  const file = join(clustersDir, `${name}.json`);
  if (!existsSync(file)) return undefined;
  const cluster = JSON.parse(readFileSync(file, 'utf8')) as StandInEksCluster;
  if (
    typeof cluster.endpoint !== 'string' ||
    typeof cluster.caData !== 'string' ||
    typeof cluster.region !== 'string'
  )
    throw new Error(`${file}: an EKS cluster needs endpoint, caData and region (strings)`);
  for (const entry of cluster.accessEntries ?? []) checkAccessEntry(entry, file);
  return cluster;
}

/** The ARN an access entry matches callers by: a role's without its path (the session ARN has none). */
export function entryMatchArn(principalArn: string): string {
  const match = PRINCIPAL_ARN.exec(principalArn);
  if (!match) throw new Error(`principalArn '${principalArn}' is not an IAM role or user ARN`);
  const [, , kind, name = ''] = match;
  return kind === 'role'
    ? principalArn.replace(/:role\/.*$/, `:role/${name.split('/').at(-1)}`)
    : principalArn;
}

function checkAccessEntry(entry: StandInAccessEntry, where: string): void {
  if (typeof entry.principalArn !== 'string' || !PRINCIPAL_ARN.test(entry.principalArn))
    throw new Error(
      `${where}: access entry principalArn '${String(entry.principalArn)}' is not an IAM role or user ARN`,
    );
  for (const group of entry.groups ?? [])
    if (typeof group !== 'string' || group === '' || group.startsWith('system:'))
      throw new Error(
        `${where}: access entry of ${entry.principalArn}: group '${String(group)}' is not allowed (EKS refuses empty names and names starting with system:)`,
      );
  if (entry.username !== undefined && (typeof entry.username !== 'string' || entry.username === ''))
    throw new Error(`${where}: access entry of ${entry.principalArn}: username must be a non-empty string`);
  for (const policy of entry.accessPolicies ?? [])
    if (policy !== 'AmazonEKSClusterAdminPolicy')
      throw new Error(
        `${where}: access entry of ${entry.principalArn}: access policy '${String(policy)}' is not known to the stand-in (only AmazonEKSClusterAdminPolicy)`,
      );
}

/** Every cluster in the folder, by name (sorted). */
export function listStandInEksClusters(clustersDir: string): [string, StandInEksCluster][] {
  if (!existsSync(clustersDir)) return [];
  return readdirSync(clustersDir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => file.slice(0, -'.json'.length))
    .flatMap((name) => {
      const cluster = readStandInEksCluster(clustersDir, name);
      return cluster ? [[name, cluster] as [string, StandInEksCluster]] : [];
    });
}
