import type { BuildOptions } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: where package-lock.json and the handlers' sources are. */
/** The Lambda handlers, each `functions/<name>/handler.ts`. */
export const HANDLER_NAMES = ['reconcile', 'gate', 'spec-resource'] as const;

export type HandlerName = (typeof HANDLER_NAMES)[number];

export const PROJECT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** `functions/<name>/handler.ts`, exporting `handler`. */
export function handlerEntry(name: HandlerName): string {
  return join(PROJECT_ROOT, 'functions', name, 'handler.ts');
}

/**
 * Packages the bundles take from elsewhere, each for a part of @kubernetes/client-node that sluice
 * does not use or can serve with what the bundle already holds (see each file in functions/shims):
 * node-fetch (the runtime's own fetch), js-yaml (the `yaml` package reads kubeconfigs), the SOCKS
 * proxy agent (sluice's transport makes its own agent) and jsonpath-plus (legacy auth-providers).
 */
export const ALIASES: Readonly<Record<string, string>> = Object.fromEntries(
  ['node-fetch', 'js-yaml', 'socks-proxy-agent', 'jsonpath-plus'].map((name) => [
    name,
    join(PROJECT_ROOT, 'functions', 'shims', `${name}.ts`),
  ]),
);

/**
 * How every sluice handler is bundled: by the esbuild in node_modules (never Docker), as ES modules
 * with their dependencies, the AWS SDK included, so the SDK versions tested are the ones that run.
 * Code reached only through a dynamic `import()` (CEL health checks, SOPS decryption) is split
 * into a chunk of its own, loaded on first use: a delivery that does not need it never pays for it
 * at cold start.
 */
export function bundleOptions(name: HandlerName, outdir: string): BuildOptions {
  return {
    entryPoints: { index: handlerEntry(name) },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    // The oldest runtime the construct's `runtime` prop allows (Node.js 20).
    target: 'node20',
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: 'linked',
    sourcesContent: false,
    alias: { ...ALIASES },
    // Some bundled CommonJS dependencies call require() for Node built-ins.
    banner: {
      js: "import { createRequire as sluiceCreateRequire } from 'node:module'; const require = sluiceCreateRequire(import.meta.url);",
    },
    logLevel: 'error',
  };
}

/**
 * A handler bundled as the package ships it (dist/handlers/<name>, `npm run build`): without source
 * maps, so deployed assets are half the size.
 */
export function packageBundleOptions(name: HandlerName, outdir: string): BuildOptions {
  return { ...bundleOptions(name, outdir), sourcemap: false };
}
