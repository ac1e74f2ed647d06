// `npm run demo -- --fleet`: one revision through three clusters in waves, a halt and a rollback,
// on real local components (three kube-apiservers on one etcd), each step checked.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClusters, stopClusters, type LocalCluster } from '../../dev/clusters.ts';
import {
  componentsEnv,
  contextsKubeconfigYaml,
  startComponents,
  stopComponents,
  type Components,
} from '../../dev/components.ts';
import { stopSpawnedIn } from '../../dev/processes.ts';
import { poll, systemClock } from '../../functions/core/clock.ts';
import { tableFromEnvironment } from '../../functions/core/environment.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { readRolloutState } from '../../functions/core/reconcile/rollout-target.ts';
import { rolloutSummary, type RolloutState } from '../../functions/core/rollout/state.ts';
import { getRollout } from '../../functions/core/store/rollouts.ts';
import {
  CANARY_SOAK,
  CLUSTERS,
  EU_MEMORY_CEILING,
  EU_MEMORY_POLICY,
  FLEET_NAMESPACE,
  FLEET_RELEASES,
  fleetConfig,
  fleetReleaseFiles,
  ROLLOUT,
  WAVE_GATE,
  type FleetRelease,
} from './fleet-app.ts';
import { writeReleaseDir } from './app.ts';
import { checkImages, kubectlOn, showClusters } from './fleet-clusters.ts';
import { startReconcileFunction, type LocalReconcileFunction } from './fleet-function.ts';
import { bold, check, DemoFailure, heading, say, shell, sluice } from './narrate.ts';

const STEPS = 7;
const REPOSITORY = 'fleet-app';
/** How long the demo waits for a state it expects (the machine may be loaded). */
const WAIT_MS = 90_000;

/** The rollout's state now, computed from the table as `sluice rollout status` does. */
async function rolloutNow(): Promise<RolloutState> {
  const db = tableFromEnvironment();
  const rollout = await getRollout(db, ROLLOUT);
  if (!rollout) throw new DemoFailure(`rollout '${ROLLOUT}' is not registered`);
  return readRolloutState(rollout, { db }, new Date());
}

/** Waits (polling the table, never a fixed sleep) until the rollout is as `what` says. */
async function waitForRollout(what: string, until: (state: RolloutState) => boolean): Promise<RolloutState> {
  let state = await rolloutNow();
  const reached = await poll({
    clock: systemClock,
    every: 250,
    timeout: WAIT_MS,
    until: async () => until((state = await rolloutNow())),
  });
  check(reached, what, `after ${WAIT_MS / 1000}s: ${rolloutSummary(state)}`);
  return state;
}

const memberPhase = (state: RolloutState, delivery: string) =>
  state.waves.flatMap((wave) => wave.members).find((member) => member.name === delivery)?.phase;
const onRevision = (state: RolloutState, version: string) =>
  state.generation?.revision.startsWith(`${version}@sha256:`) === true;
const gated = (state: RolloutState) => state.waves[1]?.phase === 'Gated';

/** What the reconcile function did, one line a run, as its log would say. */
function reportRun(result: ReconcileResult): void {
  const short = result.message.replace(/sha256:([a-f0-9]{12})[a-f0-9]{52}/g, 'sha256:$1…');
  const message = short.length > 140 ? `${short.slice(0, 140)}…` : short;
  say(`  [reconcile function] ${result.delivery}: ${result.outcome} (${result.reason}): ${message}`);
}

async function story(components: Components, fn: LocalReconcileFunction, kubeconfig: string, work: string) {
  const registry = components.registry.host;
  const kubectl = components.kubectl;
  const configFile = join(work, 'sluice.yaml');
  writeFileSync(configFile, fleetConfig(registry, kubeconfig));
  const push = async (release: FleetRelease) => {
    await sluice([
      'push',
      writeReleaseDir(work, release.version, fleetReleaseFiles(release)),
      `oci://${registry}/${REPOSITORY}:${release.version}`,
      '--revision',
      `main@sha1:${release.version}`,
    ]);
    say(
      `EventBridge delivers the ECR push event of ${REPOSITORY}:${release.version} to the reconcile function`,
    );
    fn.pushed(REPOSITORY, release.version);
  };
  const approveForEu = async (revision: string, reason: string) =>
    sluice(['gate', 'open', WAVE_GATE, '--revision', revision, '--reason', reason, '--by', 'rm-carol']);
  const [v1, v2, v3] = FLEET_RELEASES as [FleetRelease, FleetRelease, FleetRelease];
  const everywhere = (image: string) => ({ canary: image, 'eu-west': image, 'us-east': image });
  const showAndCheck = async (...args: Parameters<typeof checkImages>) => {
    await showClusters(kubectl);
    await checkImages(...args);
  };
  const canaryAhead = (taken: FleetRelease, kept: FleetRelease) =>
    showAndCheck(
      kubeconfig,
      { canary: taken.image, 'eu-west': kept.image, 'us-east': kept.image },
      `canary runs ${taken.image}; eu-west and us-east keep ${kept.image}`,
    );

  heading(
    2,
    STEPS,
    `Register a delivery per cluster and the rollout '${ROLLOUT}': canary (soak ${CANARY_SOAK}), then eu-* (gate '${WAVE_GATE}'), then '*'`,
  );
  for (const cluster of CLUSTERS) await kubectlOn(kubectl, cluster, ['create', 'namespace', FLEET_NAMESPACE]);
  await shell('cat', [configFile], 'cat sluice.yaml');
  await sluice(['register', '-f', configFile]);

  heading(3, STEPS, `Push ${v1.version} (${v1.image}): the first revision goes through the waves too`);
  await push(v1);
  let state = await waitForRollout(
    `canary took ${v1.version}, soaking ${CANARY_SOAK}`,
    (s) => onRevision(s, v1.version) && memberPhase(s, 'canary') === 'Soaking',
  );
  await approveForEu(state.generation!.revision, 'CHG-2000 first release');
  state = await waitForRollout(
    `${v1.version} complete in every wave`,
    (s) => onRevision(s, v1.version) && s.phase === 'Complete',
  );
  await checkImages(kubeconfig, everywhere(v1.image), `every cluster runs ${v1.version} (${v1.image})`);

  heading(4, STEPS, `Push ${v2.version} (${v2.image}): the canary takes it and soaks; the other waves wait`);
  await push(v2);
  state = await waitForRollout(
    `canary took ${v2.version} and soaks`,
    (s) => onRevision(s, v2.version) && memberPhase(s, 'canary') === 'Soaking',
  );
  const soakEnd = Date.parse(state.nextAt ?? '');
  const soaking = await sluice(['rollout', 'status', ROLLOUT]);
  // On a loaded machine the CLI may start after the 8 s soak ended: then it shows what followed.
  const soakOver = Date.now() >= soakEnd;
  check(
    /wave 1 of 3 soaking/.test(soaking) || (soakOver && /wave 2 of 3 gated/.test(soaking)),
    soakOver
      ? `'sluice rollout status' shows wave 1 soaking, or (it ran after the soak's end at ${state.nextAt}) wave 2 at its gate`
      : `'sluice rollout status' shows wave 1 soaking until its end`,
    soaking,
  );
  await canaryAhead(v2, v1);

  heading(
    5,
    STEPS,
    `The soak ends: a one-time schedule wakes eu-west, held by '${WAVE_GATE}'; a release manager approves ${v2.version}`,
  );
  state = await waitForRollout(
    `wave 2 held by gate '${WAVE_GATE}' once the soak ended`,
    (s) => onRevision(s, v2.version) && gated(s),
  );
  const waiting = await sluice(['rollout', 'status', ROLLOUT]);
  check(
    waiting.includes(`held by gate '${WAVE_GATE}'`),
    `'sluice rollout status' names the gate holding wave 2`,
    waiting,
  );
  const approved = await approveForEu(state.generation!.revision, 'CHG-2001 nginx 1.28');
  check(
    approved.includes('eu-west: Succeeded') && approved.includes('us-east: Succeeded'),
    'approved: eu-west takes it at once, and us-east (the last wave) follows it',
    approved,
  );
  await waitForRollout(
    `${v2.version} complete in every wave`,
    (s) => onRevision(s, v2.version) && s.phase === 'Complete',
  );
  await sluice(['rollout', 'status', ROLLOUT]);
  await showAndCheck(kubeconfig, everywhere(v2.image), `every cluster runs ${v2.version} (${v2.image})`);

  heading(
    6,
    STEPS,
    `Push ${v3.version} (${v3.image}, memory limit ${v3.memory}): eu-west's own policy allows at most ${EU_MEMORY_CEILING}`,
  );
  await push(v3);
  state = await waitForRollout(
    `canary took ${v3.version}, soaked, and wave 2 waits for its approval`,
    (s) => onRevision(s, v3.version) && gated(s),
  );
  await approveForEu(state.generation!.revision, 'CHG-2002 nginx 1.29');
  state = await waitForRollout(
    'the rollout halted on eu-west',
    (s) => onRevision(s, v3.version) && s.phase === 'Halted',
  );
  check(
    state.halt?.delivery === 'eu-west' && state.halt.why.includes('memory'),
    `halted in wave ${state.halt?.wave}: eu-west's API server refused the Deployment (${EU_MEMORY_CEILING} ceiling)`,
    JSON.stringify(state.halt),
  );
  const halted = await sluice(['rollout', 'status', ROLLOUT]);
  check(
    halted.includes('halted in wave 2 (recorded by sluice at') &&
      halted.includes("delivery 'eu-west' failed at 1.2.0@sha256:") &&
      halted.includes(`to do: look at delivery 'eu-west'`) &&
      halted.includes(`sluice rollout rollback ${ROLLOUT}`),
    "'sluice rollout status' names the delivery, why, and what to do",
    halted,
  );
  const held = await sluice(['reconcile', 'us-east'], 4);
  check(
    held.includes("is halted: delivery 'eu-west' failed at 1.2.0@sha256:"),
    'us-east (wave 3) is held: it keeps 1.1.0',
    held,
  );
  await canaryAhead(v3, v2);

  heading(
    7,
    STEPS,
    `Roll back: every member returns to ${v2.version} at once; ${v3.version} is not rolled out again`,
  );
  const rolledBack = await sluice([
    'rollout',
    'rollback',
    ROLLOUT,
    '--reason',
    `INC-88: ${v3.version} exceeds eu-west's memory ceiling`,
    '--by',
    'rm-carol',
  ]);
  check(
    rolledBack.includes(`rollout '${ROLLOUT}': rolled back by rm-carol (unverified)`),
    'the rollback recorded, with who and why',
    rolledBack,
  );
  const rejected = state.generation!.digest;
  state = await waitForRollout(
    `the rollback to ${v2.version} complete`,
    (s) => s.generation?.kind === 'rollback' && onRevision(s, v2.version) && s.phase === 'Complete',
  );
  check(
    state.generation?.rejected?.includes(rejected) === true,
    `${v3.version} is marked rejected: the source's newest tag will not start it again`,
    JSON.stringify(state.generation),
  );
  await sluice(['rollout', 'status', ROLLOUT]);
  await showAndCheck(
    kubeconfig,
    everywhere(v2.image),
    `every cluster runs ${v2.version} (${v2.image}) again`,
  );
}

/** Starts the components and two more API servers; writes the fleet's kubeconfig (a context per cluster). */
async function startFleet(dir: string): Promise<{ components: Components; clusters: LocalCluster[] }> {
  const clustersDir = join(dir, 'clusters');
  // A fresh start every time: leftovers of a --keep run go.
  for (const cluster of CLUSTERS) await stopSpawnedIn(join(clustersDir, cluster));
  await stopComponents(dir);
  const components = await startComponents(dir);
  try {
    return { components, clusters: await startClusters(components, CLUSTERS, clustersDir) };
  } catch (error) {
    await stopComponents(dir);
    throw error;
  }
}

/** eu-west's admission policy, applied and in force (a server-side dry-run of a 1Gi Deployment is refused). */
async function applyEuPolicy(kubectl: string, work: string): Promise<void> {
  const file = join(work, 'eu-west-policy.yaml');
  writeFileSync(file, EU_MEMORY_POLICY);
  await shell(
    kubectl,
    ['--context', 'eu-west', 'apply', '-f', file],
    'kubectl --context eu-west apply -f eu-west-policy.yaml',
  );
  const probe = join(work, 'probe', 'deploy');
  mkdirSync(probe, { recursive: true });
  writeFileSync(
    join(probe, 'deployment.yaml'),
    fleetReleaseFiles(FLEET_RELEASES[2]!)['deployment.yaml']!.replace(
      `namespace: ${FLEET_NAMESPACE}`,
      'namespace: default',
    ),
  );
  const refused = await poll({
    clock: systemClock,
    every: 250,
    timeout: WAIT_MS,
    until: async () => {
      const run = spawnSync(kubectl, ['--context', 'eu-west', 'apply', '--dry-run=server', '-f', probe], {
        encoding: 'utf8',
      });
      return run.status !== 0 && run.stderr.includes('memory-ceiling');
    },
  });
  check(
    refused,
    `eu-west's policy in force: a Deployment asking for more than ${EU_MEMORY_CEILING} is refused`,
    'a dry-run was still accepted',
  );
}

export async function fleetDemo(dir: string, keep: boolean): Promise<void> {
  const started = Date.now();
  process.stdout.write(
    `${bold('sluice fleet demo')}: one revision through three clusters in waves, a halt and a rollback, on real local components.\n`,
  );
  heading(
    1,
    STEPS,
    `Start the local components and three clusters: ${CLUSTERS.join(', ')} (kube-apiservers on one etcd)`,
  );
  const { components, clusters } = await startFleet(dir);
  const work = mkdtempSync(join(tmpdir(), 'sluice-fleet-demo-'));
  const kubeconfig = join(dir, 'fleet.kubeconfig');
  writeFileSync(kubeconfig, contextsKubeconfigYaml(clusters), { mode: 0o600 });
  Object.assign(process.env, componentsEnv(components), { KUBECONFIG: kubeconfig });
  for (const cluster of clusters) say(`cluster ${cluster.name}: ${cluster.server}`);
  say(
    `registry ${components.registry.host}, DynamoDB ${components.dynamodb.endpoint}; kubeconfig with a context per cluster`,
  );
  // The function's log (plans, races it settled) stays out of the story: its results are shown.
  const fn = await startReconcileFunction(reportRun, () => {});
  say(
    'the reconcile function runs here as deployed: the real handler, invoked by ECR push events, by its own follow-ups and by one-time schedules (fired at the whole second here; EventBridge Scheduler fires at the whole minute)',
  );
  try {
    await applyEuPolicy(components.kubectl, work);
    await story(components, fn, kubeconfig, work);
    process.stdout.write(
      `\n${bold(`fleet demo complete in ${((Date.now() - started) / 1000).toFixed(0)}s: every step did what it said.`)}\n`,
    );
  } finally {
    await fn.stop();
    rmSync(work, { recursive: true, force: true });
    if (!keep) {
      await stopClusters(clusters, components);
      await stopComponents(dir);
    } else
      say(
        `left running: . ${dir}/env (stop: SLUICE_DEV_DIR=${dir} npx sluice dev down; kill ${clusters
          .slice(1)
          .map((c) => c.pid)
          .join(' ')})`,
      );
  }
}
