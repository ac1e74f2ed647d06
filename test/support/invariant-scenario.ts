// One run of the invariant soak: two deliveries on a cluster of their own (a kubeconfig copy), with
// objects made by hand. Delivery A owns a Namespace, ConfigMaps in it and in a Namespace made by
// hand, and a ClusterRole. Delivery B (with SOPS decryption) applies two generated revisions
// (invariant-artifacts.ts: mostly objects and Secrets it must apply and decrypt, a minority
// hostile), `sluice diff` and `sluice status --json` run on it (the CLI, with the components'
// kubectl), then A is removed (which plans B's revision), then B.
// After every sluice call the invariants of invariants.ts are checked; the report lists violations
// and how often each invariant was exercised.
// No vitest imports: the soak runs it under plain tsx.
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ECRClient } from '@aws-sdk/client-ecr';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { Components } from '../../dev/components.ts';
import { LOCAL_KMS_KEYS } from '../../dev/local-kms.ts';
import { systemClock } from '../../functions/core/clock.ts';
import { parseDelivery } from '../../functions/core/config/index.ts';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import { ecrCredentials, pushArtifact } from '../../functions/core/oci/index.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import {
  artifactFiles,
  objectOf,
  reachesOut,
  triggerObject,
  type ArtifactSpec,
  type Names,
} from './invariant-artifacts.ts';
import {
  AuditReader,
  auditKey,
  clusterObjects,
  leakIn,
  leaks,
  noExercise,
  ownershipViolations,
  tableItems,
  watchMemory,
  watchTime,
  withDeadline,
  CALL_DEADLINE_S,
  CLI_DEADLINE_S,
  MEMORY_LIMIT_MIB,
  STALL_LIMIT_MS,
  type Exercise,
  type Snapshot,
  type Trap,
  type Violation,
  type Watchdog,
} from './invariants.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface InvariantEnv {
  readonly bed: Components;
  /** The local cluster, admin. */
  readonly kubeConfig: KubeConfig;
  readonly deps: ReconcileDeps;
  readonly trap: Trap;
  /** Environment for the sluice CLI (componentsEnv); SLUICE_KUBECTL is set to the components' kubectl. */
  readonly cliEnv: NodeJS.ProcessEnv;
  /** Told the seed and step before each call, to report a stall that ends the process. */
  readonly watchdog?: Watchdog;
  /** The seed of the run, for the watchdog's report. */
  readonly seed?: number;
}

export interface InvariantReport {
  readonly steps: readonly string[];
  readonly violations: readonly Violation[];
  readonly exercise: Exercise;
}

/** The resource (audit log name) of each kind the scenarios write. */
const RESOURCES: Record<string, { apiVersion: string; resource: string; namespaced: boolean }> = {
  ConfigMap: { apiVersion: 'v1', resource: 'configmaps', namespaced: true },
  Secret: { apiVersion: 'v1', resource: 'secrets', namespaced: true },
  ServiceAccount: { apiVersion: 'v1', resource: 'serviceaccounts', namespaced: true },
  Role: { apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'roles', namespaced: true },
  RoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'rolebindings', namespaced: true },
  Namespace: { apiVersion: 'v1', resource: 'namespaces', namespaced: false },
  ClusterRole: { apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'clusterroles', namespaced: false },
  CustomResourceDefinition: {
    apiVersion: 'apiextensions.k8s.io/v1',
    resource: 'customresourcedefinitions',
    namespaced: false,
  },
  ValidatingAdmissionPolicy: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    resource: 'validatingadmissionpolicies',
    namespaced: false,
  },
  ValidatingAdmissionPolicyBinding: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    resource: 'validatingadmissionpolicybindings',
    namespaced: false,
  },
};

/** A CLI step that cannot run at all (not a refusal of the revision): it checked nothing. */
const CLI_BROKEN =
  /ENOENT|kubectl not found|spawn \S+|Cannot find (module|package)|\b(TypeError|ReferenceError|SyntaxError|RangeError)\b|ERR_MODULE/;

const micros = (date: Date) => date.toISOString().replace('Z', '000Z');
let ageSecretArn: Promise<string> | undefined;

export async function runInvariantScenario(
  env: InvariantEnv,
  revisions: readonly [ArtifactSpec, ArtifactSpec],
): Promise<InvariantReport> {
  const steps: string[] = [];
  try {
    return await scenario(env, revisions, steps);
  } catch (error) {
    throw new Error(
      `invariant scenario (kube ${env.bed.kube.server}, registry ${env.bed.registry.host}, trap ${env.trap.address}) failed after [${steps.join('; ')}]: ${(error as Error).stack ?? String(error)}`,
    );
  }
}

async function scenario(
  env: InvariantEnv,
  revisions: readonly [ArtifactSpec, ArtifactSpec],
  steps: string[],
): Promise<InvariantReport> {
  const tag = `inv-${Math.random().toString(36).slice(2, 8)}`;
  const names: Names = {
    tag,
    ns: { mine: `${tag}-mine`, theirs: `${tag}-theirs`, handmade: `${tag}-hand`, declared: `${tag}-new` },
    other: `${tag}-a`,
    widgetGroup: `${tag}.widgets.example`,
    leakGroup: `${tag}.leaks.example`,
    patternGroup: `${tag}.patterns.example`,
    trap: env.trap.address,
  };
  const a = names.other;
  const b = `${tag}-b`;
  const kube = new KubeClient(env.kubeConfig);
  const violations: Violation[] = [];
  const exercise = noExercise();
  const events: string[] = [];
  const logged: string[] = [];
  const outputs: string[] = [];
  const dir = join(env.bed.dir, 'invariants', tag);
  mkdirSync(dir, { recursive: true });
  const kubeconfig = join(dir, 'kubeconfig');
  copyFileSync(env.bed.kube.kubeconfig, kubeconfig);
  const audit = new AuditReader(env.bed.kube.auditLog);
  const trapBefore = env.trap.connections();
  const deps = (): ReconcileDeps => ({
    ...env.deps,
    runId: `inv-${Math.random().toString(36).slice(2)}`,
    events: { publish: async (event) => void events.push(JSON.stringify(event)) },
    log: (message) => logged.push(message),
  });

  const snapshot = async (): Promise<Snapshot> => {
    kube.forgetDiscovery();
    const owner = new Map<string, string>();
    const note = (resource: string, o: KubernetesObject) =>
      owner.set(
        auditKey(resource, o.metadata?.namespace, o.metadata?.name ?? ''),
        o.metadata?.labels?.[OWNER_LABEL] ?? '',
      );
    const kinds = [
      ...Object.entries(RESOURCES).map(([kind, r]) => ({ kind, ...r })),
      { kind: 'Widget', apiVersion: `${names.widgetGroup}/v1`, resource: 'widgets', namespaced: true },
      { kind: 'Leak', apiVersion: `${names.leakGroup}/v1`, resource: 'leaks', namespaced: true },
      { kind: 'Pattern', apiVersion: `${names.patternGroup}/v1`, resource: 'patterns', namespaced: true },
    ];
    for (const k of kinds) {
      if (!(await kube.resource(k.apiVersion, k.kind))) continue;
      if (k.namespaced)
        for (const ns of Object.values(names.ns))
          for (const o of await kube.list(k.apiVersion, k.kind, '', ns)) note(k.resource, o);
      else
        for (const o of await kube.list(k.apiVersion, k.kind, ''))
          if (o.metadata?.name?.includes(tag)) note(k.resource, o);
    }
    return { owner };
  };
  const inScope = (ref: { namespace?: string; name?: string }) =>
    ref.namespace ? ref.namespace.startsWith(tag) : (ref.name ?? '').includes(tag);

  /**
   * Runs one sluice call and checks owns-deletes, bounded-memory and bounded-time on it; returns
   * its outcome and how many objects it deleted.
   */
  const checked = async (
    step: string,
    delivery: string,
    takeover: ReadonlyMap<string, string>,
    call: () => Promise<string>,
    /** Whether the call runs in this process (the function's work), so its memory counts. */
    inProcess = true,
  ): Promise<{ outcome: string; deletes: number }> => {
    const deadline = inProcess ? CALL_DEADLINE_S : CLI_DEADLINE_S;
    const before = await snapshot();
    audit.read();
    const context = `seed ${env.seed ?? '?'}, ${tag}: ${step}`;
    env.watchdog?.at(context);
    const from = micros(new Date());
    const memory = await watchMemory(context);
    const time = watchTime();
    const outcome = await withDeadline(
      call().catch((error: unknown) => `threw ${String(error)}`),
      deadline,
      () => `still running after ${deadline} s (abandoned)`,
    );
    const { seconds, stallMs } = time.stop();
    const { peakMib, killed } = await memory.stop();
    env.watchdog?.at(`seed ${env.seed ?? '?'}, ${tag}: after ${step}`);
    const to = micros(new Date());
    outputs.push(outcome);
    steps.push(
      `${step}: ${outcome.replace(/\s+/g, ' ').slice(0, 200)} (peak +${peakMib} MiB, ${seconds} s, longest stall ${stallMs} ms)`,
    );
    exercise.timed++;
    if (inProcess) exercise.measured++;
    if (seconds > deadline || (inProcess && stallMs > STALL_LIMIT_MS))
      violations.push({
        invariant: 'bounded-time',
        detail: `${step}: took ${seconds} s (limit ${deadline} s)${inProcess ? `, the event loop stalled for ${stallMs} ms (limit ${STALL_LIMIT_MS} ms)` : ''}`,
      });
    if (inProcess && (peakMib > MEMORY_LIMIT_MIB || killed.length > 0))
      violations.push({
        invariant: 'bounded-memory',
        detail: `${step}: the process tree grew by ${peakMib} MiB (limit ${MEMORY_LIMIT_MIB})${killed.length ? `; killed ${killed.join(', ')}` : ''}`,
      });
    // The audit log is written when a request completes: wait for a request made after the call.
    const seen = [];
    for (let tries = 0; tries < 100; tries++) {
      await kube.get({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: names.ns.mine } });
      const read = audit.read();
      seen.push(...read);
      if (read.some((e) => e.requestReceivedTimestamp > to)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    violations.push(
      ...ownershipViolations(seen, { from, to }, inScope, before, delivery, [a, b], takeover).map((v) => ({
        ...v,
        detail: `${step}: ${v.detail}`,
      })),
    );
    const deletes = seen.filter(
      (e) =>
        e.verb === 'delete' &&
        !e.requestURI.includes('dryRun') &&
        e.objectRef !== undefined &&
        inScope(e.objectRef) &&
        e.requestReceivedTimestamp >= from &&
        e.requestReceivedTimestamp <= to &&
        (e.responseStatus?.code ?? 200) < 400 &&
        before.owner.has(auditKey(e.objectRef.resource ?? '', e.objectRef.namespace, e.objectRef.name ?? '')),
    ).length;
    return { outcome, deletes };
  };

  /**
   * Before a revision with the ConfigMap the quoting policy refuses: when the earlier revision
   * applied the policy and its Secret, waits (at most 30 s) until the API server enforces it, so
   * the refusal that quotes the Secret is what the revision meets.
   */
  const policyInForce = async () => {
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: `${tag}-quote` },
    };
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sec-a', namespace: names.ns.mine },
    };
    if (!(await kube.get(policy)) || !(await kube.get(secret))) return;
    const probe = triggerObject(names);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        await kube.apply({ ...probe, metadata: { ...probe.metadata, name: 'probe' } }, { dryRun: true });
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  /** Secrets in B's namespace whose data holds the decrypted canary: sluice decrypted them. */
  const decrypted = async () => {
    let count = 0;
    for (const secret of await kube.list('v1', 'Secret', '', names.ns.mine)) {
      const data = (secret as { data?: Record<string, string> }).data ?? {};
      if (Object.values(data).some((v) => leakIn(Buffer.from(v, 'base64').toString('utf8')))) count++;
    }
    return count;
  };

  const push = async (repository: string, files: Record<string, string>) => {
    const artifact = mkdtempSync(join(tmpdir(), 'sluice-invariant-'));
    try {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(artifact, path)), { recursive: true });
        writeFileSync(join(artifact, path), text);
      }
      await pushArtifact(artifact, `oci://${env.bed.registry.host}/${repository}:main`, {
        credentials: ecrCredentials(new ECRClient({}), systemClock),
      });
    } finally {
      rmSync(artifact, { recursive: true, force: true });
    }
  };
  const register = async (name: string, repository: string, fields: Record<string, unknown>) =>
    putDelivery(
      env.deps.db,
      parseDelivery({
        name,
        source: { url: `oci://${env.bed.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
        cluster: { kubeconfig },
        prune: true,
        pruneLimit: '100%',
        ...fields,
      }),
      new Date(),
    );
  /** The CLI as a user runs it; `code` null when it was killed. */
  const cli = (...args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(HERE, '../../bin/sluice-cli.mjs'), ...args],
        { env: { ...env.cliEnv, SLUICE_KUBECTL: env.bed.kubectl }, timeout: CLI_DEADLINE_S * 1000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
          resolve({ code, output: `${stdout}${stderr}` });
        },
      );
    });
  /** Runs a CLI step, checked; a failure that is not the revision's own is a cli-works violation. */
  const cliStep = async (step: string, args: string[], mayFail: boolean) => {
    let result = { code: null as number | null, output: '' };
    const { outcome } = await checked(
      step,
      b,
      none,
      async () => {
        result = await cli(...args);
        return `exit ${result.code}: ${result.output}`;
      },
      false,
    );
    const broken = CLI_BROKEN.exec(result.output);
    if (result.code === null || broken || (result.code !== 0 && !mayFail))
      violations.push({
        invariant: 'cli-works',
        detail: `${step}: ${result.code === null ? 'was killed or timed out' : `exited ${result.code}`}${broken ? ` (${broken[0]})` : mayFail ? '' : ` although ${b}'s last run succeeded`}: ${outcome.replace(/\s+/g, ' ').slice(0, 300)}`,
      });
    return result.code === 0;
  };

  steps.push('setup');
  // The cluster: namespaces and objects made by hand, delivery A's objects.
  for (const ns of [names.ns.mine, names.ns.handmade])
    await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const ns of [names.ns.mine, names.ns.handmade])
    await kube.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'by-hand', namespace: ns },
      data: { v: 'mine' },
    });
  const none = new Map<string, string>();
  steps.push('register a');
  await register(a, `invariants/${tag}/a`, { deletionPolicy: 'Delete' });
  steps.push('push a');
  await push(`invariants/${tag}/a`, {
    'all.yaml': [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: names.ns.theirs } },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'shared', namespace: names.ns.theirs },
        data: { v: 'a' },
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'x', namespace: names.ns.theirs },
        data: { v: 'a' },
      },
      // A's object in a Namespace made by hand: B declaring that Namespace must not make it B's.
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'shared', namespace: names.ns.handmade },
        data: { v: 'a' },
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `${tag}-shared` },
        rules: [],
      },
    ]
      .map((o) => stringify(o))
      .join('---\n'),
  });
  await checked(`${a} applies`, a, none, async () => {
    const r = await reconcile(a, deps());
    return `${r.outcome} ${r.reason}: ${r.message}`;
  });

  steps.push('age key secret');
  ageSecretArn ??= new SecretsManagerClient({})
    .send(
      new CreateSecretCommand({
        Name: `sops-age-invariants-${Math.random().toString(36).slice(2)}`,
        SecretString: readFileSync(join(HERE, '../fixtures/sops/age.key'), 'utf8'),
      }),
    )
    .then((created) => created.ARN!);
  await register(b, `invariants/${tag}/b`, {
    deletionPolicy: 'Delete',
    decryption: {
      provider: 'sops',
      kmsKeyArns: [LOCAL_KMS_KEYS.fixtures],
      ageKeySecretArn: await ageSecretArn,
      // B's Secrets name its own namespace in their files; only there may they be decrypted.
      namespaces: [names.ns.mine],
    },
  });
  let lastOutcome = '';
  for (const [i, spec] of revisions.entries()) {
    const takeover = new Map<string, string>();
    for (const o of spec.objects) {
      if (!o.takeover) continue;
      const object = objectOf(o, names);
      const resource = RESOURCES[o.kind]?.resource ?? 'widgets';
      const namespaced = o.kind !== 'ClusterRole' && o.kind !== 'Namespace';
      takeover.set(
        auditKey(
          resource,
          namespaced ? (object.metadata.namespace as string) : undefined,
          object.metadata.name as string,
        ),
        a,
      );
    }
    if (reachesOut(spec)) exercise.outbound++;
    if (spec.hostile.kind === 'laughs') exercise.laughs++;
    if (
      spec.hostile.kind === 'crd-pattern' ||
      (spec.hostile.kind === 'sops-regex' && spec.hostile.regex !== '^(data)$')
    )
      exercise.catastrophic++;
    if (spec.trigger) await policyInForce();
    await push(`invariants/${tag}/b`, await artifactFiles(spec, names));
    const { outcome, deletes } = await checked(`${b} revision ${i + 1}`, b, takeover, async () => {
      const r = await reconcile(b, deps());
      return `${r.outcome} ${r.reason}: ${r.message}`;
    });
    lastOutcome = outcome;
    if (i > 0) exercise.prunes += deletes;
    exercise.decrypts += await decrypted();
    if (spec.trigger && outcome.includes(`${tag}-quote`)) exercise.quoted++;
  }
  const succeeded = lastOutcome.startsWith('Succeeded');
  if (await cliStep(`sluice diff ${b}`, ['diff', b], !succeeded)) exercise.diffs++;
  if (await cliStep(`sluice status ${b} --json`, ['status', b, '--json'], false)) exercise.statuses++;
  for (const removed of [a, b]) {
    const { deletes } = await checked(`remove ${removed}`, removed, none, async () => {
      const result = await deleteDelivery(removed, deps());
      return `removed: ${JSON.stringify(result)}`;
    });
    exercise.removals += deletes;
  }

  violations.push(
    ...leaks({
      'DynamoDB item': await tableItems(new DynamoDBClient({}), env.bed.dynamodb.table, [a, b]),
      event: events,
      'log line': logged,
      'result, error or CLI output': outputs,
      'cluster object': await clusterObjects(
        env.bed.kubectl,
        env.bed.kube.kubeconfig,
        Object.values(names.ns),
        tag,
      ),
    }),
  );
  const connections = env.trap.connections() - trapBefore;
  if (connections > 0)
    violations.push({
      invariant: 'no-outbound',
      detail: `the loopback trap standing for the internet (${env.trap.address}) accepted ${connections} connection(s)`,
    });
  rmSync(dir, { recursive: true, force: true });
  return { steps, violations, exercise };
}
