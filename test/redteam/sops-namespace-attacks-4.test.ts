// Red team round 4: sops's MAC covers a file's values in order, not its keys. Someone who can push
// to the repository (but has no key) renames unencrypted keys so the values keep their order:
// the Secret's namespace becomes a label's value, and the MAC still checks out.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseDelivery } from '../../functions/core/config/index.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { ageKeySecret, sopsDecryption } from '../support/sops.ts';
import { sopsEncrypt } from '../support/sops-encrypt.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const PASSWORD = 'rt4-namespace-canary-0123456789';

/** A Secret whose file puts it in `home`, with a label whose value is `elsewhere`. */
const secret = (name: string, home: string, elsewhere: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: home, labels: { tier: elsewhere } },
  data: { password: Buffer.from(PASSWORD).toString('base64') },
});

/** The same file with `namespace` and the label's key swapped: same values, same order, same MAC. */
function swapKeys(file: string, home: string, elsewhere: string): string {
  const written = `  namespace: ${home}\n  labels:\n    tier: ${elsewhere}\n`;
  const swapped = `  labels:\n    tier: ${home}\n  namespace: ${elsewhere}\n`;
  expect(file).toContain(written);
  return file.replace(written, swapped);
}

async function secretIn(namespace: string, name: string): Promise<boolean> {
  const core = bed.kubeConfig().makeApiClient(CoreV1Api);
  try {
    await core.readNamespacedSecret({ namespace, name });
    return true;
  } catch {
    return false;
  }
}

describe('sops key renames cannot move a decrypted Secret into another namespace', () => {
  it('a delivery without targetNamespace or decryption.namespaces decrypts only into default', async () => {
    const deps = engineDeps();
    const elsewhere = uniqueName('rt4-elsewhere');
    await createNamespace(bed.kubeConfig(), elsewhere);
    const name = uniqueName('rt4-db');
    const genuine = await sopsEncrypt([secret(name, 'default', elsewhere)]);
    const repository = uniqueName('rt4-sops-ns');
    const delivery = await registerDelivery(deps, bed, {
      name: repository,
      repository,
      path: '.',
      prune: true,
      decryption: sopsDecryption(await ageKeySecret()),
    });

    await pushFiles(bed, repository, 'main', { 'secret.yaml': swapKeys(genuine, 'default', elsewhere) });
    const attacked = await run(delivery.name, deps);
    expect(attacked.outcome).toBe('Failed');
    expect(attacked.message).toContain(`Secret/${elsewhere}/${name}`);
    expect(attacked.message).toContain('decryption.namespaces');
    expect(attacked.message).not.toContain(PASSWORD);
    expect(await secretIn(elsewhere, name)).toBe(false);

    // The file as sops wrote it is decrypted where it says.
    await pushFiles(bed, repository, 'main', { 'secret.yaml': genuine });
    const honest = await run(delivery.name, deps);
    expect(honest.outcome, honest.message).toBe('Succeeded');
    expect(await secretIn('default', name)).toBe(true);
  });

  it('decryption.namespaces lists where Secrets may land; a rename out of them is refused', async () => {
    const deps = engineDeps();
    const home = uniqueName('rt4-home');
    const elsewhere = uniqueName('rt4-elsewhere');
    await createNamespace(bed.kubeConfig(), home);
    await createNamespace(bed.kubeConfig(), elsewhere);
    const name = uniqueName('rt4-db');
    const genuine = await sopsEncrypt([secret(name, home, elsewhere)]);
    const repository = uniqueName('rt4-sops-ns');
    const delivery = await registerDelivery(deps, bed, {
      name: repository,
      repository,
      path: '.',
      decryption: { ...sopsDecryption(await ageKeySecret()), namespaces: [home] },
    });

    await pushFiles(bed, repository, 'main', { 'secret.yaml': swapKeys(genuine, home, elsewhere) });
    const attacked = await run(delivery.name, deps);
    expect(attacked.outcome).toBe('Failed');
    expect(attacked.message).toContain(`Secret/${elsewhere}/${name}`);
    expect(await secretIn(elsewhere, name)).toBe(false);

    await pushFiles(bed, repository, 'main', { 'secret.yaml': genuine });
    const honest = await run(delivery.name, deps);
    expect(honest.outcome, honest.message).toBe('Succeeded');
    expect(await secretIn(home, name)).toBe(true);
  });
});

describe('decryption.namespaces in the config', () => {
  const delivery = (extra: Record<string, unknown>) =>
    parseDelivery({
      name: 'd',
      source: { url: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/x', tag: 'v1' },
      cluster: { kubeconfig: './kubeconfig' },
      ...extra,
    });
  const decryption = (namespaces: unknown) => ({ ...sopsDecryption(), namespaces });

  it('must list the targetNamespace when both are set, and name at least one valid namespace', () => {
    expect(() => delivery({ targetNamespace: 'a', decryption: decryption(['b']) })).toThrow(
      'decryption.namespaces: does not list the targetNamespace "a"',
    );
    expect(() => delivery({ decryption: decryption([]) })).toThrow(
      'decryption.namespaces: list at least one namespace',
    );
    expect(() => delivery({ decryption: decryption(['Bad_NS']) })).toThrow('decryption.namespaces[0]');
    expect(delivery({ targetNamespace: 'a', decryption: decryption(['a']) }).decryption?.namespaces).toEqual([
      'a',
    ]);
  });
});
