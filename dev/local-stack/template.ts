// A synthesized CloudFormation template as the local deploy reads it: its resources, their
// physical names and attributes as CloudFormation would give them, and the intrinsic functions
// CDK emits, resolved. What it does not understand (a condition, an import, an attribute it
// cannot give) is an error naming the resource, never a guess.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DependsOn?: string | string[];
}

export interface Template {
  readonly Resources: Record<string, TemplateResource>;
  readonly Outputs?: Record<
    string,
    { readonly Value: unknown; readonly Description?: string; readonly Export?: { readonly Name: unknown } }
  >;
}

/** Where the stack is "deployed": its name, account and Region, and where its function URLs answer. */
export interface StackPlace {
  readonly stackName: string;
  readonly account: string;
  readonly region: string;
  /** The base URL of the local function URLs (`<base>/<function>/<qualifier>/`). */
  readonly functionUrlBase: string;
}

export function loadTemplate(assemblyDir: string, stackName: string): Template {
  const file = join(assemblyDir, `${stackName}.template.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Template;
  } catch (error) {
    throw new Error(`cannot read the template of stack ${stackName} (${file}): ${(error as Error).message}`);
  }
}

/** A name as CloudFormation makes one: the stack's name, the logical id, at most `max` characters. */
const generatedName = (place: StackPlace, logicalId: string, max = 64) =>
  `${place.stackName}-${logicalId}`.slice(0, max);

/** The resources' physical names and attributes, resolved on demand. */
export class ResolvedTemplate {
  constructor(
    readonly template: Template,
    readonly place: StackPlace,
  ) {}

  resource(logicalId: string): TemplateResource {
    const found = this.template.Resources[logicalId];
    if (!found) throw new Error(`the template has no resource '${logicalId}'`);
    return found;
  }

  /** The logical ids of the resources of `type`, in template order. */
  ofType(type: string): string[] {
    return Object.entries(this.template.Resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([logicalId]) => logicalId);
  }

  /** What `Ref` gives for a resource. */
  ref(logicalId: string): string {
    const { Type, Properties = {} } = this.resource(logicalId);
    const { account, region } = this.place;
    const named = (property: string, max?: number) =>
      typeof Properties[property] === 'string'
        ? (Properties[property] as string)
        : generatedName(this.place, logicalId, max);
    switch (Type) {
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${region}:${account}:${named('TopicName', 256)}`;
      case 'AWS::SQS::Queue':
        return `https://sqs.${region}.amazonaws.com/${account}/${named('QueueName', 80)}`;
      case 'AWS::Lambda::Alias':
        return `${this.attribute(this.text(Properties.FunctionName), 'Arn', true)}:${this.text(Properties.Name)}`;
      case 'AWS::Lambda::LayerVersion':
        return `arn:aws:lambda:${region}:${account}:layer:${generatedName(this.place, logicalId)}:1`;
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return named('TableName', 255);
      case 'AWS::Lambda::Function':
        return named('FunctionName');
      case 'AWS::IAM::Role':
        return named('RoleName');
      case 'AWS::CloudWatch::Alarm':
        return named('AlarmName', 255);
      case 'AWS::Events::EventBus':
      case 'AWS::Scheduler::ScheduleGroup':
        return named('Name');
      case 'AWS::Logs::LogGroup':
        return named('LogGroupName', 512);
      case 'AWS::CloudWatch::Dashboard':
        return named('DashboardName', 255);
      case 'AWS::SSM::Document':
        return named('Name', 128);
      default:
        return generatedName(this.place, logicalId);
    }
  }

  /** What `Fn::GetAtt` gives; `byName` resolves a function given by name or ARN (an alias's FunctionName). */
  attribute(logicalIdOrName: string, attribute: string, byName = false): string {
    const logicalId = byName ? this.functionLogicalId(logicalIdOrName) : logicalIdOrName;
    const { Type, Properties = {} } = this.resource(logicalId);
    const { account, region } = this.place;
    const name = this.ref(logicalId);
    const arns: Record<string, string> = {
      'AWS::Lambda::Function': `arn:aws:lambda:${region}:${account}:function:${name}`,
      'AWS::IAM::Role': `arn:aws:iam::${account}:role/${name}`,
      'AWS::DynamoDB::Table': `arn:aws:dynamodb:${region}:${account}:table/${name}`,
      'AWS::DynamoDB::GlobalTable': `arn:aws:dynamodb:${region}:${account}:table/${name}`,
      'AWS::SQS::Queue': `arn:aws:sqs:${region}:${account}:${name.split('/').at(-1)}`,
      'AWS::CloudWatch::Alarm': `arn:aws:cloudwatch:${region}:${account}:alarm:${name}`,
      'AWS::Events::EventBus': `arn:aws:events:${region}:${account}:event-bus/${name}`,
      'AWS::Scheduler::ScheduleGroup': `arn:aws:scheduler:${region}:${account}:schedule-group/${name}`,
      'AWS::Logs::LogGroup': `arn:aws:logs:${region}:${account}:log-group:${name}:*`,
      'AWS::SNS::Topic': name,
    };
    if (attribute === 'Arn' && arns[Type]) return arns[Type];
    if (Type === 'AWS::SNS::Topic' && attribute === 'TopicName') return name.split(':').at(-1)!;
    if (Type === 'AWS::SQS::Queue' && attribute === 'QueueName') return name.split('/').at(-1)!;
    if (Type === 'AWS::Lambda::Version' && attribute === 'Version') return '1';
    if (Type === 'AWS::Lambda::Url' && attribute === 'FunctionUrl') {
      const target = this.text(Properties.TargetFunctionArn);
      const fn = this.ref(this.functionLogicalId(target));
      const qualifier = typeof Properties.Qualifier === 'string' ? Properties.Qualifier : '$LATEST';
      return `${this.place.functionUrlBase}/${fn}/${qualifier}/`;
    }
    throw new Error(
      `resource '${logicalId}' (${Type}): the local deploy cannot give attribute '${attribute}'`,
    );
  }

  /** The logical id of the function a name or ARN (possibly qualified) resolved to. */
  functionLogicalId(nameOrArn: string): string {
    const name = nameOrArn.startsWith('arn:') ? nameOrArn.split(':')[6]! : nameOrArn;
    const found = this.ofType('AWS::Lambda::Function').find((id) => this.ref(id) === name);
    if (!found) throw new Error(`the template has no function named '${name}'`);
    return found;
  }

  /** A value with every intrinsic function resolved. */
  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1 && entries[0]![0].startsWith('Fn::')) return this.intrinsic(...entries[0]!);
    if (entries.length === 1 && entries[0]![0] === 'Ref') return this.refOf(this.text(entries[0]![1]));
    return Object.fromEntries(entries.map(([key, item]) => [key, this.resolve(item)]));
  }

  /** A value resolved to a string, or an error saying what it was. */
  text(value: unknown): string {
    const resolved = this.resolve(value);
    if (typeof resolved !== 'string' && typeof resolved !== 'number')
      throw new Error(`expected a string, got ${JSON.stringify(resolved)}`);
    return String(resolved);
  }

  private refOf(name: string): string {
    const { account, region, stackName } = this.place;
    const pseudo: Record<string, string> = {
      'AWS::AccountId': account,
      'AWS::Region': region,
      'AWS::Partition': 'aws',
      'AWS::StackName': stackName,
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackId': `arn:aws:cloudformation:${region}:${account}:stack/${stackName}/local`,
    };
    return pseudo[name] ?? this.ref(name);
  }

  private intrinsic(name: string, argument: unknown): unknown {
    const list = (count: number) => {
      if (!Array.isArray(argument) || argument.length !== count)
        throw new Error(`${name} takes a list of ${count}, got ${JSON.stringify(argument)}`);
      return argument as unknown[];
    };
    switch (name) {
      case 'Fn::GetAtt': {
        const [logicalId, attribute] = Array.isArray(argument)
          ? (argument as string[])
          : String(argument).split(/\.(.*)/s);
        return this.attribute(String(logicalId), String(attribute));
      }
      case 'Fn::Join': {
        const [separator, items] = list(2);
        return (this.resolve(items) as unknown[]).map((item) => this.text(item)).join(String(separator));
      }
      case 'Fn::Select': {
        const [index, items] = list(2);
        return (this.resolve(items) as unknown[])[Number(this.resolve(index))];
      }
      case 'Fn::Split': {
        const [separator, source] = list(2);
        return this.text(source).split(String(separator));
      }
      case 'Fn::Sub': {
        const [text, variables = {}] = typeof argument === 'string' ? [argument] : list(2);
        const vars = variables as Record<string, unknown>;
        return String(text).replace(/\$\{([^}!][^}]*)\}/g, (_, key: string) => {
          if (key in vars) return this.text(vars[key]);
          const [logicalId, attribute] = key.split(/\.(.*)/s);
          return attribute ? this.attribute(logicalId!, attribute) : this.refOf(logicalId!);
        });
      }
      default:
        throw new Error(`the local deploy does not understand ${name} (${JSON.stringify(argument)})`);
    }
  }
}
