// How `npm run build` bundles the CLI (dist/bin/sluice.js): with every package it imports except
// the package's own dependencies (what the construct needs at synth, installed anyway), so a CDK
// app that installs sluice installs none of the CLI's (the AWS SDK clients, @kubernetes/client-node, ...).
import type { BuildOptions } from 'esbuild';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALIASES, PROJECT_ROOT } from '../lib/bundle-options.ts';

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** The packages the CLI bundle leaves to node_modules: the dependencies and peers. */
export const CLI_EXTERNAL = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)];

export function cliBundleOptions(outfile: string): BuildOptions {
  return {
    entryPoints: [join(PROJECT_ROOT, 'bin', 'sluice.ts')],
    outfile,
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: CLI_EXTERNAL,
    alias: { ...ALIASES },
    // Some bundled CommonJS dependencies call require() for Node built-ins.
    banner: {
      js: "import { createRequire as sluiceCreateRequire } from 'node:module'; const require = sluiceCreateRequire(import.meta.url);",
    },
    logLevel: 'error',
  };
}

/**
 * The files of dev/ that `sluice dev up` reads beside its code (dev/provision.ts, dev/local-kms.ts),
 * copied next to the CLI bundle (dist/bin/) by `npm run build`.
 */
export const DEV_UP_FILES = [
  'build-kube-binaries.sh',
  'build-local-kms.sh',
  'build-lambda-rie.sh',
  'local-kms-seed.yaml',
] as const;

/** The local AWS API endpoint's process, compiled beside the CLI (dist/bin/). */
export const ENDPOINT_BUNDLE = 'ecr-endpoint-main.js';
