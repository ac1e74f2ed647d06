import { partitionOfRegion } from './ecr-host.ts';

/**
 * A KMS key ARN as cosign's `awskms:///` reference takes it (sigstore's pkg/signature/kms/aws):
 * partitions aws, aws-cn and aws-us-gov, a 12-digit account, and a key id that is a UUID or a
 * multi-Region `mrk-` id. An alias is not accepted (see kmsKeyArnProblem).
 */
const KEY_ARN =
  /^arn:(aws|aws-cn|aws-us-gov):kms:([a-z]{2}(?:-[a-z]+)+-\d+):(\d{12}):key\/((?:mrk-[a-f0-9]{32})|[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})$/;

/** The parts of a KMS key ARN. */
export interface KmsKeyArn {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  readonly keyId: string;
}

/**
 * The parts of `arn`, or undefined when it is not a KMS key ARN of the form KEY_ARN accepts with
 * a Region of its partition.
 */
export function parseKmsKeyArn(arn: string): KmsKeyArn | undefined {
  const match = KEY_ARN.exec(arn);
  if (!match) return undefined;
  const [, partition, region, account, keyId] = match as unknown as [string, string, string, string, string];
  if (partitionOfRegion(region) !== partition) return undefined;
  return { partition, region, account, keyId };
}

/**
 * What is wrong with `arn` as the key cosign signatures are verified against, or undefined. Only a
 * key ARN: an alias can be pointed at another key by whoever may update it, and IAM grants
 * kms:GetPublicKey on keys, not aliases; a bare key id or alias name names no Region or account.
 */
export function kmsKeyArnProblem(arn: string): string | undefined {
  if (parseKmsKeyArn(arn)) return undefined;
  const example = 'arn:aws:kms:<region>:<account>:key/<key id>';
  if (/^arn:[^:]*:kms:[^:]*:[^:]*:alias\//.test(arn) || arn.startsWith('alias/'))
    return `"${arn}" is an alias; name the key's ARN (${example}), as "aws kms describe-key --key-id ${arn.replace(/^arn:.*:(alias\/)/, '$1')}" shows it: an alias can be moved to another key, and IAM grants kms:GetPublicKey on keys`;
  const parts = KEY_ARN.exec(arn);
  if (parts)
    return `"${arn}" names Region ${parts[2]}, which is not in partition ${parts[1]} (it is in ${partitionOfRegion(parts[2]!)})`;
  if (!arn.startsWith('arn:'))
    return `"${arn}" is not an ARN; name the key by its ARN (${example}), which says its Region and account`;
  const partition = arn.split(':')[1];
  if (partition !== undefined && /^aws(-[a-z]+)+$/.test(partition) && !/^aws-(cn|us-gov)$/.test(partition))
    return `"${arn}" is in partition ${partition}, where cosign's awskms:// keys cannot be (aws, aws-cn and aws-us-gov only)`;
  return `"${arn}" is not a KMS key ARN (${example}, the key id a UUID or a multi-Region mrk- id)`;
}
