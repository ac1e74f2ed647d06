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
 * Packages the bundles take from elsewhere: node-fetch, which @kubernetes/client-node imports, is
 * replaced by the runtime's own fetch (see functions/shims/node-fetch.ts).
 */
export const ALIASES: Readonly<Record<string, string>> = {
  'node-fetch': join(PROJECT_ROOT, 'functions', 'shims', 'node-fetch.ts'),
};

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
