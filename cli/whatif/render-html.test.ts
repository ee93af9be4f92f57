// The HTML report in a real browser: headless Chromium (when installed at /usr/bin/chromium; the test
// skips otherwise) loads the page from a file and checks what a reader sees: the headline, risks before
// the charts, the legend, the breakdown and step charts, a histogram instead of a bar per node for a big
// cluster, the price caveats, and that nothing is fetched.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeRow, WhatIfReport } from '../../engine/index.ts';
import { cliEngine } from '../engine.ts';
import { runJob } from './job.ts';
import { escapeHtml, renderHtml } from './render-html.ts';

const CHROMIUM = '/usr/bin/chromium';
const EXAMPLE = fileURLToPath(new URL('../../examples/snapshots/inflate.msgpack', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-html-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let example: WhatIfReport;
beforeAll(async () => {
  const r = await runJob(
    { index: 0, snapshot: EXAMPLE, exact: false, mode: 'consolidate', defaultNow: 0, cwd: dir, variant: {} },
    await cliEngine(1),
  );
  if (!r.ok) throw new Error(r.error);
  example = r.report;
}, 60_000);

/** The example's report with its nodes repeated to `n` rows (a big cluster for the renderer, not a plan). */
function widened(r: WhatIfReport, n: number): WhatIfReport {
  const nodes: NodeRow[] = Array.from({ length: n }, (_, i) => ({
    ...r.nodes[i % r.nodes.length]!,
    name: `node-${i}`,
  }));
  return { ...r, nodes };
}

describe('HTML report', () => {
  it('escapes what it prints', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(renderHtml({ ...example, input: { ...example.input, sources: ['<cluster>.yaml'] } })).toContain(
      '&lt;cluster&gt;.yaml',
    );
  });

  it('has no script, no external resource, and formats money for people', () => {
    const html = renderHtml(example);
    expect(html).not.toMatch(/<script|<link|https?:\/\/(?!www\.w3)/);
    expect(html).toMatch(/Saves \$[\d,]+\.\d\d\/month \(\d+\.\d% of today&#39;s cost\)/);
    expect(html).not.toContain('$-');
  });
});

describe.skipIf(!existsSync(CHROMIUM))('HTML report in headless Chromium', () => {
  let browser: BrowserContext;
  beforeAll(async () => {
    // A fresh user-data-dir: playwright takes it as the persistent context's directory.
    browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
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
  }, 60_000);
  afterAll(async () => browser?.close());

  async function open(name: string, r: WhatIfReport) {
    const file = join(dir, name);
    writeFileSync(file, renderHtml(r));
    const tab = await browser.newPage();
    const requests: string[] = [];
    tab.on('request', (q) => requests.push(q.url()));
    await tab.goto(pathToFileURL(file).href);
    return { tab, requests, url: pathToFileURL(file).href };
  }

  it('shows the headline, the risks before the charts, the legend, the breakdown, the steps and the price caveats', async () => {
    const { tab, requests, url } = await open('example.html', example);
    const headline = await tab.locator('#headline .big').innerText();
    expect(headline).toMatch(/^Saves \$[\d,]+\.\d\d\/month \(\d+\.\d% of today's cost\)$/);
    const top = async (sel: string) => (await tab.locator(sel).first().boundingBox())!.y;
    expect(await top('#risks')).toBeLessThan(await top('#cost-chart'));
    expect(await tab.locator('#risks li.risk').count()).toBe(example.risks.length);
    expect(await tab.locator('#legend').innerText()).toMatch(
      /removed by the plan[\s\S]*efficiency = lower bound \/ cost/,
    );
    const parts = await tab.locator('#breakdown-chart .breakdown-bar').evaluateAll((els) =>
      els.map((x) => ({
        part: x.getAttribute('data-part'),
        v: Number(x.getAttribute('data-value')),
        w: (x.querySelector('rect') as SVGRectElement).getBBox().width,
      })),
    );
    expect(parts.at(-1)!.part).toBe('total');
    expect(parts.slice(0, -1).reduce((a, p) => a + p.v, 0)).toBeCloseTo(example.savingsPerHour, 6);
    expect(parts.every((p) => p.w > 0)).toBe(true);
    const steps = await tab
      .locator('#steps-chart .step-point')
      .evaluateAll((els) => els.map((x) => Number(x.getAttribute('data-cost'))));
    expect(steps).toHaveLength(example.moves.length + 2);
    expect(steps[0]).toBeCloseTo(example.costPerHourBefore, 5);
    expect(steps.at(-1)).toBeCloseTo(example.costPerHourAfter, 5);
    expect(await tab.locator('#prices').innerText()).toMatch(/Spot prices are estimates/);
    expect(await tab.locator('#util-chart .node-util').count()).toBe(example.nodes.length);
    expect(await tab.locator('#by-zone tbody tr').count()).toBe(example.savingsBreakdown.byZone.length);
    expect(requests).toEqual([url]);
  });

  it('shows a histogram and grouped rows, not a bar and a row per node, for a big cluster', async () => {
    const big = widened(example, 300);
    const { tab } = await open('big.html', big);
    expect(await tab.locator('#util-chart').count()).toBe(0);
    const bands = await tab
      .locator('#util-histogram .hist-band')
      .evaluateAll((els) =>
        els.map((x) => Number(x.getAttribute('data-before')) + Number(x.getAttribute('data-after'))),
      );
    expect(bands).toHaveLength(10);
    const before = big.nodes.filter((n) => n.fate !== 'new').length,
      after = big.nodes.filter((n) => n.fate !== 'removed').length;
    expect(bands.reduce((a, b) => a + b, 0)).toBe(before + after);
    const rows = await tab.locator('table#nodes tbody tr').count();
    expect(rows).toBeLessThan(20);
    const height = await tab.evaluate(() => document.body.scrollHeight);
    expect(height).toBeLessThan(6000);
  });
});
