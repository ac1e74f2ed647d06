import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../functions/core/model/table-schema.ts';

export interface SluiceTableProps {
  /** @default - an AWS managed key */
  readonly encryptionKey?: kms.IKey;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** @default true */
  readonly deletionProtection?: boolean;
}

/** The one sluice table (specs, status and leases, inventories, gate state and audit): TABLE_SCHEMA, on demand. */
export class SluiceTable extends dynamodb.TableV2 {
  constructor(scope: Construct, id: string, props: SluiceTableProps = {}) {
    super(scope, id, {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_SCHEMA.timeToLiveAttribute,
      encryption: props.encryptionKey
        ? dynamodb.TableEncryptionV2.customerManagedKey(props.encryptionKey)
        : dynamodb.TableEncryptionV2.awsManagedKey(),
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      deletionProtection: props.deletionProtection ?? true,
    });
  }
}
