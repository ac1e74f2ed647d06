import { Command, Option } from 'commander';
import { systemClock } from '../../functions/core/clock.ts';
import {
  credentialsFor,
  dockerConfigCredentials,
  dockerConfigPath,
  ecrCredentials,
  parseReference,
  pushArtifact,
} from '../../functions/core/oci/index.ts';
import { ECRClient } from '@aws-sdk/client-ecr';
import { printJson } from './output.ts';

export function pushCommand(): Command {
  return new Command('push')
    .description(
      'Push a directory of manifests as a Flux-format OCI artifact; prints its digest. A tag that already holds the same files (by content) is left as it is',
    )
    .argument('<dir>', 'directory to package')
    .argument('<ref>', 'oci://host/repository:tag')
    .option('--source <url>', 'org.opencontainers.image.source annotation (e.g. the Git URL)')
    .option('--revision <rev>', 'org.opencontainers.image.revision annotation (e.g. main@sha1:...)')
    .addOption(
      new Option(
        '--provider <provider>',
        'registry credentials: aws (ECR token) or generic (docker config); default aws for ECR hosts and $SLUICE_REGISTRY',
      ).choices(['aws', 'generic']),
    )
    .option('--insecure', 'allow plain http to a registry that is not on loopback')
    .option('--force', 'push even when the tag already holds the same files')
    .option('--json', 'print the pushed url, revision and digest (and unchanged: true when skipped) as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  sluice push ./deploy oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/app:v1 --revision main@sha1:4f2c...',
    )
    .action(
      async (
        dir: string,
        ref: string,
        opts: {
          source?: string;
          revision?: string;
          provider?: 'aws' | 'generic';
          insecure?: boolean;
          force?: boolean;
          json?: boolean;
        },
      ) => {
        const { host } = parseReference(ref, { allowTagOrDigest: true });
        const provider = opts.provider ?? (host === process.env.SLUICE_REGISTRY ? 'aws' : undefined);
        const providers = {
          aws: ecrCredentials(new ECRClient({}), systemClock),
          generic: dockerConfigCredentials(dockerConfigPath(process.env.DOCKER_CONFIG)),
        };
        const pushed = await pushArtifact(dir, ref, {
          credentials: credentialsFor({ url: ref, provider }, providers),
          insecure: opts.insecure,
          annotations: { source: opts.source, revision: opts.revision },
          skipUnchanged: !opts.force,
        });
        if (opts.json) printJson(pushed);
        else if (pushed.unchanged)
          process.stdout.write(
            `unchanged ${pushed.url}: it already holds these files${pushed.originRevision ? ` (pushed from ${pushed.originRevision})` : ''}; nothing pushed (--force pushes anyway)\ndigest ${pushed.digest}\n`,
          );
        else process.stdout.write(`pushed ${pushed.url}\ndigest ${pushed.digest}\n`);
      },
    );
}
