// Least privilege per delivery: a delivery that impersonates a service account bound to one
// namespace applies and prunes there, as that account (the API server's audit log says so), and
// fails validation naming the forbidden objects elsewhere, applying nothing.
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseDelivery } from '../../functions/core/config/index.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { writesSince } from '../support/audit.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const deps = engineDeps();

const teamA = uniqueName('team-a');
const teamB = uniqueName('team-b');
const deployer = `system:serviceaccount:${teamA}:deployer`;
const cm = (name: string, ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: v\n`;

interface AuditEvent {
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { readonly username: string };
  readonly impersonatedUser?: { readonly username: string };
  readonly objectRef?: { readonly namespace?: string };
  readonly requestReceivedTimestamp: string;
}

/** Who the API server authorized each write in `ns` since `since` as: the impersonated user if any. */
function writersSince(ns: string, since: string): string[] {
  return readFileSync(bed.kube.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.objectRef?.namespace === ns && e.requestReceivedTimestamp > since)
    .filter(
      (e) => ['create', 'update', 'patch', 'delete'].includes(e.verb) && !e.requestURI.includes('dryRun'),
    )
    .map((e) => e.impersonatedUser?.username ?? e.user.username);
}

beforeAll(async () => {
  await createNamespace(kc, teamA);
  await createNamespace(kc, teamB);
  await core.createNamespacedServiceAccount({ namespace: teamA, body: { metadata: { name: 'deployer' } } });
  await rbac.createNamespacedRole({
    namespace: teamA,
    body: {
      metadata: { name: 'deployer' },
      rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['*'] }],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: teamA,
    body: {
      metadata: { name: 'deployer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: teamA }],
    },
  });
});

describe('a delivery impersonating a service account bound to one namespace', () => {
  const repository = uniqueName('impersonate/app');
  const name = uniqueName('impersonate');

  it('applies and prunes in that namespace, as the service account', async () => {
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      impersonate: { serviceAccount: { name: 'deployer', namespace: teamA } },
    });
    await pushFiles(bed, repository, 'main', {
      'a.yaml': [cm('one', teamA), cm('two', teamA)].join('---\n'),
    });
    let since = new Date().toISOString();
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 2 } });
    expect(writersSince(teamA, since)).toEqual([deployer, deployer]);

    await pushFiles(bed, repository, 'main', { 'a.yaml': cm('one', teamA) });
    since = new Date().toISOString();
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { deleted: 1 } });
    expect(writersSince(teamA, since)).toEqual([deployer]);
  });

  it('fails naming each forbidden object elsewhere, and applies nothing, not even what it may write', async () => {
    const inventory = await readInventory(deps.db, name);
    const lastApplied = (await getStatus(deps.db, name))?.lastAppliedRevision;
    await pushFiles(bed, repository, 'main', {
      'a.yaml': [cm('one', teamA), cm('three', teamA)].join('---\n'),
      'b.yaml': cm('intruder', teamB),
      'c.yaml': `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ${name}-escalate\nrules:\n  - apiGroups: ['*']\n    resources: ['*']\n    verbs: ['*']\n`,
    });
    const since = new Date().toISOString();
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(result.message).toContain(
      `b.yaml: ConfigMap/${teamB}/intruder: configmaps "intruder" is forbidden: User "${deployer}" cannot patch resource "configmaps" in API group "" in the namespace "${teamB}"`,
    );
    expect(result.message).toContain(
      `c.yaml: ClusterRole/${name}-escalate: clusterroles.rbac.authorization.k8s.io "${name}-escalate" is forbidden: User "${deployer}" cannot patch resource "clusterroles"`,
    );
    expect(writesSince(bed, teamA, since)).toEqual([]);
    expect(writesSince(bed, teamB, since)).toEqual([]);
    expect(
      (await core.listNamespacedConfigMap({ namespace: teamA })).items.map((c) => c.metadata?.name),
    ).not.toContain('three');
    expect(await readInventory(deps.db, name)).toEqual(inventory);
    expect((await getStatus(deps.db, name))?.lastAppliedRevision).toBe(lastApplied);
  });

  it("serviceAccountName (Flux's field) is a service account in targetNamespace", async () => {
    const flux = uniqueName('sa-name');
    const fluxRepository = uniqueName('impersonate/flux');
    await registerDelivery(deps, bed, {
      name: flux,
      repository: fluxRepository,
      targetNamespace: teamA,
      serviceAccountName: 'deployer',
    });
    await pushFiles(bed, fluxRepository, 'main', {
      'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-flux-style\ndata:\n  k: v\n',
    });
    const since = new Date().toISOString();
    expect(await run(flux, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(writersSince(teamA, since)).toEqual([deployer]);
  });

  it('without impersonation the same artifact runs as sluice itself (the control)', async () => {
    const own = uniqueName('own');
    const ownRepository = uniqueName('impersonate/own');
    await registerDelivery(deps, bed, { name: own, repository: ownRepository });
    await pushFiles(bed, ownRepository, 'main', { 'b.yaml': cm(`${own}-cm`, teamB) });
    const since = new Date().toISOString();
    expect(await run(own, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(writersSince(teamB, since)).toEqual(['sluice-admin']);
  });
});

describe('sluice itself with no rights but impersonating one service account', () => {
  /** A kubeconfig for `sluice-restricted`, a user with no bindings besides the ones made here. */
  function restrictedKubeconfig(): string {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-restricted-')), 'kubeconfig');
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'local',
          cluster: { server: bed.kube.server, 'certificate-authority-data': bed.kube.caData },
        },
      ],
      users: [{ name: 'restricted', user: { token: bed.kube.restrictedToken } }],
      contexts: [{ name: 'local', context: { cluster: 'local', user: 'restricted' } }],
      'current-context': 'local',
    };
    writeFileSync(file, stringify(config), { mode: 0o600 });
    return file;
  }

  it('reconciles as that account, and cannot impersonate any other', async () => {
    // The only right of sluice's own identity: impersonate team A's deployer (a namespaced grant).
    await rbac.createNamespacedRole({
      namespace: teamA,
      body: {
        metadata: { name: 'sluice-impersonates-deployer' },
        rules: [
          {
            apiGroups: [''],
            resources: ['serviceaccounts'],
            verbs: ['impersonate'],
            resourceNames: ['deployer'],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: teamA,
      body: {
        metadata: { name: 'sluice-impersonates-deployer' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'Role',
          name: 'sluice-impersonates-deployer',
        },
        subjects: [{ kind: 'User', name: 'sluice-restricted', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    const kubeconfig = restrictedKubeconfig();
    const repository = uniqueName('impersonate/restricted');
    const name = uniqueName('restricted');
    await pushFiles(bed, repository, 'main', { 'a.yaml': cm(`${name}-cm`, teamA) });
    await registerDelivery(deps, bed, {
      name,
      repository,
      cluster: { kubeconfig },
      impersonate: { serviceAccount: { name: 'deployer', namespace: teamA } },
    });
    const since = new Date().toISOString();
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 1 } });
    expect(writersSince(teamA, since)).toEqual([deployer]);

    const other = uniqueName('restricted');
    await registerDelivery(deps, bed, {
      name: other,
      repository,
      cluster: { kubeconfig },
      impersonate: { serviceAccount: { name: 'default', namespace: teamB } },
    });
    const refused = await run(other, deps);
    expect(refused.outcome).toBe('Failed');
    expect(refused.message).toContain(
      `serviceaccounts "default" is forbidden: User "sluice-restricted" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "${teamB}"`,
    );
  });
});

describe('impersonation config', () => {
  const base = {
    name: 'web',
    source: { url: 'oci://127.0.0.1:5000/web' },
    cluster: { kubeconfig: './kubeconfig' },
  };
  const problems = (input: Record<string, unknown>) => {
    try {
      parseDelivery({ ...base, ...input });
      return '';
    } catch (error) {
      return (error as ConfigError).message;
    }
  };

  it('normalises serviceAccountName and both impersonate forms', () => {
    expect(
      parseDelivery({ ...base, targetNamespace: 'apps', serviceAccountName: 'deployer' }).impersonate,
    ).toEqual({
      serviceAccount: { name: 'deployer', namespace: 'apps' },
    });
    expect(
      parseDelivery({ ...base, impersonate: { serviceAccount: { name: 'deployer', namespace: 'ops' } } })
        .impersonate,
    ).toEqual({ serviceAccount: { name: 'deployer', namespace: 'ops' } });
    expect(parseDelivery({ ...base, impersonate: { user: 'sluice:team-a' } }).impersonate).toEqual({
      user: 'sluice:team-a',
    });
    expect(parseDelivery(base).impersonate).toBeUndefined();
  });

  it('names the field of each mistake', () => {
    expect(problems({ serviceAccountName: 'deployer' })).toMatch(
      /serviceAccountName: the service account "deployer" needs a namespace: set targetNamespace/,
    );
    expect(problems({ impersonate: {} })).toMatch(/impersonate: set exactly one of serviceAccount/);
    expect(problems({ impersonate: { user: 'a', serviceAccount: { name: 'b', namespace: 'c' } } })).toMatch(
      /impersonate: set exactly one of serviceAccount/,
    );
    expect(problems({ serviceAccountName: 'a', impersonate: { user: 'b' }, targetNamespace: 'x' })).toMatch(
      /impersonate: set either serviceAccountName or impersonate, not both/,
    );
    expect(problems({ serviceAccountName: 'Not_Valid', targetNamespace: 'x' })).toMatch(
      /serviceAccountName: "Not_Valid" is not a valid service account name/,
    );
  });
});
