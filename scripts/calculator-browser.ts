/**
 * Drives the privacy calculator page in Debian's headless Chromium (playwright-core with the
 * system browser: no browser download), for its test and for the README's screenshot. The flags
 * keep Chromium off the network (this machine's network is closed) and the profile is a fresh
 * temporary folder, removed on close.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.DPFIT_CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export interface Browser {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/** Starts Chromium on a fresh profile with one page of the given size. */
export async function launchChromium(viewport = { width: 1000, height: 1100 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'dpfit-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS, viewport });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface DpsgdForm {
  readonly datasetSize: string;
  readonly batchSize: string;
  readonly epochs: string;
  readonly noiseMultiplier: string;
  readonly delta: string;
}

export interface DpsgdPageResult {
  /** The exact doubles the page computed (data-value of its outputs). */
  readonly epsilonRdp: number;
  readonly epsilonPld: number;
  readonly steps: number;
  /** What the page says `--json` prints. */
  readonly json: { epsilon: number; event: unknown };
}

/** Opens the page and waits for its script (the page then computes every form's defaults by itself). */
export async function openCalculator(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector('html[data-ready="true"]');
}

/**
 * Fills the DP-SGD form as a user would (there is no button: the page recomputes as the fields
 * change, `web/live-form.ts`) and reads the results once the run for these inputs has ended,
 * the worker's PLD value and curve included. Filling a field sets the form's state to `pending`
 * at once, so `done` means done for the inputs filled.
 */
export async function computeDpsgdOnPage(page: Page, url: string, form: DpsgdForm, timeoutMs = 60_000): Promise<DpsgdPageResult> {
  await openCalculator(page, url);
  for (const [name, value] of Object.entries(form)) await page.locator('#dpsgd').getByLabel(labelOf(name)).fill(value);
  await page.waitForSelector('#dpsgd[data-state="done"], #dpsgd[data-state="error"]', { timeout: timeoutMs });
  const state = await page.getAttribute('#dpsgd', 'data-state');
  if (state !== 'done') throw new Error(`the page refused the form: ${await page.locator('#dpsgd .error').allTextContents()}`);
  const value = async (id: string) => Number(await page.getAttribute(`#${id}`, 'data-value'));
  return {
    epsilonRdp: await value('dpsgd-epsilon-rdp'),
    epsilonPld: await value('dpsgd-epsilon-pld'),
    steps: await value('dpsgd-steps'),
    json: JSON.parse((await page.locator('#dpsgd-json').textContent()) ?? 'null') as { epsilon: number; event: unknown },
  };
}

export function labelOf(name: string): string | RegExp {
  const labels: Record<string, RegExp> = {
    datasetSize: /^Dataset size N$/,
    batchSize: /^Batch size B$/,
    epochs: /^Epochs E$/,
    noiseMultiplier: /^Noise multiplier z$/,
    delta: /^delta$/,
  };
  return labels[name] ?? name;
}
