// Screenshots of the what-if HTML report for docs/whatif.md, taken in headless Chromium:
//
//   node --import tsx scripts/whatif-screenshots.ts [CHROMIUM]     (default /usr/bin/chromium)
//
// Renders the report of examples/snapshots/inflate.msgpack (consolidate mode, at the snapshot's time) and
// writes docs/img/whatif-report.png (the top of the page) and docs/img/whatif-report-full.png (all of it).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { cliEngine } from '../cli/engine.ts';
import { runJob } from '../cli/whatif/job.ts';
import { renderHtml } from '../cli/whatif/render-html.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const OUT = join(ROOT, 'docs/img');

async function main(): Promise<void> {
  const engine = await cliEngine(1);
  const r = await runJob(
    { index: 0, snapshot: 'examples/snapshots/inflate.msgpack', exact: false, defaultNow: 0, cwd: ROOT, variant: {} },
    engine,
  ).finally(() => engine.close());
  if (!r.ok) throw new Error(r.error);
  const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-shots-'));
  const page = join(dir, 'report.html');
  writeFileSync(page, renderHtml(r.report));
  const browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: process.argv[2] ?? '/usr/bin/chromium',
    viewport: { width: 1280, height: 1100 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const tab = await browser.newPage();
    await tab.goto(pathToFileURL(page).href);
    mkdirSync(OUT, { recursive: true });
    await tab.screenshot({ path: join(OUT, 'whatif-report.png') });
    await tab.screenshot({ path: join(OUT, 'whatif-report-full.png'), fullPage: true });
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`wrote ${join(OUT, 'whatif-report.png')} and whatif-report-full.png\n`);
}

await main();
