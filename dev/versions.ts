/** Pinned releases of the local components. kube-apiserver matches the kubectl of the layer package (1.33). */
export const KUBERNETES_VERSION = 'v1.33.13';
export const ETCD_VERSION = 'v3.5.21';
/** The npm package whose `emulator/` folder ships the DynamoDB Local jar. */
export const DYNAMODB_SIMULATOR_PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
/** The local-kms module (a KMS stand-in) the KMS component is built from. */
export const LOCAL_KMS_VERSION = 'v0.0.0-20260228092603-2a5e92d09ab6';
