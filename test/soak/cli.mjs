#!/usr/bin/env node
// `npm run soak -- --hours H --seed S`: the randomized fault soak (soak.ts) through tsx's loader,
// as the benchmarks run (a development tool over the sources; the image holds neither test/ nor tsx).
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
register();
const { main } = await import('./soak.ts');
process.exitCode = await main(process.argv.slice(2));
