import { execFileSync } from 'child_process';
import { mkdirSync, readFileSync } from 'fs';
import path from 'path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = path.join(__dirname, '../..');
export const SCREENSHOTS = path.join(ROOT, 'test-results/console');

/**
 * Builds the console (dist/console) when its sources changed, with the same script `npm test`
 * runs first (so this costs a hash when run from npm test). Must run before the API is
 * created: createApp reads index.html once.
 */
export function ensureConsoleBuilt(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'tools/build.mjs'), 'console'], { cwd: ROOT, stdio: 'inherit' });
}

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * Headless Chromium (the Debian package; never a downloaded browser) through playwright-core.
 * Every console error and page error is collected: a test fails on any it did not expect.
 */
export async function useBrowser() {
  const browser: Browser = await chromium.launch({
    executablePath: process.env.FOGHORN_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
    headless: true,
  });
  const problems: string[] = [];
  /** Console errors a test provokes on purpose (a refused request): each pattern excuses one. */
  const expected: RegExp[] = [];
  const contexts: BrowserContext[] = [];
  mkdirSync(SCREENSHOTS, { recursive: true });

  const report = (text: string) => {
    const i = expected.findIndex((re) => re.test(text));
    if (i >= 0) expected.splice(i, 1);
    else problems.push(text);
  };

  return {
    /** A fresh browser context (its own sessionStorage) and a page in it. */
    newPage: async (viewport = LAPTOP): Promise<Page> => {
      const context = await browser.newContext({ viewport, acceptDownloads: true });
      contexts.push(context);
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') report(`console error: ${m.text()} (${m.location().url})`);
      });
      page.on('pageerror', (e) => report(`page error: ${e.message}`));
      return page;
    },
    /** The next console error matching `pattern` is expected (e.g. the 403 of a forged request). */
    expectConsoleError: (pattern: RegExp) => expected.push(pattern),
    /** Errors seen so far that no test expected; clears the list. */
    takeProblems: (): string[] => problems.splice(0),
    screenshot: async (page: Page, name: string) => {
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    close: async () => {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
    },
  };
}

/** axe-core's rules for WCAG 2.1 A and AA: labels, names, contrast, landmarks, ARIA use. */
const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

interface AxeResults {
  violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
}

/**
 * Runs axe-core (the accessibility engine of Lighthouse and the axe browser extensions) in the
 * page and answers its WCAG 2.1 AA violations, one line each with the elements concerned. It is
 * evaluated through the DevTools protocol, so the page's CSP stays as strict as in production.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate(() => 'axe' in globalThis);
  if (!loaded) await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const results = await page.evaluate(
    (tags) =>
      (globalThis as unknown as { axe: { run(o: unknown): Promise<AxeResults> } }).axe.run({
        runOnly: { type: 'tag', values: tags },
      }),
    WCAG_AA,
  );
  return results.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
  );
}
