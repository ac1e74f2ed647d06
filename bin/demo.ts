// `npm run demo`: the whole story on real local components, each step checked.
import { AppsV1Api, AutoscalingV2Api, CoreV1Api, KubeConfig, PolicyV1Api } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { componentsEnv, startComponents, stopComponents, type Components } from '../dev/components.ts';
import { parseCron } from '../functions/core/config/cron.ts';
import { dashboardUrl } from '../lib/dashboard.ts';
import {
  DEMO_NAMESPACE,
  demoConfig,
  freezeDay,
  releaseFiles,
  RELEASES,
  writeReleaseDir,
  type Release,
} from './demo/app.ts';
import { breakGlass, CHECKOUT_ALARM, createCheckoutAlarm, setCheckoutAlarm } from './demo/break-glass.ts';
import { bold, check, DemoFailure, heading, say, shell, sluice } from './demo/narrate.ts';
import {
  selfApprovalRefused,
  SELF_APPROVAL_GATE,
  twoPersonApproval,
  TWO_PERSON_GATE,
} from './demo/two-person.ts';

const STEPS = 13;
const DIR = resolve(process.env.SLUICE_DEMO_DIR ?? '.sluice/demo');
const keep = process.argv.includes('--keep');
const ns = DEMO_NAMESPACE;

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch {
    return false;
  }
}

/** The app's objects as they are in the cluster now. */
async function appState(kc: KubeConfig) {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const read = async <T>(fn: () => Promise<T>) => ((await exists(fn)) ? fn() : undefined);
  return {
    deployment: await read(() => apps.readNamespacedDeployment({ name: 'web', namespace: ns })),
    service: await read(() => core.readNamespacedService({ name: 'web', namespace: ns })),
    hpa: await read(() =>
      kc
        .makeApiClient(AutoscalingV2Api)
        .readNamespacedHorizontalPodAutoscaler({ name: 'web', namespace: ns }),
    ),
    pdb: await read(() =>
      kc.makeApiClient(PolicyV1Api).readNamespacedPodDisruptionBudget({ name: 'web', namespace: ns }),
    ),
  };
}

const showCluster = (components: Components) =>
  shell(
    components.kubectl,
    ['get', 'deployment,service,hpa,pdb', '-n', ns, '-L', 'sluice.io/delivery'],
    `kubectl get deployment,service,hpa,pdb -n ${ns} -L sluice.io/delivery`,
  );

/** The revision a held run asks to approve: `… --revision 1.0.0@sha256:…`. */
/** The digest of `<tag>@sha256:…`: what messages show first. */
const digestOf = (revision: string): string => revision.slice(revision.indexOf('@') + 1);

function revisionToApprove(output: string): string {
  const revision = /--revision (\S+@sha256:[a-f0-9]{64})/.exec(output)?.[1];
  if (!revision) throw new DemoFailure(`the held run did not name the revision to approve:\n${output}`);
  return revision;
}

/** Next `day` (e.g. Thursday) at 10:00 in Berlin, as an ISO time for `sluice gates --at`. */
function nextDayInBerlin(cron: string, now: Date): string {
  const firing = parseCron(cron, 'Europe/Berlin').next(now)!;
  return new Date(firing.getTime() + 10 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const approve = (revision: string, reason: string) =>
  sluice([
    'gate',
    'open',
    'sre-approval',
    '--revision',
    revision,
    '--for',
    '1h',
    '--reason',
    reason,
    '--by',
    'sre-alice',
  ]);

async function story(components: Components, work: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(components.kube.kubeconfig);
  const registry = `oci://${components.registry.host}/demo-app`;
  const configFile = join(work, 'sluice.yaml');
  const now = new Date();
  const freeze = freezeDay(now);
  writeFileSync(configFile, demoConfig(components.registry.host, components.kube.kubeconfig, now));
  const push = (release: Release) =>
    sluice([
      'push',
      writeReleaseDir(work, release.version, releaseFiles(release)),
      `${registry}:${release.version}`,
      '--revision',
      `main@sha1:${release.version}`,
    ]);

  heading(
    2,
    STEPS,
    'Push release 1.0.0 (Deployment, Service, HPA, PDB) to the registry as a Flux-format artifact',
  );
  await shell(components.kubectl, ['create', 'namespace', ns], `kubectl create namespace ${ns}`);
  await push(RELEASES[0]!);

  heading(
    3,
    STEPS,
    "Register a delivery with prune and three gates: 'change-freeze', 'sre-approval' and the alarm gate 'checkout-healthy'",
  );
  await createCheckoutAlarm();
  await shell('cat', [configFile], 'cat sluice.yaml');
  await sluice(['register', '-f', configFile]);
  await sluice(['gates']);

  heading(4, STEPS, "Reconcile: 'sre-approval' is closed by default, so nothing is applied yet");
  const held = await sluice(['reconcile', 'demo'], 4);
  check(held.includes("waiting for gate 'sre-approval'"), 'held by sre-approval', held);
  const first = revisionToApprove(held);
  check(first.startsWith('1.0.0@sha256:'), `the run names the revision to approve: ${first}`, held);
  const nothing = await appState(kc);
  check(!nothing.deployment && !nothing.pdb, 'nothing applied while the gate is closed', 'objects exist');
  const dashboard = '<stack>-Sluice-<region>';
  say(
    `deployed with the construct, this run publishes a 'Release Waiting' event (delivery demo, ${first}, gate sre-approval, how to approve) to the event bus and the approval topic, and the CloudWatch dashboard ${dashboard} shows it: ${dashboardUrl('<region>', dashboard)} (a stack output)`,
  );

  heading(5, STEPS, 'An SRE approves exactly that revision, for one hour: the delivery reconciles at once');
  await approve(first, 'CHG-1001 first release');
  await showCluster(components);
  const v1 = await appState(kc);
  check(
    !!(v1.deployment && v1.service && v1.hpa && v1.pdb),
    'four objects applied: Deployment, Service, HPA, PDB',
    `missing: ${Object.entries(v1)
      .filter(([, o]) => !o)
      .map(([k]) => k)
      .join(', ')}`,
  );

  heading(6, STEPS, 'Push 1.1.0 without the PDB: the approval was for 1.0.0, so 1.1.0 waits for its own');
  await push(RELEASES[1]!);
  const unapproved = await sluice(['reconcile', 'demo'], 4);
  const second = revisionToApprove(unapproved);
  check(
    unapproved.includes(
      `${digestOf(second)} (tag 1.1.0) awaits approval at gate 'sre-approval' (open only for ${digestOf(first)}`,
    ),
    '1.1.0 held although the gate is open: the approval names 1.0.0',
    unapproved,
  );
  check(!!(await appState(kc)).pdb, 'nothing pruned before the approval', 'the PDB is gone');
  await approve(second, 'CHG-1002 drop the PDB');
  await showCluster(components);
  const v2 = await appState(kc);
  check(!v2.pdb, 'approved: PodDisruptionBudget web pruned', 'it is still there');
  const untouched = (['deployment', 'service', 'hpa'] as const).filter(
    (kind) => v2[kind]?.metadata?.resourceVersion === v1[kind]?.metadata?.resourceVersion,
  );
  check(
    untouched.length === 3,
    'Deployment, Service and HPA not written (same resourceVersion)',
    `only ${untouched.join(', ')} unchanged`,
  );

  heading(
    7,
    STEPS,
    `A change freeze: the cron closes 'change-freeze' every ${freeze.name}, and an incident closes it now`,
  );
  const frozenDay = nextDayInBerlin(freeze.cron, now);
  const planned = await sluice(['gates', 'change-freeze', '--at', frozenDay]);
  check(
    /change-freeze\s+closed/.test(planned),
    `closed on ${freeze.name} by its schedule alone (computed from the cron: no invocation needed)`,
    planned,
  );
  const closed = await sluice([
    'gate',
    'close',
    'change-freeze',
    '--for',
    '24h',
    '--reason',
    'INC-42',
    '--by',
    'oncall-bob',
  ]);
  check(closed.includes("gate 'change-freeze' is closed"), "'change-freeze' closed", closed);

  heading(
    8,
    STEPS,
    'Push 1.2.0 (nginx 1.28), approved by the SRE; someone deletes the Service by hand; reconcile under the freeze',
  );
  await push(RELEASES[2]!);
  const third = revisionToApprove(await sluice(['reconcile', 'demo'], 4));
  await approve(third, 'CHG-1003 nginx 1.28');
  await shell(
    components.kubectl,
    ['delete', 'service', 'web', '-n', ns],
    `kubectl delete service web -n ${ns}`,
  );
  const frozen = await sluice(['reconcile', 'demo'], 4);
  check(
    frozen.includes('revision 1.2.0@sha256:') &&
      frozen.includes("waiting for gate 'change-freeze' (closed; opens at"),
    'the new revision is held, with the reason and when the gate opens',
    frozen,
  );
  await sluice(['status']);
  const during = await appState(kc);
  const image = during.deployment?.spec?.template.spec?.containers[0]?.image;
  check(image === 'nginx:1.27', 'the cluster still runs 1.1.0 (nginx:1.27)', `image is ${image}`);
  check(!!during.service, 'the deleted Service was re-created from 1.1.0 (drift corrected)', 'it is missing');

  heading(9, STEPS, "The incident is over: 'change-freeze' opens and the approved 1.2.0 goes out at once");
  const opened = await sluice([
    'gate',
    'open',
    'change-freeze',
    '--reason',
    'INC-42 resolved',
    '--by',
    'oncall-bob',
  ]);
  check(opened.includes('reconciling demo'), 'the waiting delivery reconciled at once', opened);
  await showCluster(components);
  const released = (await appState(kc)).deployment;
  check(
    released?.spec?.template.spec?.containers[0]?.image === 'nginx:1.28',
    '1.2.0 applied (nginx:1.28)',
    `image is ${released?.spec?.template.spec?.containers[0]?.image}`,
  );

  heading(10, STEPS, 'Who did what: the audit trail of both gates');
  await sluice(['gate', 'history', 'change-freeze']);
  await sluice(['gate', 'history', 'sre-approval']);

  heading(
    11,
    STEPS,
    "The checkout error-rate alarm fires: 'checkout-healthy' holds every release; break-glass lets the hotfix through",
  );
  await setCheckoutAlarm('ALARM', 'Threshold Crossed: 5xx rate 7.4% (> 2%) for 3 minutes');
  const alarmed = await sluice(['gates', 'checkout-healthy']);
  check(
    /checkout-healthy\s+closed/.test(alarmed) && alarmed.includes(CHECKOUT_ALARM),
    `'checkout-healthy' closed while ${CHECKOUT_ALARM} is in ALARM (read from CloudWatch at evaluation; deployed, the alarm's state change reconciles held deliveries when it clears)`,
    alarmed,
  );
  await push(RELEASES[3]!);
  const hotfixHeld = await sluice(['reconcile', 'demo'], 4);
  const hotfix = revisionToApprove(hotfixHeld);
  check(
    hotfix.startsWith('1.2.1@sha256:') && hotfixHeld.includes("gate 'checkout-healthy'"),
    'the hotfix 1.2.1 is held by the alarm gate (and awaits its SRE approval)',
    hotfixHeld,
  );
  await breakGlass(components.sts.endpoint, 'demo', hotfix);
  await sluice(['reconcile', 'demo']);
  const patched = (await appState(kc)).deployment?.spec?.template.spec?.containers[0]?.image;
  check(
    patched === 'nginx:1.28.1',
    'the hotfix applied (nginx:1.28.1) through the closed gates',
    `image is ${patched}`,
  );
  const overridden = await sluice(['gates', 'checkout-healthy']);
  check(
    overridden.includes('OVERRIDE') && /checkout-healthy\s+closed/.test(overridden),
    "'sluice gates' shows the override, who made it and when it ends; the gate itself stays closed",
    overridden,
  );
  const audit = await sluice(['gate', 'history', 'checkout-healthy']);
  check(
    /OVERRIDE\s+sha256:[a-f0-9]+ \(tag "1\.2\.1" claimed, not checked against the registry\).*alice@example\.com.*INC-77 hotfix/.test(
      audit,
    ),
    'the audit row: OVERRIDE, by alice, with the reason',
    audit,
  );
  await setCheckoutAlarm('OK', 'Threshold Crossed: 5xx rate 0.2% (≤ 2%)');
  const cleared = await sluice(['gates', 'checkout-healthy']);
  check(
    /checkout-healthy\s+open/.test(cleared),
    "the alarm clears: 'checkout-healthy' is open again",
    cleared,
  );

  heading(
    12,
    STEPS,
    'A two-person rule: approvals whose identities AWS verifies (STS, here its local stand-in)',
  );
  await twoPersonApproval(components.sts.endpoint, third);
  await sluice(['gate', 'history', TWO_PERSON_GATE]);
  say('No approving your own push (preventSelfApproval):');
  await selfApprovalRefused(components.sts.endpoint, third);
  await sluice(['gate', 'history', SELF_APPROVAL_GATE]);

  heading(13, STEPS, 'Remove the delivery: everything it created is deleted');
  await sluice(['unregister', 'demo']);
  await showCluster(components);
  const gone = await appState(kc);
  check(!gone.deployment && !gone.service && !gone.hpa, 'all objects of the delivery deleted', 'some remain');
  await shell(
    components.kubectl,
    ['delete', 'namespace', ns, '--wait=false'],
    `kubectl delete namespace ${ns}`,
  );
}

async function main(): Promise<void> {
  const started = Date.now();
  process.stdout.write(
    `${bold('sluice demo')}: an artifact pushed, applied, pruned, held by a gate and released, on real local components.\n`,
  );
  heading(
    1,
    STEPS,
    'Start the local components: kube-apiserver + etcd, OCI registry, ECR API, DynamoDB Local',
  );
  await stopComponents(DIR); // a fresh start every time: leftovers of a --keep run go
  const components = await startComponents(DIR);
  Object.assign(process.env, componentsEnv(components));
  say(
    `kube-apiserver ${components.kube.server}, registry ${components.registry.host}, DynamoDB ${components.dynamodb.endpoint}`,
  );
  const work = mkdtempSync(join(tmpdir(), 'sluice-demo-'));
  try {
    await story(components, work);
    process.stdout.write(
      `\n${bold(`demo complete in ${((Date.now() - started) / 1000).toFixed(0)}s: every step did what it said.`)}\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (!keep) await stopComponents(DIR);
    else
      say(`local components left running: . ${DIR}/env   (stop: SLUICE_DEV_DIR=${DIR} npx sluice dev down)`);
  }
}

const run = process.argv.includes('--fleet')
  ? async () =>
      (await import('./demo/fleet.ts')).fleetDemo(
        resolve(process.env.SLUICE_DEMO_DIR ?? '.sluice/demo-fleet'),
        keep,
      )
  : main;

run().catch((error: unknown) => {
  process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
