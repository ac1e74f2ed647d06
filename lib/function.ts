import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BUNDLE_HANDLER, handlerCode, handlerHasSourceMaps, type HandlerName } from './bundling.ts';

export interface SluiceFunctionProps {
  readonly handler: HandlerName;
  readonly description: string;
  /** The function's role; it is granted writing to the function's log group. */
  readonly role: iam.Role;
  readonly environment: Record<string, string>;
  readonly memorySize: number;
  readonly timeout: Duration;
  /** @default Runtime.NODEJS_22_X */
  readonly runtime?: lambda.Runtime;
  /** @default ARM_64 */
  readonly architecture?: lambda.Architecture;
  /** @default - none */
  readonly layers?: lambda.ILayerVersion[];
  readonly logRetention: logs.RetentionDays;
  /** @default - CloudWatch Logs' own encryption */
  readonly logEncryptionKey?: kms.IKey;
  /** @default - none reserved */
  readonly reservedConcurrentExecutions?: number;
  /** @default - not in a VPC */
  readonly vpc?: ec2.IVpc;
  readonly vpcSubnets?: ec2.SubnetSelection;
  readonly securityGroups?: ec2.ISecurityGroup[];
}

/** One sluice handler as a Node.js function (22 unless `runtime` says 20) with its own log group; its code is the package's prebuilt bundle or bundled at synth (lib/bundling.ts). */
export class SluiceFunction extends Construct {
  readonly function: lambda.Function;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: SluiceFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      encryptionKey: props.logEncryptionKey,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.logGroup.grantWrite(props.role);
    this.function = new lambda.Function(this, 'Function', {
      code: handlerCode(props.handler),
      handler: BUNDLE_HANDLER,
      runtime: props.runtime ?? lambda.Runtime.NODEJS_22_X,
      architecture: props.architecture ?? lambda.Architecture.ARM_64,
      description: props.description,
      role: props.role,
      memorySize: props.memorySize,
      timeout: props.timeout,
      environment: {
        // Only where the bundle has its maps: the package's prebuilt bundles ship none.
        ...(handlerHasSourceMaps(props.handler) && { NODE_OPTIONS: '--enable-source-maps' }),
        ...props.environment,
      },
      layers: props.layers,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logGroup: this.logGroup,
      vpc: props.vpc,
      vpcSubnets: props.vpc ? props.vpcSubnets : undefined,
      securityGroups: props.vpc ? props.securityGroups : undefined,
    });
    // The role's policies must exist before the function runs (the spec resources call it at deploy).
    this.function.node.addDependency(props.role);
  }
}
