// Signing with the real notation CLI (built from its Go module, dev/notation.ts) into the local
// registry, with certificate authorities made here by openssl.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { notationBinary } from '../../dev/notation.ts';
import { opensslBinary } from '../../dev/provision.ts';
import type { Components } from '../../dev/components.ts';

const EXTENSIONS = `[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = codeSigning
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf_crl]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = codeSigning
crlDistributionPoints = URI:http://127.0.0.1:9/ca.crl
`;

/** A certificate and its key, PEM files on disk. */
export interface Issued {
  readonly dir: string;
  readonly cert: string;
  readonly key: string;
  /** The certificate's PEM text. */
  readonly pem: string;
}

let serial = 0;

/**
 * A certificate made with openssl: a self-signed CA root when `issuer` is not given, else one
 * `issuer` signs (a CA with `ca`, else a code-signing leaf, with CRL distribution points when
 * `crl`). Keys are EC P-256 unless `rsaBits`.
 */
export function issue(options: {
  readonly subject: string;
  readonly issuer?: Issued;
  readonly ca?: boolean;
  readonly days?: number;
  readonly crl?: boolean;
  readonly rsaBits?: number;
  /** An EC curve other than P-256 (e.g. secp384r1). */
  readonly curve?: string;
}): Issued {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-notation-ca-'));
  const openssl = opensslBinary();
  const run = (...args: string[]) => execFileSync(openssl, args, { cwd: dir, stdio: 'pipe' });
  writeFileSync(join(dir, 'openssl.cnf'), EXTENSIONS);
  const key = options.rsaBits
    ? ['-newkey', `rsa:${options.rsaBits}`]
    : ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${options.curve ?? 'prime256v1'}`];
  const days = String(options.days ?? 365);
  if (!options.issuer) {
    run(
      'req',
      '-x509',
      '-config',
      'openssl.cnf',
      '-extensions',
      'ca',
      ...key,
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
      '-days',
      days,
      '-subj',
      options.subject,
    );
  } else {
    run(
      'req',
      '-new',
      '-config',
      'openssl.cnf',
      ...key,
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'req.csr',
      '-subj',
      options.subject,
    );
    run(
      'x509',
      '-req',
      '-in',
      'req.csr',
      '-CA',
      options.issuer.cert,
      '-CAkey',
      options.issuer.key,
      '-set_serial',
      String(Date.now() * 1000 + ++serial),
      '-out',
      'cert.pem',
      '-days',
      days,
      '-extfile',
      'openssl.cnf',
      '-extensions',
      options.ca ? 'ca' : options.crl ? 'leaf_crl' : 'leaf',
    );
  }
  const cert = join(dir, 'cert.pem');
  return { dir, cert, key: join(dir, 'key.pem'), pem: readFileSync(cert, 'utf8') };
}

/**
 * Signs `host/repository@digest` with the real notation CLI, with `leaf`'s key and the chain
 * `[leaf, ...chain]` (leaf first, ending in the root), in a notation config of its own.
 */
export function notationSign(
  bed: Components,
  repository: string,
  digest: string,
  leaf: Issued,
  chain: readonly Issued[],
  options: {
    readonly expiry?: string;
    readonly format?: 'jws' | 'cose';
    readonly referrersApi?: boolean;
  } = {},
): void {
  const home = mkdtempSync(join(tmpdir(), 'sluice-notation-'));
  const config = join(home, 'notation');
  mkdirSync(config, { recursive: true });
  const certPath = join(home, 'chain.pem');
  writeFileSync(certPath, [leaf, ...chain].map((cert) => cert.pem).join(''));
  writeFileSync(
    join(config, 'signingkeys.json'),
    JSON.stringify({ default: 'test', keys: [{ name: 'test', keyPath: leaf.key, certPath }] }),
  );
  execFileSync(
    notationBinary(),
    [
      'sign',
      '--insecure-registry',
      '--signature-format',
      options.format ?? 'jws',
      ...(options.referrersApi ? ['--force-referrers-tag=false'] : []),
      ...(options.expiry ? ['--expiry', options.expiry] : []),
      `${bed.registry.host}/${repository}@${digest}`,
    ],
    {
      env: {
        ...process.env,
        XDG_CONFIG_HOME: home,
        HOME: home,
        NOTATION_USERNAME: bed.registry.username,
        NOTATION_PASSWORD: bed.registry.password,
      },
      stdio: 'pipe',
    },
  );
}
