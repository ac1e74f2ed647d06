export {
  pullArtifact,
  pullResolved,
  verifyResolved,
  pushArtifact,
  resolveArtifact,
  type Artifact,
  type ArtifactDeps,
  type PushDeps,
  type Pushed,
} from './artifact.ts';
export {
  anonymousCredentials,
  credentialsFor,
  dockerConfigCredentials,
  dockerConfigPath,
  ecrCredentials,
  ECR_TOKEN_MARGIN_MS,
  providerOf,
  type BasicCredentials,
  type CredentialProviders,
  type RegistryCredentials,
} from './credentials.ts';
export { isDigest, sha256Digest } from './digest.ts';
export { RegistryError } from './errors.ts';
export { isEcrHost, parseEcrHost, partitionOfRegion, type EcrHost } from './ecr-host.ts';
export { describeReference, isLoopbackHost, parseReference, type OciReference } from './reference.ts';
export { RegistryClient, type ManifestResponse, type RegistryClientOptions } from './registry-client.ts';
export { revisionOf, selectSemverTag, sourceRef, type Resolved, type SourceRef } from './resolve.ts';
export * from './source.ts';
export { DEFAULT_UNPACK_LIMITS, packDirectory, unpackArtifact, type UnpackLimits } from './tarball.ts';
