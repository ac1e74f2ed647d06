// A CDK app whose gates and deliveries are examples/cdk-app/sluice.yaml, the file the CLI reads:
//   npx cdk synth --app 'npx tsx examples/cdk-app/app.ts'
// The construct's own settings (here the function's timeout) come beside the file.
import { App, Duration, Stack } from 'aws-cdk-lib';
import { fileURLToPath } from 'node:url';
import { Sluice } from '../../lib/index.ts';

const app = new App();
const stack = new Stack(app, 'SluiceFromConfigFile', {
  env: { account: '123456789012', region: 'ap-northeast-1' },
});
Sluice.fromConfigFile(stack, 'Sluice', fileURLToPath(new URL('sluice.yaml', import.meta.url)), {
  reconcileTimeout: Duration.minutes(10),
});
app.synth();
