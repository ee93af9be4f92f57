#!/usr/bin/env node
// `npm run bench -- <suite> [--json]`: runs a benchmark suite from bench/ through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../bench/run.ts');
process.exitCode = await main(process.argv.slice(2));
