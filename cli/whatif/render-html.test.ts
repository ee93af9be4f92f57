// The HTML report in a real browser: headless Chromium (when installed) loads the page from a file with
// the network off and checks that both charts are drawn and that nothing is fetched.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { WhatIfReport } from '../../engine/index.ts';
import { escapeHtml, renderHtml } from './render-html.ts';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-html-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const usage = (requested: number, allocatable: number) => ({ requested, allocatable });
const report: WhatIfReport = {
  schema: 'karpenter-ts/whatif-report@1',
  input: { sources: ['<cluster>.yaml'], region: 'ap-northeast-2', now: '2026-11-30T11:30:00.000Z', mode: 'consolidate', exact: false },
  costPerHourBefore: 0.6, costPerHourAfter: 0.2, costPerMonthBefore: 438, costPerMonthAfter: 146, savingsPerHour: 0.4,
  lowerBoundPerHour: 0.15, lowerBoundStatus: 'optimal', efficiencyBefore: 0.25, efficiencyAfter: 0.75,
  counts: { nodesBefore: 2, nodesAfter: 1, pods: 3, pending: 0, unschedulable: 0 },
  nodes: [
    { name: 'a', fate: 'removed', pricePerHour: 0.3, priceKnown: true, managed: true, cpu: usage(500, 2000), memory: usage(1 << 30, 8 << 30), pods: 1 },
    { name: 'b', fate: 'removed', pricePerHour: 0.3, priceKnown: true, managed: true, cpu: usage(1000, 2000), memory: usage(1 << 30, 8 << 30), pods: 2 },
    { name: 'c', fate: 'new', pricePerHour: 0.2, priceKnown: true, managed: true, cpu: usage(1500, 2000), memory: usage(2 << 30, 8 << 30), pods: 3 },
  ],
  moves: [{ step: 1, kind: 'replace', remove: ['a', 'b'], add: ['c'], pods: [], savingsPerHour: 0.4, reason: 'underutilized' }],
  unschedulable: [], kept: [], warnings: [],
};

describe('HTML report', () => {
  it('escapes what it prints', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(renderHtml(report)).toContain('&lt;cluster&gt;.yaml');
  });

  it.skipIf(!existsSync(CHROMIUM))('renders both charts in headless Chromium without fetching anything', async () => {
    const page = join(dir, 'report.html');
    writeFileSync(page, renderHtml(report));
    // A fresh user-data-dir: playwright takes it as the persistent context's directory.
    const browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const tab = await browser.newPage();
      const requests: string[] = [];
      tab.on('request', (r) => requests.push(r.url()));
      await tab.goto(pathToFileURL(page).href);
      const costBars = await tab.locator('#cost-chart .cost-bar rect').evaluateAll((els) => els.map((e) => (e as SVGRectElement).getBBox().height));
      expect(costBars).toHaveLength(2);
      expect(costBars[0]!).toBeGreaterThan(costBars[1]!);
      expect(costBars[1]! / costBars[0]!).toBeCloseTo(0.2 / 0.6, 2);
      expect(await tab.locator('#cost-chart .lower-bound line').count()).toBe(1);
      const util = await tab.locator('#util-chart .node-util').evaluateAll((els) => els.map((e) => ({
        node: e.getAttribute('data-node'), cpu: (e.querySelector('rect.cpu') as SVGRectElement).getBBox().width,
      })));
      expect(util.map((u) => u.node)).toEqual(['a', 'b', 'c']);
      expect(util[0]!.cpu).toBeCloseTo(75, 0);
      expect(util[2]!.cpu).toBeCloseTo(225, 0);
      expect(await tab.locator('table#nodes tbody tr').count()).toBe(3);
      expect(requests).toEqual([pathToFileURL(page).href]);
    } finally {
      await browser.close();
    }
  });
});
