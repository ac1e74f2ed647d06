// The sluice CLI as a user runs it (a separate process, settings from the environment), on the real components.
import { CoreV1Api } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sluice } from '../support/cli.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();

/** A temp dir with `deploy/cm.yaml`: one ConfigMap `cli` in `ns`. */
function deployDir(ns: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
  mkdirSync(join(dir, 'deploy'));
  writeFileSync(
    join(dir, 'deploy', 'cm.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cli\n  namespace: ${ns}\ndata:\n  k: v\n`,
  );
  return dir;
}

describe('sluice CLI', () => {
  it('--version and -V print the package.json version', async () => {
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
    ) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const result = await sluice(flag);
      expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
    }
  });

  it('a reader that closes the pipe early (`sluice --help | head -0`) ends it quietly: no EPIPE stack', async () => {
    const child = spawn(process.execPath, ['bin/sluice-cli.mjs', '--help'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('push, register, reconcile, status, unregister', async () => {
    const ns = uniqueName('cli');
    const name = uniqueName('cli');
    const url = `oci://${bed.registry.host}/${uniqueName('cli/app')}`;
    await createNamespace(bed.kubeConfig(), ns);
    const dir = deployDir(ns);

    const pushed = await sluice('push', join(dir, 'deploy'), `${url}:v1`, '--revision', 'main@sha1:abc');
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toMatch(/digest sha256:[0-9a-f]{64}/);
    // The same files again: nothing pushed, the existing digest named (as `flux diff artifact ||
    // flux push artifact` would do, were its diff not of compressed bytes); --force pushes anyway.
    const digest = /digest (sha256:[0-9a-f]{64})/.exec(pushed.stdout)![1]!;
    const again = await sluice('push', join(dir, 'deploy'), `${url}:v1`, '--revision', 'main@sha1:def');
    expect(again.stdout).toBe(
      `unchanged ${url}:v1: it already holds these files (pushed from main@sha1:abc); nothing pushed (--force pushes anyway)\ndigest ${digest}\n`,
    );

    writeFileSync(
      join(dir, 'sluice.yaml'),
      `deliveries:\n  - name: ${name}\n    source: { url: "${url}", tag: v1, provider: aws }\n    prune: true\n    cluster: { kubeconfig: ${kubeconfigCopy()} }\n`,
    );
    expect((await sluice('register', '-f', join(dir, 'sluice.yaml'))).stdout).toContain(
      `delivery ${name} registered`,
    );

    const reconciled = await sluice('reconcile', name);
    expect(reconciled.code).toBe(0);
    expect(reconciled.stdout).toMatch(
      new RegExp(`${name}: Succeeded: Applied revision: v1@sha256:[0-9a-f]{64} \\(1 created`),
    );

    const status = await sluice('status', name, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({
      delivery: name,
      ready: true,
      reason: 'ReconciliationSucceeded',
      lastAppliedRevision: expect.stringMatching(/^v1@sha256:/),
      // The Git revision the artifact was pushed from, as Flux's lastAppliedOriginRevision.
      lastAppliedOriginRevision: 'main@sha1:abc',
      lastAttemptedRevision: expect.stringMatching(/^v1@sha256:/),
      inventorySize: 1,
      changes: { created: 1, configured: 0, unchanged: 0, deleted: 0 },
    });
    // Scripts wait on it: 0 when Ready.
    expect((await sluice('status', name, '--exit-code')).code).toBe(0);
    const table = await sluice('status');
    expect(table.stdout).toMatch(
      new RegExp(
        `DELIVERY\\s+READY\\s+REASON[\\s\\S]*${name}\\s+True\\s+ReconciliationSucceeded\\s+v1@sha256:[0-9a-f]{64} \\(main@sha1:abc\\)`,
      ),
    );

    const removed = await sluice('unregister', name);
    expect(removed.stdout).toContain(`delivery ${name} removed; 1 objects deleted`);
  });

  it('push, register and unregister answer in JSON with --json', async () => {
    const ns = uniqueName('clijson');
    const name = uniqueName('clijson');
    const url = `oci://${bed.registry.host}/${uniqueName('cli/json')}`;
    await createNamespace(bed.kubeConfig(), ns);
    const dir = deployDir(ns);
    const pushed = await sluice('push', join(dir, 'deploy'), `${url}:v1`, '--json');
    expect(JSON.parse(pushed.stdout)).toEqual({
      url: `${url}:v1`,
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      revision: expect.stringMatching(/^v1@sha256:[0-9a-f]{64}$/),
      unchanged: false,
    });
    const again = await sluice('push', join(dir, 'deploy'), `${url}:v1`, '--json');
    expect(JSON.parse(again.stdout)).toEqual({ ...JSON.parse(pushed.stdout), unchanged: true });
    writeFileSync(
      join(dir, 'sluice.yaml'),
      `gates:\n  - name: ${name}-gate\n    default: open\ndeliveries:\n  - name: ${name}\n    source: { url: "${url}", tag: v1, provider: aws }\n    prune: true\n    cluster: { kubeconfig: ${kubeconfigCopy()} }\n`,
    );
    const registered = await sluice('register', '-f', join(dir, 'sluice.yaml'), '--json');
    expect(JSON.parse(registered.stdout)).toEqual({ gates: [`${name}-gate`], deliveries: [name] });
    expect((await sluice('reconcile', name)).code).toBe(0);
    const removed = await sluice('unregister', name, '--json');
    expect(JSON.parse(removed.stdout)).toEqual({
      delivery: name,
      policy: 'Delete',
      deleted: [`${ns}_cli__ConfigMap`],
      skipped: [],
      goneWithKind: [],
      containersKept: [],
      kept: [],
    });
  });

  it('unregister keeps what another delivery on the cluster applies, names it, and lets that one take it over', async () => {
    const ns = uniqueName('clirename');
    const [before, after] = [uniqueName('before'), uniqueName('after')];
    const url = `oci://${bed.registry.host}/${uniqueName('cli/rename')}`;
    await createNamespace(bed.kubeConfig(), ns);
    const dir = deployDir(ns);
    expect((await sluice('push', join(dir, 'deploy'), `${url}:v1`)).code).toBe(0);
    const kubeconfig = kubeconfigCopy();
    const delivery = (name: string) =>
      `  - name: ${name}\n    source: { url: "${url}", tag: v1, provider: aws }\n    prune: true\n    cluster: { kubeconfig: ${kubeconfig} }\n`;
    writeFileSync(join(dir, 'sluice.yaml'), `deliveries:\n${delivery(before)}${delivery(after)}`);
    expect((await sluice('register', '-f', join(dir, 'sluice.yaml'))).code).toBe(0);
    expect((await sluice('reconcile', before)).code).toBe(0);

    const removed = await sluice('unregister', before);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(
      `delivery ${before} removed; 0 objects deleted\n  kept ${ns}_cli__ConfigMap: delivery '${after}' applies it\n`,
    );
    expect(removed.stderr).toContain(
      `${after} (takes over objects of ${before}): Succeeded: Applied revision: v1@`,
    );
    const configMap = await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'cli', namespace: ns });
    expect(configMap.metadata?.labels?.['sluice.io/delivery']).toBe(after);
  });

  it('exits 1 with the reason when a reconcile fails, and names bad config fields', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
    const name = uniqueName('clibad');
    writeFileSync(
      join(dir, 'bad.yaml'),
      `deliveries:\n  - name: ${name}\n    source: { url: "oci://${bed.registry.host}/nothing-here", tag: v1, provider: aws }\n    prunne: true\n    cluster: { kubeconfig: ${bed.kube.kubeconfig} }\n`,
    );
    const bad = await sluice('register', '-f', join(dir, 'bad.yaml'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/prunne/);

    writeFileSync(
      join(dir, 'ok.yaml'),
      `deliveries:\n  - name: ${name}\n    source: { url: "oci://${bed.registry.host}/nothing-here", tag: v1, provider: aws }\n    cluster: { kubeconfig: ${bed.kube.kubeconfig} }\n`,
    );
    expect((await sluice('register', '-f', join(dir, 'ok.yaml'))).code).toBe(0);
    const failed = await sluice('reconcile', name);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/Failed: .*nothing-here/);
    // `status` shows it and exits 0; with --exit-code, 1 (failed).
    expect((await sluice('status', name)).code).toBe(0);
    const checked = await sluice('status', name, '--exit-code');
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain('ArtifactFailed');
  });

  it('register refuses a health check expression that is not CEL, naming its field, and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
    const name = uniqueName('clicel');
    writeFileSync(
      join(dir, 'cel.yaml'),
      `deliveries:\n  - name: ${name}\n    source: { url: "oci://${bed.registry.host}/nothing-here", tag: v1, provider: aws }\n` +
        `    cluster: { kubeconfig: ${bed.kube.kubeconfig} }\n    wait: true\n` +
        `    healthCheckExprs:\n      - { apiVersion: example.com/v1, kind: Widget, current: "status.conditions.exist(c, c.type == 'Ready')" }\n`,
    );
    const refused = await sluice('register', '-f', join(dir, 'cel.yaml'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `deliveries[${name}].healthCheckExprs[0].current: "status.conditions.exist(c, c.type == 'Ready')" calls exist(), which is not a CEL function`,
    );
    expect((await sluice('status', name)).code).not.toBe(0);
  });
});
