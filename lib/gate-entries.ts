import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { urlEntry } from './function-entry.ts';
import { Construct } from 'constructs';
import type { Gate, GateAction } from '../functions/core/config/index.ts';
import { gateAliasName } from '../functions/core/access/entry.ts';

export interface GateEntriesProps {
  readonly gates: readonly Gate[];
  readonly gateFunction: lambda.Function;
}

/** Which of a gate's requests `grantGateRequests` allows. */
export interface GateRequestGrantOptions {
  /**
   * The actions the grantee may request.
   * @default - open and close
   */
  readonly actions?: GateAction[];
}

const ACTIONS: readonly GateAction[] = ['open', 'close'];

/**
 * One entry per gate and action: an alias `<action>_<gate>` of the gate function with an
 * `AWS_IAM` function URL. IAM decides who may invoke which URL; the function records the verified
 * caller and refuses a request for another gate or action than the entry it came through.
 */
export class GateEntries extends Construct {
  private readonly entries = new Map<string, { alias: lambda.Alias; url: lambda.FunctionUrl }>();

  constructor(scope: Construct, id: string, props: GateEntriesProps) {
    super(scope, id);
    for (const gate of props.gates) {
      for (const action of ACTIONS) {
        const aliasName = gateAliasName(gate.name, action);
        this.entries.set(aliasName, urlEntry(this, aliasName, props.gateFunction, aliasName));
      }
    }
  }

  /** The function URL of a gate's entry for `action`. */
  url(gate: string, action: GateAction): string {
    return this.entry(gate, action).url.url;
  }

  /**
   * Lets `grantee` send signed `actions` requests for `gate` through its entries: invoking the
   * entries' URLs (and the function only via them), and looking the URLs up.
   */
  grant(grantee: iam.IGrantable, gate: string, options: GateRequestGrantOptions = {}): iam.Grant {
    const actions = options.actions ?? [...ACTIONS];
    let grant: iam.Grant | undefined;
    for (const action of actions) {
      const { alias, url } = this.entry(gate, action);
      const invoke = url.grantInvokeUrl(grantee);
      const lookup = iam.Grant.addToPrincipal({
        grantee,
        actions: ['lambda:GetFunctionUrlConfig'],
        resourceArns: [alias.functionArn],
      });
      grant = grant ? grant.combine(invoke).combine(lookup) : invoke.combine(lookup);
    }
    if (!grant) throw new Error(`grantGateRequests for gate '${gate}': name at least one action`);
    return grant;
  }

  private entry(gate: string, action: GateAction) {
    if (!ACTIONS.includes(action))
      throw new Error(`gate action '${String(action)}' is not one of ${ACTIONS.join(', ')}`);
    const entry = this.entries.get(gateAliasName(gate, action));
    if (entry) return entry;
    const gates = [...new Set([...this.entries.keys()].map((name) => name.replace(/^(open|close)_/, '')))];
    throw new Error(
      `gate '${gate}' is not one of this Sluice's gates (${gates.length > 0 ? gates.join(', ') : 'none are defined'})`,
    );
  }
}
