import { App } from 'aws-cdk-lib';

// The CDK app. The Sluice construct (lib/sluice.ts) and the example stack are added with the CDK issue.
const app = new App();
app.synth();
