#!/usr/bin/env node
// npm bin entry: runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

// Node 20 is supported by this CLI; the SDK's notice about its future Node 22 floor is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

register();
await import('./sluice.ts');
