// `npm run build`, run by `npm pack` (prepack): the package's dist/. The library and its config
// types compiled to JavaScript with declarations (tsconfig.build.json), the CLI bundled, and each Lambda
// handler bundled as a clone of the repository bundles it at synth (lib/bundle-options.ts), so an
// installed package synthesizes without esbuild and without the handlers' sources.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { packageBundleOptions, PROJECT_ROOT } from '../lib/bundle-options.ts';
import { HANDLER_NAMES } from '../lib/bundling.ts';
import { cliBundleOptions, DEV_UP_FILES, ENDPOINT_BUNDLE } from './cli-bundle.ts';

const DIST = join(PROJECT_ROOT, 'dist');

/** `'./x.ts'` in a declaration file: tsc rewrites these to `.js` in JavaScript only. */
const TS_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*)(["'])(\.{1,2}\/[^"']+)\.ts\2/g;

function compile(): void {
  execFileSync(join(PROJECT_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: PROJECT_ROOT,
    stdio: 'inherit',
  });
}

/** Points the declarations' relative imports at `.js`, as consumers' TypeScript resolves them. */
function rewriteDeclarationImports(): void {
  for (const file of readdirSync(DIST, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts')) continue;
    const path = join(DIST, file);
    const text = readFileSync(path, 'utf8');
    const rewritten = text.replace(TS_SPECIFIER, '$1$2$3.js$2');
    if (rewritten !== text) writeFileSync(path, rewritten);
  }
}

/** dist/cjs/: the CommonJS build, for `require` (Jest, ts-node, TypeScript `module: node16`). */
const CJS = join(DIST, 'cjs');

/** The entry points CommonJS consumers require, each bundled from its sources (dependencies external). */
const CJS_ENTRIES = ['lib/index', 'functions/core/config/index'] as const;

/**
 * The CommonJS build: each entry point bundled to one file under dist/cjs/ (a `type: commonjs`
 * scope), and the ES build's declarations copied beside them, so `require` resolves types that
 * TypeScript reads as CommonJS. The code finds the handler bundles through `import.meta.url`:
 * in CommonJS that is the ES build's file of the same entry point (dist/lib/index.js).
 */
async function buildCommonJs(): Promise<void> {
  writeFileSync(join(CJS, 'package.json'), '{ "type": "commonjs" }\n');
  await Promise.all(
    CJS_ENTRIES.map((entry) =>
      build({
        entryPoints: [join(PROJECT_ROOT, `${entry}.ts`)],
        outfile: join(CJS, `${entry}.js`),
        absWorkingDir: PROJECT_ROOT,
        bundle: true,
        packages: 'external',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        define: { 'import.meta.url': 'sluiceImportMetaUrl' },
        banner: {
          js: `const sluiceImportMetaUrl = require('node:url').pathToFileURL(require('node:path').join(__dirname, ${JSON.stringify(relative(dirname(join(CJS, entry)), join(DIST, `${entry}.js`)))})).href;`,
        },
        logLevel: 'error',
      }),
    ),
  );
  for (const file of readdirSync(DIST, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts') || !/^(lib|functions)\//.test(file)) continue;
    mkdirSync(dirname(join(CJS, file)), { recursive: true });
    copyFileSync(join(DIST, file), join(CJS, file));
  }
}

/**
 * The ES build: each entry point bundled over tsc's output of it (its other JavaScript files
 * removed, the declarations kept), as the CommonJS build is. A bundle imports only the packages its
 * code uses, where tsc's files import every module they name: the construct's store and OCI modules
 * would otherwise load the CLI's packages (lib-dynamodb, the ECR client, tar) at synth.
 */
async function bundleEsEntries(): Promise<void> {
  for (const file of readdirSync(DIST, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith('.js') && /^(lib|functions)\//.test(file)) rmSync(join(DIST, file));
  }
  await Promise.all(
    CJS_ENTRIES.map((entry) =>
      build({
        entryPoints: [join(PROJECT_ROOT, `${entry}.ts`)],
        outfile: join(DIST, `${entry}.js`),
        absWorkingDir: PROJECT_ROOT,
        bundle: true,
        packages: 'external',
        platform: 'node',
        format: 'esm',
        target: 'node20',
        logLevel: 'error',
      }),
    ),
  );
}

const started = Date.now();
rmSync(DIST, { recursive: true, force: true });
compile();
rewriteDeclarationImports();
await bundleEsEntries();
// The CLI, one file with the packages only it uses (bin/cli-bundle.ts).
await build(cliBundleOptions(join(DIST, 'bin', 'sluice.js')));
// `sluice dev up` builds kube-apiserver and etcd with it on first use (dev/provision.ts, bundled
// into dist/bin/sluice.js, looks beside itself).
// So do the other files `dev up` reads beside its code: the scripts that build local-kms (and the
// Lambda runtime interface emulator), and local-kms's seeded test keys.
for (const file of DEV_UP_FILES) copyFileSync(join(PROJECT_ROOT, 'dev', file), join(DIST, 'bin', file));
// The local AWS API endpoint runs as a process of its own: compiled, as the CLI is (no tsx).
await build({
  ...cliBundleOptions(join(DIST, 'bin', ENDPOINT_BUNDLE)),
  entryPoints: [join(PROJECT_ROOT, 'dev', 'ecr-endpoint-main.ts')],
});
mkdirSync(CJS);
await buildCommonJs();
// Without source maps: minified stack traces in the functions' logs are the price of a package
// (and deployed assets) half the size; a clone bundles at synth with them (lib/bundle-options.ts).
await Promise.all(
  HANDLER_NAMES.map((name) => build(packageBundleOptions(name, join(DIST, 'handlers', name)))),
);
process.stderr.write(`dist/ built in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
