// The package's dependencies are exactly what its compiled code imports: the construct and the
// config types, what a CDK app needs to synthesize. The CLI's own packages are bundled into it, and
// the handlers' into their prebuilt bundles.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { satisfies } from 'semver';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundle-options.ts';
import { CLI_EXTERNAL, cliBundleOptions } from '../../bin/cli-bundle.ts';

/** The entry points of package.json's exports, as sources. */
const SHIPPED = ['lib/index.ts', 'functions/core/config/index.ts'];
const PEERS = ['aws-cdk-lib', 'constructs'];

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The packages (not Node built-ins) the shipped code imports, statically or by import(). */
async function importedPackages(): Promise<string[]> {
  const { metafile } = await build({
    entryPoints: SHIPPED.map((entry) => join(PROJECT_ROOT, entry)),
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    splitting: true,
    outdir: 'unused',
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const packages = Object.values(metafile.outputs)
    .flatMap((output) => output.imports)
    .filter((i) => i.external && !i.path.startsWith('node:'))
    .map((i) => /^(@[^/]+\/[^/]+|[^/]+)/.exec(i.path)![1]!);
  return [...new Set(packages)].sort();
}

describe('package.json dependencies', () => {
  it('are the packages the construct and the config types import, besides the peers', async () => {
    const imported = await importedPackages();
    expect(Object.keys(pkg.dependencies).sort()).toEqual(imported.filter((name) => !PEERS.includes(name)));
    expect(imported).toEqual(expect.arrayContaining(PEERS));
  });

  it('hold aws-cdk-lib and constructs as peers, whose ranges take the versions the repository pins and tests', () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(PEERS);
    for (const peer of PEERS) {
      expect(pkg.dependencies[peer]).toBeUndefined();
      expect(satisfies(pkg.devDependencies[peer]!, pkg.peerDependencies[peer]!)).toBe(true);
    }
  });

  it("leave out the CLI's packages: its bundle imports only Node built-ins, the dependencies and the peers", async () => {
    const { metafile } = await build({
      ...cliBundleOptions(join(PROJECT_ROOT, 'unused.js')),
      write: false,
      metafile: true,
    });
    const external = Object.values(metafile.outputs)
      .flatMap((output) => output.imports)
      .filter((i) => i.external && !i.path.startsWith('node:'))
      .map((i) => /^(@[^/]+\/[^/]+|[^/]+)/.exec(i.path)![1]!)
      .filter((name) => !builtinModules.includes(name));
    expect(external.length).toBeGreaterThan(0);
    for (const name of external) expect(CLI_EXTERNAL).toContain(name);
    // What it bundles instead, e.g. the Kubernetes client, is no dependency of the package.
    expect(Object.keys(metafile.inputs).some((path) => path.includes('@kubernetes/client-node'))).toBe(true);
    expect(pkg.dependencies['@kubernetes/client-node']).toBeUndefined();
  });
});
