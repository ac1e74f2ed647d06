import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { request } from 'node:https';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { makeApiServerCerts } from './certs.ts';
import { eksAuthenticatorUrl } from './eks-authenticator.ts';
import { freePort, startDaemon, waitUntilReady } from './processes.ts';

export interface KubeApiServer {
  readonly pid: number;
  readonly server: string;
  readonly caFile: string;
  /** Bearer token of a member of system:masters. */
  readonly token: string;
  /** Bearer token of `sluice-restricted`, a user with no RBAC bindings. */
  readonly restrictedToken: string;
  /** JSON-lines audit log of every request (Metadata level). */
  readonly auditLog: string;
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
`;

/**
 * kube-apiserver the way envtest runs it, but closer to EKS: TLS with its own CA, bearer tokens
 * from a token file (and EKS tokens through the stand-ins' webhook, if given), anonymous requests
 * refused (401), RBAC authorization.
 */
export async function startKubeApiServer(
  binary: string,
  etcdUrl: string,
  dir: string,
  options: {
    /** Where in etcd this API server keeps its objects: API servers with different prefixes are different clusters. @default /registry */
    readonly etcdPrefix?: string;
    /** 4,096 addresses: a Service per delivery for the scale bench's 1,000 (a /24 filled up). @default 10.0.0.0/20 */
    readonly serviceIpRange?: string;
    /**
     * The base URL of the local AWS stand-ins (http://127.0.0.1:<port>): EKS tokens (`k8s-aws-v1.`)
     * are then reviewed by their token authenticator webhook (dev/eks-authenticator.ts), after the
     * token file. It must be up before this starts. @default no webhook: static tokens only
     */
    readonly eksAuthenticator?: string;
  } = {},
): Promise<KubeApiServer> {
  const certs = makeApiServerCerts(join(dir, 'pki'));
  const port = await freePort();
  const server = `https://127.0.0.1:${port}`;
  const token = randomBytes(24).toString('hex');
  const restrictedToken = randomBytes(24).toString('hex');
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(
    tokenFile,
    `${token},sluice-admin,uid-sluice-admin,"system:masters"\n${restrictedToken},sluice-restricted,uid-sluice-restricted\n`,
    { mode: 0o600 },
  );
  const policyFile = join(dir, 'audit-policy.yaml');
  writeFileSync(policyFile, AUDIT_POLICY);
  const auditLog = join(dir, 'audit.log');
  const log = join(dir, 'kube-apiserver.log');
  const webhookFlags: string[] = [];
  if (options.eksAuthenticator) {
    const webhookConfig = join(dir, 'eks-authenticator.kubeconfig');
    writeFileSync(webhookConfig, webhookKubeconfig(eksAuthenticatorUrl(options.eksAuthenticator, server)));
    webhookFlags.push(
      `--authentication-token-webhook-config-file=${webhookConfig}`,
      '--authentication-token-webhook-version=v1',
      // Access entries written by a test or by hand take effect on the next request.
      '--authentication-token-webhook-cache-ttl=0s',
    );
  }
  const pid = startDaemon(
    binary,
    [
      `--etcd-servers=${etcdUrl}`,
      `--etcd-prefix=${options.etcdPrefix ?? '/registry'}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--cert-dir=${join(dir, 'pki')}`,
      `--tls-cert-file=${certs.serverCert}`,
      `--tls-private-key-file=${certs.serverKey}`,
      `--token-auth-file=${tokenFile}`,
      ...webhookFlags,
      '--anonymous-auth=false',
      '--authorization-mode=RBAC',
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${certs.serviceAccountPub}`,
      `--service-account-signing-key-file=${certs.serviceAccountKey}`,
      `--service-cluster-ip-range=${options.serviceIpRange ?? '10.0.0.0/20'}`,
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      `--audit-policy-file=${policyFile}`,
      `--audit-log-path=${auditLog}`,
      '--audit-log-format=json',
      '--audit-log-maxsize=0',
      '--v=0',
    ],
    log,
  );
  const ca = readFileSync(certs.caCert);
  const agent = new Agent({ ca, keepAlive: false });
  const readyz = () =>
    new Promise<boolean>((resolve) => {
      const req = request(
        `${server}/readyz`,
        { agent, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        },
      );
      req.on('error', () => resolve(false));
      req.end();
    });
  await waitUntilReady({ name: 'kube-apiserver', pid, logFile: log, ready: readyz, timeoutMs: 90_000 });
  return { pid, server, caFile: certs.caCert, token, restrictedToken, auditLog };
}

/** The kubeconfig kube-apiserver reads to reach a token authenticator webhook (plain HTTP on 127.0.0.1). */
function webhookKubeconfig(url: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'eks-authenticator', cluster: { server: url } }],
    users: [{ name: 'kube-apiserver', user: {} }],
    contexts: [{ name: 'webhook', context: { cluster: 'eks-authenticator', user: 'kube-apiserver' } }],
    'current-context': 'webhook',
  });
}
