import { Aspects, CfnOutput, Stack, Token } from 'aws-cdk-lib';
import { Construct, type IConstruct } from 'constructs';
import {
  STACK_OUTPUTS,
  stackOutputExportName,
  type StackOutputKey,
} from '../functions/core/runtime-contract.ts';

/** What CloudFormation allows in an export name (and a stack name is made of). */
const EXPORT_NAME = /^[A-Za-z0-9:-]{1,200}$/;

/** The export prefixes taken per stack: two Sluices exporting under one prefix would collide at deploy. */
const takenPrefixes = new WeakMap<Stack, Set<string>>();

export interface SluiceOutputsProps {
  /** `<prefix>-<key>` export names. */
  readonly exportPrefix: string;
  /** `<id><key>` logical ids (the construct id of the Sluice, letters and digits). */
  readonly logicalIdPrefix: string;
}

/**
 * The Sluice's stack outputs, for the CLI (`sluice --stack <name>`) and for people: each with a
 * description and an export name `<prefix>-<key>` that stays the same across deploys. Outputs of
 * parts made by a later grant (break-glass, rollout control) are added when the app synthesizes.
 */
export class SluiceOutputs extends Construct {
  readonly exportPrefix: string;
  private readonly logicalIdPrefix: string;
  private readonly late: (() => void)[] = [];

  constructor(scope: Construct, id: string, props: SluiceOutputsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const prefix = props.exportPrefix;
    if (!Token.isUnresolved(prefix)) {
      if (!EXPORT_NAME.test(prefix))
        throw new Error(
          `exportPrefix '${prefix}': an export name holds only letters, digits, hyphens and colons (1 to 200)`,
        );
      const taken = takenPrefixes.get(stack) ?? new Set<string>();
      if (taken.has(prefix))
        throw new Error(
          `exportPrefix '${prefix}' is already taken by another Sluice in stack ${stack.stackName}: give each Sluice its own exportPrefix`,
        );
      taken.add(prefix);
      takenPrefixes.set(stack, taken);
    }
    this.exportPrefix = prefix;
    this.logicalIdPrefix = props.logicalIdPrefix.replace(/[^A-Za-z0-9]/g, '');
    // A grant made after the constructor (break-glass, rollout control) adds its outputs at synthesis.
    Aspects.of(this).add({
      visit: (node: IConstruct) => {
        if (node !== this) return;
        for (const add of this.late.splice(0)) add();
      },
    });
  }

  /** An output now. */
  add(key: StackOutputKey, value: string, description: string): CfnOutput {
    const output = new CfnOutput(this, key, {
      value,
      description: `sluice: ${description}`,
      exportName: stackOutputExportName(this.exportPrefix, key),
    });
    output.overrideLogicalId(`${this.logicalIdPrefix}${key}`);
    return output;
  }

  /** An output made at synthesis if `value()` then gives one (a part a grant may make). */
  addLater(key: StackOutputKey, value: () => string | undefined, description: string): void {
    this.late.push(() => {
      const resolved = value();
      if (resolved !== undefined) this.add(key, resolved, description);
    });
  }
}

export { STACK_OUTPUTS };
