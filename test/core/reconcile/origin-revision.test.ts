// The Git revision an artifact was pushed from (`org.opencontainers.image.revision`, as `sluice push
// --revision` and `flux push artifact --revision` write it) is shown like Flux's
// lastAppliedOriginRevision: in the status, the recorded event and the published one. On the real
// components.
import { ECRClient } from '@aws-sdk/client-ecr';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import { ecrCredentials, pushArtifact } from '../../../functions/core/oci/index.ts';
import { listEvents, type ReconcileEvent } from '../../../functions/core/store/events.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, registerDelivery, run } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();

async function push(repository: string, value: string, originRevision?: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-origin-'));
  const ns = repository.split('/')[1]!;
  writeFileSync(
    join(dir, 'cm.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${ns}\ndata:\n  v: "${value}"\n`,
  );
  try {
    await pushArtifact(dir, `oci://${bed.registry.host}/${repository}:main`, {
      credentials: ecrCredentials(new ECRClient({}), systemClock),
      ...(originRevision && { annotations: { revision: originRevision } }),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('origin revision', () => {
  it('is recorded from the applied artifact, sent with its events, and cleared when the next has none', async () => {
    const ns = uniqueName('origin');
    const repository = `origin/${ns}`;
    const name = uniqueName('origin');
    await createNamespace(bed.kubeConfig(), ns);
    const published: ReconcileEvent[] = [];
    const deps = {
      ...engineDeps(),
      events: { publish: async (event: ReconcileEvent) => void published.push(event) },
    };
    await registerDelivery(deps, bed, { name, repository });

    await push(repository, 'one', 'main@sha1:4f2c9e0d1a2b');
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    expect(await getStatus(deps.db, name)).toMatchObject({
      lastAppliedOriginRevision: 'main@sha1:4f2c9e0d1a2b',
    });
    expect((await listEvents(deps.db, name))[0]).toMatchObject({ originRevision: 'main@sha1:4f2c9e0d1a2b' });
    expect(published.at(-1)).toMatchObject({
      outcome: 'Succeeded',
      originRevision: 'main@sha1:4f2c9e0d1a2b',
    });

    await push(repository, 'two');
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    expect((await getStatus(deps.db, name))?.lastAppliedOriginRevision).toBeUndefined();
    expect((await listEvents(deps.db, name))[0]?.originRevision).toBeUndefined();
    expect(published.at(-1)?.originRevision).toBeUndefined();
  });
});
