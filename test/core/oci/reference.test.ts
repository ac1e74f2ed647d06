import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../functions/core/errors.ts';
import {
  credentialsFor,
  isEcrHost,
  isLoopbackHost,
  parseReference,
  providerOf,
  type RegistryCredentials,
} from '../../../functions/core/oci/index.ts';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function parseError(url: string, allowTagOrDigest = false): SluiceError {
  try {
    parseReference(url, { allowTagOrDigest });
  } catch (error) {
    expect(error).toBeInstanceOf(SluiceError);
    expect((error as SluiceError).reason).toBe('ArtifactFailed');
    expect((error as SluiceError).message).toContain(url);
    return error as SluiceError;
  }
  throw new Error(`${url} parsed`);
}

describe('parseReference', () => {
  it('parses host, port and a nested repository path', () => {
    expect(parseReference('oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app')).toEqual({
      host: '123456789012.dkr.ecr.eu-west-1.amazonaws.com',
      repository: 'team/app',
      url: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app',
    });
    expect(parseReference('oci://127.0.0.1:5000/a/b/c')).toMatchObject({
      host: '127.0.0.1:5000',
      repository: 'a/b/c',
    });
    expect(parseReference('oci://[::1]:5000/app').host).toBe('[::1]:5000');
  });

  it('reads :tag and @digest on push references', () => {
    expect(parseReference('oci://localhost:5000/app:v1.2.3', { allowTagOrDigest: true })).toMatchObject({
      host: 'localhost:5000',
      repository: 'app',
      tag: 'v1.2.3',
      url: 'oci://localhost:5000/app',
    });
    expect(parseReference(`oci://ghcr.io/org/app:v1@${DIGEST}`, { allowTagOrDigest: true })).toMatchObject({
      repository: 'org/app',
      tag: 'v1',
      digest: DIGEST,
    });
    expect(parseReference(`oci://ghcr.io/org/app@${DIGEST}`, { allowTagOrDigest: true })).not.toHaveProperty(
      'tag',
    );
  });

  it.each([
    ['https://ghcr.io/org/app', 'must start with oci://'],
    ['oci://', 'no registry host'],
    ['oci://ghcr.io', 'no repository'],
    ['oci://ghcr.io/', 'no repository'],
    ['oci://ghcr_io/app', 'registry host "ghcr_io"'],
    ['oci://ghcr.io:99999/app', 'port 99999'],
    ['oci://ghcr.io/Org/App', 'repository "Org/App"'],
    ['oci://ghcr.io/org//app', 'repository "org//app"'],
    ['oci://ghcr.io/org/app?x=1', 'repository'],
    ['oci://ghcr.io/org/app:v1', 'repository only'],
    [`oci://ghcr.io/org/app@${DIGEST}`, 'repository only'],
  ])('refuses source URL %s (%s)', (url, problem) => {
    expect(parseError(url).message).toContain(problem);
  });

  it.each([
    ['oci://ghcr.io/app:-bad', 'tag "-bad"'],
    ['oci://ghcr.io/app@sha256:abc', 'digest "sha256:abc"'],
    ['oci://ghcr.io/app@md5:abc', 'digest'],
  ])('refuses push reference %s (%s)', (url, problem) => {
    expect(parseError(url, true).message).toContain(problem);
  });
});

describe('hosts', () => {
  it('recognises ECR hosts', () => {
    expect(isEcrHost('123456789012.dkr.ecr.eu-west-1.amazonaws.com')).toBe(true);
    expect(isEcrHost('123456789012.dkr.ecr-fips.us-east-1.amazonaws.com')).toBe(true);
    expect(isEcrHost('123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn')).toBe(true);
    expect(isEcrHost('123456789012.dkr-ecr.eu-west-1.on.aws')).toBe(true);
    expect(isEcrHost('public.ecr.aws')).toBe(false);
    expect(isEcrHost('ghcr.io')).toBe(false);
    expect(isEcrHost('12345.dkr.ecr.eu-west-1.amazonaws.com')).toBe(false);
  });

  it('recognises loopback hosts', () => {
    for (const host of ['127.0.0.1:5000', '127.1.2.3', 'localhost', 'localhost:5000', '[::1]:5000']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['128.0.0.1', 'localhost.example.com', '10.0.0.1:5000', 'ghcr.io']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe('credentialsFor', () => {
  const aws: RegistryCredentials = async () => ({ username: 'AWS', password: 'ecr' });
  const generic: RegistryCredentials = async () => undefined;

  it('defaults to aws for ECR hosts and generic for others; an explicit provider wins', async () => {
    const ecr = 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/app';
    expect(providerOf({ url: ecr })).toBe('aws');
    expect(providerOf({ url: 'oci://ghcr.io/org/app' })).toBe('generic');
    expect(providerOf({ url: 'oci://127.0.0.1:5000/app', provider: 'aws' })).toBe('aws');
    expect(providerOf({ url: ecr, provider: 'generic' })).toBe('generic');
    expect(credentialsFor({ url: ecr }, { aws, generic })).toBe(aws);
    expect(credentialsFor({ url: 'oci://ghcr.io/org/app:v1' }, { aws, generic })).toBe(generic);
  });
});
