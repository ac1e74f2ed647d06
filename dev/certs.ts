import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { opensslBinary } from './provision.ts';

export interface ApiServerCerts {
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
}

/** A private CA, a serving certificate for 127.0.0.1/localhost signed by it, and a service-account key pair. */
export function makeApiServerCerts(dir: string): ApiServerCerts {
  mkdirSync(dir, { recursive: true });
  const certs: ApiServerCerts = {
    caCert: join(dir, 'ca.crt'),
    serverCert: join(dir, 'apiserver.crt'),
    serverKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
  if (existsSync(certs.serviceAccountPub)) return certs;
  const openssl = opensslBinary();
  const run = (...args: string[]) => execFileSync(openssl, args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '3650',
    '-subj',
    '/CN=sluice-local-ca',
  );
  run('req', ...ec, '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver');
  writeFileSync(
    join(dir, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  run(
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'apiserver.crt',
    '-days',
    '3650',
    '-extfile',
    'san.ext',
  );
  run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key');
  run('pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
  return certs;
}
