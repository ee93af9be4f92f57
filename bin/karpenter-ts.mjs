#!/usr/bin/env node
// The `karpenter-ts` command. The project is written in TypeScript and runs from source through tsx's
// loader, so there is no separate build step besides the WebAssembly solver (built by `npm ci`).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
