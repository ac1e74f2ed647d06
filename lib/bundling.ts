import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: where package-lock.json and the handlers are. */
export const PROJECT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

export type HandlerName = 'reconcile' | 'gate' | 'spec';

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
 * How every sluice handler is bundled: by the esbuild in node_modules (never Docker), as one ES
 * module with its dependencies, the AWS SDK included, so the SDK versions tested are the ones that run.
 */
export const BUNDLING: nodejs.BundlingOptions = {
  forceDockerBundling: false,
  format: nodejs.OutputFormat.ESM,
  target: 'node22',
  mainFields: ['module', 'main'],
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  externalModules: [],
  esbuildArgs: { '--alias': Object.entries(ALIASES).map(([name, path]) => `${name}=${path}`) },
  // Some bundled CommonJS dependencies call require() for Node built-ins.
  banner:
    "import { createRequire as sluiceCreateRequire } from 'node:module'; const require = sluiceCreateRequire(import.meta.url);",
  logLevel: nodejs.LogLevel.ERROR,
};
