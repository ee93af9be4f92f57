#!/usr/bin/env node
// `npm run bench -- <suite> [--json]`: runs a benchmark suite from bench/ through tsx's loader (a development
// tool: benchmarks measure the sources as tests do; the image holds neither bench/ nor tsx).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../bench/run.ts');
process.exitCode = await main(process.argv.slice(2));
