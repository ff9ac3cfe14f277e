/**
 * The README's screenshot of the privacy calculator: builds the page from web/ into a temporary
 * folder, serves it as `dpfit calculator` does, computes the README's DP-SGD example (Opacus's
 * schedule: N = 60000, B = 2400, 90 epochs, z = 1.5, delta = 1e-5) in Debian's headless Chromium
 * and writes the DP-SGD section to docs/figures/calculator.png (or the path given).
 *
 * Usage: npm run screenshot [-- OUT.png]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCalculatorServer } from '../src/cli/commands/calculator.js';
import { buildWeb } from './build-web.js';
import { chromiumAvailable, CHROMIUM_PATH, computeDpsgdOnPage, launchChromium } from './calculator-browser.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(ROOT, 'docs', 'figures', 'calculator.png'));
if (!chromiumAvailable()) throw new Error(`${CHROMIUM_PATH} is absent: apt-get install -y chromium`);

const dir = mkdtempSync(join(tmpdir(), 'dpfit-screenshot-'));
try {
  await buildWeb(join(dir, 'web'));
  const server = await startCalculatorServer({ root: join(dir, 'web') });
  const browser = await launchChromium({ width: 960, height: 1000 });
  try {
    const result = await computeDpsgdOnPage(browser.page, server.url, { datasetSize: '60000', batchSize: '2400', epochs: '90', noiseMultiplier: '1.5', delta: '1e-5' });
    await browser.page.locator('#dpsgd-calibrate').getByLabel('Target epsilon').fill('3');
    await browser.page.waitForSelector('#dpsgd-calibrate[data-state="done"]', { timeout: 60_000 });
    await browser.page.locator('section').first().screenshot({ path: out });
    console.log(`wrote ${out} (epsilon ${result.epsilonRdp} by RDP, ${result.epsilonPld} by PLD)`);
  } finally {
    await browser.close();
    await server.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
