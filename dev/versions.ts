/** Pinned releases of the local components. kube-apiserver matches the kubectl of the layer package (1.33). */
export const KUBERNETES_VERSION = 'v1.33.13';
export const ETCD_VERSION = 'v3.5.21';
/** The npm package whose `emulator/` folder ships the DynamoDB Local jar. */
export const DYNAMODB_SIMULATOR_PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
/** The local-kms module (a KMS stand-in) the KMS component is built from. */
export const LOCAL_KMS_VERSION = 'v0.0.0-20260228092603-2a5e92d09ab6';
/**
 * What dev/build-local-kms.sh builds around that module, part of the binary's cache folder: change
 * it with the script, so that a machine with an older build builds anew. 2: seeds ECC and RSA keys.
 */
export const LOCAL_KMS_BUILD = 2;
/**
 * The AWS Lambda Runtime Interface Emulator module `npm run lambda-check` builds aws-lambda-rie from:
 * the newest version the Go module proxy serves (it has no tagged release there, only this pseudo-version).
 */
export const LAMBDA_RIE_VERSION = 'v0.0.0-20261030222936-bef5c4ba774d';
/**
 * The Lambda runtime interface client for Node.js that runs a handler under aws-lambda-rie: 3.3.0 is
 * the newest release for Node 20 (4.x wants Node 22 or later).
 */
export const LAMBDA_RIC_PACKAGE = 'aws-lambda-ric@3.3.0';
/**
 * The notation CLI (github.com/notaryproject/notation) the Notation signature tests sign with,
 * built from its Go module: the newest version the Go module proxy serves here.
 */
export const NOTATION_VERSION = 'v1.3.2';
