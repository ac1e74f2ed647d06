// The package as a user gets it (test/support/consumer-app.ts): packed once, installed into a CDK
// app outside the repository, the README's example synthesized offline by the CDK CLI under each
// way a CDK app runs, and the packaged CLI run against the local components.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumerApp,
  devTool,
  PACKAGE,
  readmeCodeBlocks,
  type ConsumerApp,
} from '../support/consumer-app.ts';
import { kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';
import { HANDLER_NAMES } from '../../lib/bundling.ts';
import { DEV_UP_FILES, ENDPOINT_BUNDLE } from '../../bin/cli-bundle.ts';

const exec = promisify(execFile);
const HANDLERS = HANDLER_NAMES;

testbed();
let app: ConsumerApp;

beforeAll(async () => {
  app = await consumerApp();
}, 300_000);
afterAll(() => app?.remove());

/** Offline: no AWS or CDK settings of this process (the tests' local endpoints), no credentials. */
function offlineEnv(): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(AWS_|CDK_)/.test(key))),
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The sha256 of every `asset.*` folder's index.mjs in a cloud assembly. */
function assetBundles(outdir: string): string[] {
  return readdirSync(outdir)
    .filter((name) => name.startsWith('asset.') && existsSync(join(outdir, name, 'index.mjs')))
    .map((name) => sha256(join(outdir, name, 'index.mjs')))
    .sort();
}

describe('the packed package', () => {
  it('holds compiled JavaScript, declarations, the handler bundles and the CLI; no sources, tests or benchmarks', () => {
    const paths = app.packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'CHANGELOG.md',
        'bin/sluice-cli.mjs',
        'dist/lib/index.js',
        'dist/lib/index.d.ts',
        'dist/functions/core/config/index.d.ts',
        'dist/cjs/package.json',
        'dist/cjs/lib/index.js',
        'dist/cjs/lib/index.d.ts',
        'dist/cjs/functions/core/config/index.js',
        'dist/cjs/functions/core/config/index.d.ts',
        'dist/bin/sluice.js',
        ...HANDLERS.map((name) => `dist/handlers/${name}/index.mjs`),
      ]),
    );
    expect(paths.filter((path) => /^(test|bench|functions|lib|dev)\//.test(path))).toEqual([]);
    expect(
      paths.filter((path) => path.startsWith('examples/') && !path.startsWith('examples/release-overlays/')),
    ).toEqual([]);
    expect(paths.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([]);
    // The declarations import each other as .js, as any consumer's TypeScript resolves them.
    const index = readFileSync(join(app.installed, 'dist', 'lib', 'index.d.ts'), 'utf8');
    expect(index).toContain("from './sluice.js'");
    expect(index).not.toMatch(/from '\.[^']*\.ts'/);
  });

  it('names no repository: the publisher sets the real one (none was invented)', () => {
    expect(JSON.parse(readFileSync(join(app.installed, 'package.json'), 'utf8'))).not.toHaveProperty(
      'repository',
    );
  });

  it('carries every file `sluice dev up` reads beside the CLI: the build scripts, the KMS seed, the endpoint, compiled', () => {
    const paths = app.packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([...DEV_UP_FILES, ENDPOINT_BUNDLE].map((file) => `dist/bin/${file}`)),
    );
  });

  it("the README's links to the docs and examples lead to files the package holds (npm shows no repository)", () => {
    const readme = readFileSync(join(app.installed, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)]
      .map((match) => match[1]!)
      .filter((link) => !/^[a-z]+:/.test(link));
    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((link) => !existsSync(join(app.installed, link)))).toEqual([]);
  });

  it(
    '`sluice dev up` runs from the installed package: the components start, `--stack sluice-local` finds the table, `dev down` stops them',
    { timeout: 300_000 },
    async () => {
      const devDir = join(app.dir, '.sluice-dev-up');
      const env = { ...offlineEnv(), SLUICE_DEV_DIR: devDir };
      const sluice = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
        exec(join(app.dir, 'node_modules', '.bin', 'sluice'), args, {
          cwd: app.dir,
          env: { ...env, ...extra },
        });
      try {
        const up = await sluice(['dev', 'up']);
        expect(up.stdout).toContain('local components up');
        // `. .sluice/dev/env`, as a user's shell does.
        const sourced = Object.fromEntries(
          [...readFileSync(join(devDir, 'env'), 'utf8').matchAll(/^export (\w+)="(.*)"$/gm)]
            .filter((m) => m[1] !== 'PATH')
            .map((m) => [m[1]!, m[2]!]),
        );
        const status = await sluice(['--stack', 'sluice-local', 'status', '--json'], sourced);
        expect(JSON.parse(status.stdout)).toEqual([]);
      } finally {
        const down = await sluice(['dev', 'down']);
        expect(down.stdout).toMatch(/^stopped /);
      }
    },
  );

  it("the README's install command installs this package", () => {
    const [install] = readmeCodeBlocks('Use it in your CDK app', 'sh');
    expect(install?.trim()).toBe(`npm install ${PACKAGE.name}`);
  });

  it('installs without the build tools: no esbuild, no tsx', () => {
    expect(existsSync(join(app.dir, 'node_modules', PACKAGE.name, 'package.json'))).toBe(true);
    expect(existsSync(join(app.dir, 'node_modules', 'esbuild'))).toBe(false);
    expect(existsSync(join(app.dir, 'node_modules', 'tsx'))).toBe(false);
  });

  // The app command, as cdk.json's "app" would be. ts-node only transpiles: the compiled run
  // type-checks the same files with the same compiler.
  it.for([
    { runner: 'node, as plain JavaScript (an ES module)', command: 'node app.mjs' },
    { runner: 'tsx (CommonJS TypeScript)', command: `${devTool('tsx')} bin/app.ts` },
    {
      runner: 'ts-node (CommonJS TypeScript)',
      command: `${devTool('ts-node')} --transpile-only --prefer-ts-exts bin/app.ts`,
    },
    {
      runner: 'node, compiled by tsc against the declarations (CommonJS)',
      command: `${devTool('tsc')} -p . && node build/bin/app.js`,
    },
    {
      runner: 'node, compiled by tsc with module node16 (CommonJS, no require of ES modules)',
      command: `${devTool('tsc')} -p tsconfig.node16.json && node build16/bin/app.js`,
    },
  ])(
    "cdk synth runs the README's example offline under $runner, with the package's prebuilt handler bundles",
    // tsc type-checks aws-cdk-lib's declarations: minutes on a loaded 2-core machine.
    { timeout: 300_000 },
    async ({ command }, { expect }) => {
      const outdir = join(app.dir, `cdk.out.${uniqueName('synth')}`);
      try {
        await exec(
          devTool('cdk'),
          [
            'synth',
            '--app',
            command,
            '--output',
            outdir,
            '--quiet',
            '--no-notices',
            '--no-version-reporting',
          ],
          { cwd: app.dir, env: offlineEnv(), maxBuffer: 64 * 1024 * 1024 },
        );
        const template = JSON.parse(readFileSync(join(outdir, 'Sluice.template.json'), 'utf8')) as {
          Resources: Record<
            string,
            {
              Type: string;
              Properties: { Handler?: string; Environment?: { Variables?: Record<string, unknown> } };
            }
          >;
        };
        const functions = Object.values(template.Resources).filter(
          (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler === 'index.handler',
        );
        expect(functions).toHaveLength(HANDLERS.length);
        // The prebuilt bundles ship no source maps, so the functions are not told to read them.
        for (const fn of functions)
          expect(fn.Properties.Environment?.Variables?.NODE_OPTIONS).toBeUndefined();
        const prebuilt = HANDLERS.map((name) =>
          sha256(join(app.installed, 'dist', 'handlers', name, 'index.mjs')),
        ).sort();
        expect(assetBundles(outdir)).toEqual(prebuilt);
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
  );

  it(
    'a `cdk init` app tests a stack with sluice under Jest and ts-jest (CommonJS): Template.fromStack',
    { timeout: 300_000 },
    async () => {
      const { stdout, stderr } = await exec(
        join(app.dir, 'node_modules', '.bin', 'jest'),
        ['--ci', '--colors=false'],
        {
          cwd: app.dir,
          env: offlineEnv(),
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      expect(`${stdout}${stderr}`).toMatch(/Tests:\s+2 passed, 2 total/);
    },
  );

  it('its CLI runs compiled, without tsx: --help', async () => {
    const { stdout } = await exec(join(app.dir, 'node_modules', '.bin', 'sluice'), ['--help']);
    expect(stdout).toContain('Usage: sluice [options] [command]');
    for (const command of ['push', 'register', 'reconcile', 'status', 'diff', 'gates', 'dev'])
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it('its CLI registers a delivery on the local components, and unregisters it', async () => {
    const name = uniqueName('packed');
    const config = join(app.dir, `${name}.yaml`);
    writeFileSync(
      config,
      `deliveries:\n  - name: ${name}\n    source: { url: "oci://registry.example/${name}", tag: v1 }\n    cluster: { kubeconfig: ${kubeconfigCopy()} }\n`,
    );
    const sluice = (...args: string[]) =>
      exec(join(app.dir, 'node_modules', '.bin', 'sluice'), args, { cwd: app.dir, env: process.env });
    expect((await sluice('register', '-f', config)).stdout).toContain(`delivery ${name} registered`);
    expect(JSON.parse((await sluice('status', name, '--json')).stdout)).toMatchObject({ delivery: name });
    expect((await sluice('unregister', name)).stdout).toContain(`delivery ${name} removed`);
  });
});
