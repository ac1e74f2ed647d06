// `npm run lambda-check`: the gate and reconcile bundles, built as the package ships them, run under
// the real AWS Lambda runtime interface: aws-lambda-rie (the Runtime Interface Emulator, built from its
// Go module) in front of aws-lambda-ric (the Node.js runtime interface client), on the local
// components. Not part of `npm test`: its first run compiles native code and may need apt-get.
//
// What the RIE can honestly exercise: it invokes with a fixed ARN,
// arn:aws:lambda:us-east-1:012345678912:function:<AWS_LAMBDA_FUNCTION_NAME>, so naming the gate
// function `sluice-gate:rollouts` makes it invoke as the rollouts alias does in AWS; the proof is
// signed for that function by a test identity and verified by the STS stand-in. Lambda Invoke and
// EventBridge PutEvents (no local service exists) are answered by a recorder in this process, so
// the events the functions publish are checked too. No Scheduler: the one-time schedule variables
// are left unset, as the paths run here schedule nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ECRClient } from '@aws-sdk/client-ecr';
import { build } from 'esbuild';
import { proveRequest } from './commands/signed-gate-request.ts';
import { systemClock } from '../functions/core/clock.ts';
import { parseDelivery, parseRollout } from '../functions/core/config/index.ts';
import { tableFromEnvironment } from '../functions/core/environment.ts';
import { rolloutActionDigest, ROLLOUTS_ALIAS } from '../functions/core/gates/rollout-action-event.ts';
import { ecrCredentials, pushArtifact } from '../functions/core/oci/index.ts';
import { RUNTIME_ENV } from '../functions/core/runtime-contract.ts';
import { putDelivery } from '../functions/core/store/deliveries.ts';
import { putRollout } from '../functions/core/store/rollouts.ts';
import { packageBundleOptions, type HandlerName } from '../lib/bundle-options.ts';
import { componentsEnv, startComponents, stopComponents, type Components } from '../dev/components.ts';
import { freePort, onFreshPortsIfTaken, startDaemon, stopDaemon, waitUntilReady } from '../dev/processes.ts';
import { lambdaRicEntry, lambdaRieBinary } from '../dev/provision.ts';
import { TEST_IDENTITIES } from '../dev/sigv4-identity.ts';
import { accountOf } from '../functions/core/access/signers.ts';
import { IDENTITY_CENTER_APPROVER } from './demo/grants.ts';
import { LAMBDA_RIC_PACKAGE, LAMBDA_RIE_VERSION } from '../dev/versions.ts';

const DIR = resolve(process.env.SLUICE_LAMBDA_CHECK_DIR ?? '.sluice/lambda-check');
/** The account and region aws-lambda-rie puts in every invokedFunctionArn. */
const RIE_ARN_PREFIX = 'arn:aws:lambda:us-east-1:012345678912:function:';
const RECONCILE_NAME = 'sluice-reconcile';
const GATE_NAME = 'sluice-gate';
/** How long one invocation may take (the functions' own timeout under the RIE is set to it). */
const INVOKE_TIMEOUT_S = 180;

const checks: { readonly ok: boolean; readonly line: string }[] = [];
function check(ok: boolean, line: string, detail?: unknown): void {
  checks.push({ ok, line });
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${line}\n`);
  if (!ok && detail !== undefined) process.stdout.write(`     got: ${JSON.stringify(detail)}\n`);
}

/** One AWS API call the functions made to the recorder. */
interface Recorded {
  readonly target: string;
  readonly path: string;
  readonly body: string;
}

/**
 * Answers Lambda Invoke (202) and EventBridge PutEvents as the services do, and keeps each request:
 * there is no local Lambda or EventBridge to call.
 */
async function startRecorder(): Promise<{ url: string; calls: Recorded[]; server: Server }> {
  const calls: Recorded[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target'] ?? '');
      const path = request.url ?? '/';
      calls.push({ target, path, body: Buffer.concat(chunks).toString('utf8') });
      if (/^\/2015-03-31\/functions\/[^/]+\/invocations/.test(path)) response.writeHead(202).end();
      else if (target === 'AWSEvents.PutEvents')
        response
          .writeHead(200, { 'content-type': 'application/x-amz-json-1.1' })
          .end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: String(calls.length) }] }));
      else response.writeHead(400).end(JSON.stringify({ message: `not recorded: ${target || path}` }));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the recorder has no address');
  return { url: `http://127.0.0.1:${address.port}`, calls, server };
}

/** The runtime interface: aws-lambda-rie and aws-lambda-ric's entry point, provisioned. */
interface Runtime {
  readonly rie: string;
  readonly ric: string;
}

/** A function under aws-lambda-rie: its invoke URL, its log and its pid (the RIE's process group). */
interface RieFunction {
  readonly name: string;
  readonly url: string;
  readonly log: string;
  readonly pid: number;
}

const accepts = (port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), done(true)));
    socket.once('error', () => done(false));
  });

/** Starts aws-lambda-rie on 127.0.0.1 running `bundle/index.mjs`'s `handler` through aws-lambda-ric. */
async function startRie(
  runtime: Runtime,
  started: number[],
  functionName: string,
  bundle: string,
  env: Record<string, string>,
  memoryMb: number,
): Promise<RieFunction> {
  return onFreshPortsIfTaken(async () => {
    const [port, apiPort] = [await freePort(), await freePort()];
    const log = join(DIR, `rie-${functionName.replace(/\W/g, '-')}.log`);
    writeFileSync(log, '');
    const pid = startDaemon(
      runtime.rie,
      [
        '--runtime-api-address',
        `127.0.0.1:${apiPort}`,
        '--runtime-interface-emulator-address',
        `127.0.0.1:${port}`,
        process.execPath,
        runtime.ric,
        'index.handler',
      ],
      log,
      {
        cwd: bundle,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          LAMBDA_TASK_ROOT: bundle,
          AWS_LAMBDA_FUNCTION_NAME: functionName,
          AWS_LAMBDA_FUNCTION_TIMEOUT: String(INVOKE_TIMEOUT_S),
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
          ...env,
        },
      },
    );
    started.push(pid);
    await waitUntilReady({
      name: `aws-lambda-rie (${functionName})`,
      pid,
      logFile: log,
      ready: () => accepts(port),
    });
    return {
      name: functionName,
      url: `http://127.0.0.1:${port}/2015-03-31/functions/function/invocations`,
      log,
      pid,
    };
  });
}

/** Invokes through the RIE's invoke endpoint; a function error comes back as `{errorType, errorMessage}`. */
async function invoke(fn: RieFunction, event: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(fn.url, {
    method: 'POST',
    body: JSON.stringify(event),
    signal: AbortSignal.timeout((INVOKE_TIMEOUT_S + 30) * 1000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: kept as text */
  }
  return { status: response.status, body };
}

type Run = {
  outcome?: string;
  reason?: string;
  rollout?: string;
  revision?: string;
  message?: string;
};

async function pushRelease(c: Components, repository: string, value: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lambda-check-'));
  try {
    writeFileSync(
      join(dir, 'cm.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  value: "${value}"\n`,
    );
    const pushed = await pushArtifact(dir, `oci://${c.registry.host}/${repository}:main`, {
      credentials: ecrCredentials(new ECRClient({}), systemClock),
    });
    return pushed.digest;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const kubectl = (c: Components, args: string[]) =>
  execFileSync(c.kubectl, args, { env: { ...process.env, KUBECONFIG: c.kube.kubeconfig }, encoding: 'utf8' });

const configMapValue = (c: Components, namespace: string) =>
  kubectl(c, ['get', 'configmap', 'app', '-n', namespace, '-o', 'jsonpath={.data.value}']);

/** The handler bundles as `npm run build` makes them (lib/bundle-options.ts). */
async function buildBundles(): Promise<Record<'reconcile' | 'gate', string>> {
  const dirs = { reconcile: join(DIR, 'bundles', 'reconcile'), gate: join(DIR, 'bundles', 'gate') };
  rmSync(join(DIR, 'bundles'), { recursive: true, force: true });
  await Promise.all(
    (Object.entries(dirs) as [HandlerName, string][]).map(([name, dir]) =>
      build(packageBundleOptions(name, dir)),
    ),
  );
  return dirs;
}

/** The JSON log lines (Powertools) a function wrote to its RIE's log. */
function logLines(fn: RieFunction): Record<string, unknown>[] {
  return readFileSync(fn.log, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

async function scenario(
  runtime: Runtime,
  c: Components,
  started: number[],
  recorder: { url: string; calls: Recorded[] },
) {
  const bundles = await buildBundles();
  const db = tableFromEnvironment();
  const repository = 'lambda-check/app';
  const [canary, rest, rolloutName] = ['lc-canary', 'lc-rest', 'lc-fleet'];
  const v1 = await pushRelease(c, repository, 'v1');
  const source = { url: `oci://${c.registry.host}/${repository}`, tag: 'main', provider: 'aws' };
  for (const name of [canary, rest]) {
    kubectl(c, ['create', 'namespace', name]);
    await putDelivery(
      db,
      parseDelivery({ name, source, cluster: { kubeconfig: c.kube.kubeconfig }, targetNamespace: name }),
      new Date(),
    );
  }
  await putRollout(
    db,
    parseRollout({ name: rolloutName, source, waves: [{ deliveries: [canary] }, { deliveries: [rest] }] }),
    new Date(),
  );

  // What the construct sets (lib/sluice.ts), the layer's kubectl path replaced by the local one.
  const common = {
    ...componentsEnv(c),
    NODE_OPTIONS: '--enable-source-maps',
    AWS_ENDPOINT_URL_LAMBDA: recorder.url,
    AWS_ENDPOINT_URL_EVENTBRIDGE: recorder.url,
    [RUNTIME_ENV.table]: c.dynamodb.table,
    [RUNTIME_ENV.eventBus]: 'sluice-lambda-check',
  };
  const reconcileFn = await startRie(
    runtime,
    started,
    RECONCILE_NAME,
    bundles.reconcile,
    { ...common, [RUNTIME_ENV.kubectl]: c.kubectl },
    1024,
  );
  // Named with the alias: the RIE then invokes as `…:function:sluice-gate:rollouts`, the rollouts entry.
  const gateFn = await startRie(
    runtime,
    started,
    `${GATE_NAME}:${ROLLOUTS_ALIAS}`,
    bundles.gate,
    {
      ...common,
      [RUNTIME_ENV.reconcileFunction]: `${RIE_ARN_PREFIX}${RECONCILE_NAME}`,
      // As grantRolloutControl(alice's Identity Center role) would set them: alice may act, in her account.
      [RUNTIME_ENV.trustedAccounts]: JSON.stringify([accountOf(TEST_IDENTITIES.alice.arn)]),
      [RUNTIME_ENV.entryGrantees]: JSON.stringify({ [ROLLOUTS_ALIAS]: [IDENTITY_CENTER_APPROVER] }),
    },
    512,
  );

  const reconcileOne = async (name: string): Promise<Run | undefined> => {
    const { status, body } = await invoke(reconcileFn, { delivery: name });
    if (status !== 200 || !Array.isArray(body) || body.length !== 1) {
      check(false, `reconcile {"delivery":"${name}"} answered one result`, { status, body });
      return undefined;
    }
    return body[0] as Run;
  };

  // (a) reconciles of rollout members: each answer names the rollout.
  const first = await reconcileOne(canary);
  check(
    first?.outcome === 'Succeeded' && first.rollout === rolloutName && first.revision?.endsWith(v1) === true,
    `reconcile ${canary} (wave 1): Succeeded at v1, rollout '${first?.rollout}'`,
    first,
  );
  const invokedNext = recorder.calls.some(
    (call) =>
      call.path.includes(RECONCILE_NAME) && call.path.endsWith('/invocations') && call.body.includes(rest),
  );
  check(
    invokedNext,
    `the canary's run invoked the reconcile function for wave 2 (${rest}) through Lambda Invoke`,
    recorder.calls.map((call) => call.target || call.path),
  );
  const second = await reconcileOne(rest);
  check(
    second?.outcome === 'Succeeded' && second.rollout === rolloutName,
    `reconcile ${rest} (wave 2): Succeeded, rollout '${second?.rollout}'`,
    second,
  );
  const v2 = await pushRelease(c, repository, 'v2');
  const third = await reconcileOne(canary);
  check(
    third?.outcome === 'Succeeded' &&
      third.rollout === rolloutName &&
      third.revision?.endsWith(v2) === true &&
      configMapValue(c, canary) === 'v2',
    `reconcile ${canary} after v2 was pushed: Succeeded at v2, ConfigMap value v2, rollout '${third?.rollout}'`,
    third,
  );

  // (b) the gate function through the rollouts entry: a claim is refused, a signed halt taken.
  const fields = {
    rollout: rolloutName,
    action: 'halt',
    reason: 'lambda-check: halt under the real runtime',
  };
  const claim = await invoke(gateFn, fields);
  const refused = claim.body as { errorType?: string; errorMessage?: string };
  check(
    /takes a proof of its sender/.test(refused.errorMessage ?? ''),
    `gate: an unsigned halt is refused (${refused.errorType}: ${refused.errorMessage?.slice(0, 60)}…)`,
    claim,
  );
  const eventsBefore = recorder.calls.length;
  const proof = await proveRequest(
    rolloutActionDigest(fields),
    `${RIE_ARN_PREFIX}${GATE_NAME}`,
    c.region,
    TEST_IDENTITIES.alice,
  );
  const signed = await invoke(gateFn, { ...fields, proof });
  const halted = signed.body as {
    action?: string;
    record?: { by?: string; verified?: boolean };
    state?: { phase?: string };
    rollout?: string;
  };
  check(
    halted.action === 'halt' &&
      halted.state?.phase === 'Halted' &&
      halted.record?.by === TEST_IDENTITIES.alice.arn &&
      halted.record.verified === true,
    `gate: a signed halt by alice is taken: phase ${halted.state?.phase}, by ${halted.record?.by} (verified ${halted.record?.verified})`,
    signed,
  );
  const haltEvent = recorder.calls
    .slice(eventsBefore)
    .filter((call) => call.target === 'AWSEvents.PutEvents')
    .map(
      (call) => (JSON.parse(call.body) as { Entries: { DetailType: string; Detail: string }[] }).Entries[0]!,
    )
    .find((entry) => entry.DetailType === 'Rollout Halted');
  check(
    haltEvent !== undefined && haltEvent.Detail.includes(rolloutName),
    `gate: 'Rollout Halted' published on the bus by the halt itself (rolloutEvents)`,
    recorder.calls.slice(eventsBefore).map((call) => call.target || call.path),
  );
  const blocked = await reconcileOne(rest);
  check(
    blocked?.outcome === 'Blocked' &&
      blocked.reason === 'RolloutHalted' &&
      blocked.rollout === rolloutName &&
      configMapValue(c, rest) === 'v1',
    `reconcile ${rest} after the halt: ${blocked?.outcome} (${blocked?.reason}), keeps v1, rollout '${blocked?.rollout}'`,
    blocked,
  );

  // The reconcile function's log lines name the rollout (the dashboard reads them).
  const logged = logLines(reconcileFn).filter((line) => String(line.message ?? '').startsWith('reconciled:'));
  check(
    logged.length === 4 && logged.every((line) => line.rollout === rolloutName),
    `reconcile log: ${logged.length} 'reconciled:' lines, each with rollout '${rolloutName}'`,
    logged.map((line) => ({ message: line.message, rollout: line.rollout })),
  );
  const haltLog = logLines(gateFn).find((line) => line.action === 'halt' && line.rollout === rolloutName);
  check(haltLog !== undefined, `gate log: the halt logged with its rollout, by ${String(haltLog?.by)}`);
  return { reconcileFn, gateFn };
}

async function main(): Promise<number> {
  const node = process.version;
  // Provisioned before anything starts: a missing piece fails here, naming itself.
  const rie = lambdaRieBinary();
  const ric = lambdaRicEntry();
  process.stdout.write(
    `lambda-check: aws-lambda-rie ${LAMBDA_RIE_VERSION} (${rie}), ${LAMBDA_RIC_PACKAGE}, Node ${node}\n`,
  );
  const started: number[] = [];
  const recorder = await startRecorder();
  await stopComponents(DIR); // a fresh start: leftovers of an interrupted run go
  const began = Date.now();
  try {
    const components = await startComponents(DIR);
    Object.assign(process.env, componentsEnv(components));
    await scenario({ rie, ric }, components, started, recorder);
  } catch (error) {
    check(false, `the check ran to its end: ${(error as Error).stack ?? String(error)}`);
  } finally {
    for (const pid of started) await stopDaemon(pid);
    recorder.server.close();
    await stopComponents(DIR);
  }
  const failed = checks.filter((entry) => !entry.ok).length;
  process.stdout.write(
    `lambda-check: ${checks.length - failed} passed, ${failed} failed (${((Date.now() - began) / 1000).toFixed(1)} s; logs in ${DIR})\n`,
  );
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
