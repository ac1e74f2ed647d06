#!/usr/bin/env node
// npm bin entry. The installed package runs the compiled CLI (dist/bin/sluice.js); a clone of the
// repository, which has the TypeScript sources and no build, runs them through tsx's loader.
import { existsSync } from 'node:fs';

// Node 20 is supported by this CLI; the SDK's notice about its future Node 22 floor is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const source = new URL('./sluice.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/bin/sluice.js');
}
