import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleOptions, HANDLER_NAMES, PROJECT_ROOT, type HandlerName } from './bundle-options.ts';

export { HANDLER_NAMES, type HandlerName };

/** What Lambda calls in a handler's bundle: `handler`, exported by `index.mjs`. */
export const BUNDLE_HANDLER = 'index.handler';

/**
 * Where the installed package holds a handler's bundle, built when the package was packed
 * (`npm run build` writes `dist/handlers/<name>`, beside `dist/lib`). A clone of the repository
 * has none there: it bundles from the sources at synth.
 */
export function prebuiltBundleDir(name: HandlerName): string {
  return fileURLToPath(new URL(`../handlers/${name}`, import.meta.url));
}

/**
 * A handler's code asset: the bundle the package was built with, or, in a clone of the repository,
 * bundled from the sources at synth by the local esbuild into the asset's output folder (its hash
 * is the output's, so an unchanged bundle is not uploaded again). Both are made by
 * `bundleOptions` (lib/bundle-options.ts).
 */
export function handlerCode(name: HandlerName): lambda.Code {
  const prebuilt = prebuiltBundleDir(name);
  return existsSync(join(prebuilt, 'index.mjs')) ? lambda.Code.fromAsset(prebuilt) : bundledAtSynth(name);
}

/**
 * Whether a handler's code carries source maps: a clone's bundles made at synth do ('linked'), the
 * package's prebuilt ones do not (so `--enable-source-maps` would only cost start-up time).
 */
export function handlerHasSourceMaps(name: HandlerName): boolean {
  return !existsSync(join(prebuiltBundleDir(name), 'index.mjs'));
}

function bundledAtSynth(name: HandlerName): lambda.Code {
  return lambda.Code.fromAsset(join(PROJECT_ROOT, 'functions'), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never run (local bundling succeeds or throws), but part of the key CDK caches bundles by.
      image: DockerImage.fromRegistry('sluice-bundles-locally'),
      command: ['bundle', name],
      local: {
        tryBundle(outputDir: string): boolean {
          esbuild().buildSync(bundleOptions(name, outputDir));
          return true;
        },
      },
    },
  });
}

/** esbuild is a devDependency: loaded only to bundle from the sources, so the package never needs it. */
function esbuild(): typeof import('esbuild') {
  return createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
}
