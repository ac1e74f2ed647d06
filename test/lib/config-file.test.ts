// One sluice.yaml for the CLI and the construct: Sluice.fromConfigFile, and the runnable example
// app in examples/cdk-app (synthesized as the CDK CLI runs it, then cfn-lint).
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundle-options.ts';
import { Sluice } from '../../lib/index.ts';
import { loadConfigFile } from '../../functions/core/config/index.ts';
import { cfnLint, describeMatch, readTemplate } from '../support/cfn-lint.ts';
import { ACCOUNT, REGION } from './synth.ts';
import { synthExampleApp } from './synth.ts';

process.env.CDK_VALIDATION = 'false';

const EXAMPLE = join(PROJECT_ROOT, 'examples', 'cdk-app', 'sluice.yaml');
const example = await synthExampleApp(
  {},
  { file: join('examples', 'cdk-app', 'app.ts'), stackName: 'SluiceFromConfigFile' },
);
afterAll(() => example.cleanup());

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

function stack(): Stack {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Test', { env: { account: ACCOUNT, region: REGION } });
}

function configFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sluice-config-file-')), 'sluice.yaml');
  writeFileSync(path, text);
  return path;
}

const KUBECONFIG_FILE = `deliveries:
  - name: web
    source: { url: "oci://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/web", tag: v1 }
    interval: 2h
    cluster: { kubeconfig: ~/.kube/config }
`;

describe('examples/cdk-app: a CDK app from the sluice.yaml the CLI reads', () => {
  it('the CLI loads the same file', () => {
    const config = loadConfigFile(EXAMPLE);
    expect(config.deliveries.map((d) => d.name)).toEqual(['oddy-test']);
    expect(config.gates.map((g) => g.name)).toEqual(['no-deploy-friday', 'sre-approval']);
  });

  it('synthesizes the file’s gates and delivery, with the app’s own props, and cfn-lint finds no error', () => {
    const resources = (readTemplate(example.templatePath) as { Resources: Resources }).Resources;
    const text = JSON.stringify(resources);
    expect(text).toContain('oddy-test');
    expect(text).toContain('no-deploy-friday');
    expect(text).toContain('Europe/Berlin');
    const timeouts = Object.values(resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => r.Properties.Timeout);
    expect(timeouts).toContain(600);
    expect(
      cfnLint([example.templatePath])
        .filter((m) => m.Level === 'Error')
        .map(describeMatch),
    ).toEqual([]);
  }, 120_000);
});

describe('Sluice.fromConfigFile', () => {
  it('takes what loadConfigFile() parses from the same file, where new Sluice(…, loadConfigFile()) does not', () => {
    const fromFile = Template.fromStack(
      (() => {
        const s = stack();
        Sluice.fromConfigFile(s, 'Sluice', EXAMPLE);
        return s;
      })(),
    );
    const direct = stack();
    // The parsed form (intervalMs, …) is not the props' form: the reason fromConfigFile exists.
    expect(() => new Sluice(direct, 'Sluice', loadConfigFile(EXAMPLE) as never)).toThrow(/intervalMs/);
    expect(JSON.stringify(fromFile.toJSON())).toContain('"rate(10 minutes)"');
  });

  it('a kubeconfig delivery is deployable when clusters names its EKS cluster, and not otherwise', () => {
    const path = configFile(KUBECONFIG_FILE);
    expect(() => Sluice.fromConfigFile(stack(), 'Sluice', path)).toThrow(
      `${path} (Sluice props): deliveries[web].cluster: a kubeconfig file cannot be read by the reconcile function`,
    );
    const s = stack();
    Sluice.fromConfigFile(s, 'Sluice', path, {
      clusters: { web: { eks: { name: 'prod', region: REGION } } },
      reconcileTimeout: Duration.minutes(10),
    });
    expect(JSON.stringify(Template.fromStack(s).toJSON())).toContain('"rate(2 hours)"');
  });

  it('names the file for a bad file, and the override for a delivery the file does not have', () => {
    const bad = configFile('deliveries:\n  - name: web\n    interval: soon\n');
    expect(() => Sluice.fromConfigFile(stack(), 'Sluice', bad)).toThrow(
      new RegExp(`^${bad}: deliveries`, 'm'),
    );
    expect(() => Sluice.fromConfigFile(stack(), 'Sluice', join(tmpdir(), 'no-such-sluice.yaml'))).toThrow(
      /no-such-sluice\.yaml: cannot read the file/,
    );
    expect(() =>
      Sluice.fromConfigFile(stack(), 'Sluice', configFile(KUBECONFIG_FILE), {
        clusters: { api: { eks: { name: 'prod', region: REGION } } },
      }),
    ).toThrow(/clusters\.api: no delivery "api" in the file \(it has web\)/);
  });
});
