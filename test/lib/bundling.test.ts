import { build, type Metafile } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleOptions } from '../../lib/bundle-options.ts';
import { outputsLoadedAtImport } from '../support/bundle-size.ts';

const outdir = mkdtempSync(join(tmpdir(), 'sluice-bundling-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/**
 * The packages (and sluice's own `sops` folder, but its lazy loader) in the outputs importing index.mjs loads
 * (statically), and in all the others.
 */
function packagesByLoad(metafile: Metafile): { atImport: Set<string>; onFirstUse: Set<string> } {
  const outputs = metafile.outputs;
  const loaded = outputsLoadedAtImport(metafile);
  const packagesOf = (paths: string[]) =>
    new Set(
      paths.flatMap((path) =>
        Object.keys(outputs[path]!.inputs).flatMap(
          (input) =>
            /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ??
            /functions\/core\/(sops)\/(?!lazy\.ts)/.exec(input)?.[1] ??
            [],
        ),
      ),
    );
  const js = Object.keys(outputs).filter((path) => path.endsWith('.mjs'));
  return {
    atImport: packagesOf(js.filter((path) => loaded.has(path))),
    onFirstUse: packagesOf(js.filter((path) => !loaded.has(path))),
  };
}

describe('the reconcile bundle', () => {
  const loads = build({ ...bundleOptions('reconcile', join(outdir, 'reconcile')), metafile: true }).then(
    (result) => packagesByLoad(result.metafile!),
  );

  it('loads the CEL library only when a delivery has health check expressions', async () => {
    const { atImport, onFirstUse } = await loads;
    expect(atImport).toContain('@kubernetes/client-node');
    expect(atImport).not.toContain('@bufbuild/cel');
    expect(onFirstUse).toContain('@bufbuild/cel');
  });

  it('loads the iCalendar library only when a gate has calendars, and the SSM client only when one has change calendars', async () => {
    const { atImport, onFirstUse } = await loads;
    for (const name of ['ical.js', '@aws-sdk/client-ssm']) {
      expect(atImport).not.toContain(name);
      expect(onFirstUse).toContain(name);
    }
  });

  it('loads the holiday library (its data and moment-timezone) only when a gate has holidays', async () => {
    const { atImport, onFirstUse } = await loads;
    for (const name of ['date-holidays', 'date-holidays-parser', 'moment-timezone']) {
      expect(atImport).not.toContain(name);
      expect(onFirstUse).toContain(name);
    }
  });

  it('loads the CloudWatch client only when a gate names alarms', async () => {
    const { atImport, onFirstUse } = await loads;
    expect(atImport).not.toContain('@aws-sdk/client-cloudwatch');
    expect(onFirstUse).toContain('@aws-sdk/client-cloudwatch');
  });

  it('loads Notation verification (the ASN.1 reader, the AWS Signer client) only when a source verifies with Notation', async () => {
    const { atImport, onFirstUse } = await loads;
    for (const name of ['@peculiar/asn1-x509', '@aws-sdk/client-signer']) {
      expect(atImport).not.toContain(name);
      expect(onFirstUse).toContain(name);
    }
  });

  it('loads the decryption code (KMS, Secrets Manager, age, sops) only when a delivery has decryption', async () => {
    const { atImport, onFirstUse } = await loads;
    for (const name of ['@aws-sdk/client-kms', '@aws-sdk/client-secrets-manager', 'age-encryption', 'sops']) {
      expect(atImport).not.toContain(name);
      expect(onFirstUse).toContain(name);
    }
  });
});
