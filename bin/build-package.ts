// `npm run build`, run by `npm pack` (prepack): the package's dist/. The library, its config types
// and the CLI compiled to JavaScript with declarations (tsconfig.build.json), and each Lambda
// handler bundled as a clone of the repository bundles it at synth (lib/bundle-options.ts), so an
// installed package synthesizes without esbuild and without the handlers' sources.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleOptions, PROJECT_ROOT } from '../lib/bundle-options.ts';
import { HANDLER_NAMES } from '../lib/bundling.ts';

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

const started = Date.now();
rmSync(DIST, { recursive: true, force: true });
compile();
rewriteDeclarationImports();
// `sluice dev up` builds kube-apiserver and etcd with it on first use (dev/provision.ts).
copyFileSync(
  join(PROJECT_ROOT, 'dev', 'build-kube-binaries.sh'),
  join(DIST, 'dev', 'build-kube-binaries.sh'),
);
await Promise.all(HANDLER_NAMES.map((name) => build(bundleOptions(name, join(DIST, 'handlers', name)))));
process.stderr.write(`dist/ built in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
