import type { Page } from 'playwright-core';
import { accessibilityViolations, ensureConsoleBuilt, useBrowser } from '../harness/browser';
import { useNotificationReceiver } from '../harness/notification-receiver';
import { useStack } from '../harness/stack';

/**
 * The console says when an incident's approvals and escalations reached nobody (docs/escalation.md,
 * "When nobody would be paged"), in headless Chromium against the real stack. No
 * FOGHORN_WEBHOOK_HOME_CHANNEL: an incident no policy matches pages nobody. `Custom` signals of an
 * unregistered cluster with no runbook: the triage escalates them at once.
 */

jest.setTimeout(180_000);

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useNotificationReceiver>>;
let browser: Awaited<ReturnType<typeof useBrowser>>;
let page: Page;
const UI_WAIT = { timeout: 60_000 };

beforeAll(async () => {
  ensureConsoleBuilt();
  receiver = await useNotificationReceiver();
  s = await useStack();
  browser = await useBrowser();
  page = await browser.newPage();
  await page.goto(`${s.baseUrl}/`);
  await page.getByLabel('API token').fill(s.tokens.viewer);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Incidents' }).waitFor(UI_WAIT);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await receiver?.stop();
});

afterEach(() => expect(browser.takeProblems()).toEqual([]));

async function escalated(namespace: string): Promise<string> {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: {
      resource: 'Deployment/api',
      namespace,
      signalType: 'Custom',
      severity: 'high',
      description: 'console test',
    },
  });
  expect(res.status).toBe(201);
  const name = res.body.metadata.name as string;
  await s.eventually(
    () => s.call('GET', `/incidents/${name}/timeline`, { token: s.tokens.viewer }),
    (r) => r.body.events?.some((e: { type: string }) => e.type === 'Notification'),
    60_000,
  );
  return name;
}

async function open(name: string): Promise<void> {
  await page.evaluate(
    (h) => ((globalThis as unknown as { location: { hash: string } }).location.hash = h),
    `#/incidents/${name}`,
  );
  await page.getByRole('heading', { level: 1, name: new RegExp(name) }).waitFor(UI_WAIT);
  await page.locator('li[data-type="Notification"]').first().waitFor(UI_WAIT);
}

it('warns at the top of an incident whose escalation paged nobody, saying why', async () => {
  const name = await escalated('nowhere');
  await open(name);
  const warning = page.getByRole('alert').filter({ hasText: 'Nobody was paged.' });
  await warning.waitFor(UI_WAIT);
  await warning
    .getByText(
      /escalation policy default: the chat home channel is not set \(FOGHORN_WEBHOOK_HOME_CHANNEL\); nobody was notified/,
    )
    .waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await browser.screenshot(page, '40-incident-nobody-paged');
});

it('says nothing of the kind when the escalation reached someone', async () => {
  const policy = await s.call('POST', '/escalation-policies', {
    token: s.tokens.admin,
    body: {
      name: 'console-paged',
      match: { namespaces: ['paged'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack') }] }],
    },
  });
  expect(policy.status).toBe(201);
  const name = await escalated('paged');
  await open(name);
  await page.locator('li[data-type="Notification"]', { hasText: 'Notified L1 via slack' }).waitFor(UI_WAIT);
  expect(await page.getByRole('alert').filter({ hasText: 'Nobody was paged.' }).count()).toBe(0);
});
