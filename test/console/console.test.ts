import { readFileSync } from 'fs';
import type { Page } from 'playwright-core';
import { runbookSpecSchema } from '../../contracts/runbooks';
import { revisionChange, scaleChange } from '../../domain/change-record';
import { recordChanges, recordRevision } from '../../store/changes';
import { InsightModel } from '../../store/models/insight';
import { createRunbook } from '../../store/runbooks';
import { approvalAwaitingDecision } from '../harness/approvals';
import { accessibilityViolations, ensureConsoleBuilt, PHONE, useBrowser } from '../harness/browser';
import { useStack } from '../harness/stack';
import { useStepReceiver } from '../harness/step-receiver';
import { dnsDownWebhook } from '../fixtures/alertmanager';
import { createGatedRunbook } from '../fixtures/runbooks';

/**
 * The operator console (issue 13 §1, §3) in headless Chromium against the real stack: the API
 * serving the built console, the worker running real workflows on the time-skipping server.
 * The tests run in order and build on each other: one story of an incident, told through the UI.
 */

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;
let browser: Awaited<ReturnType<typeof useBrowser>>;
let page: Page;

/** Shared by the story's steps. */
const story = { alertIncident: '', approval: '', manualIncident: '', postmortem: '', evidenceIncident: '' };
const CSV_HEADER = 'id,timestamp,action,user,role,resource,resourceType,namespace,sourceIP,checksum';
const UI_WAIT = { timeout: 60_000 };

beforeAll(async () => {
  ensureConsoleBuilt();
  receiver = await useStepReceiver();
  s = await useStack();
  // Category `network` (NetworkUnavailable signals): a person must approve the plan first.
  await createGatedRunbook(receiver.baseUrl);
  browser = await useBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await receiver?.stop();
});

afterEach(() => {
  // Any console error or page error no test asked for fails the test that caused it.
  expect(browser.takeProblems()).toEqual([]);
});

/** An element as the keyboard test reads it. */
interface FocusedElement {
  id: string;
  textContent: string | null;
}

/** What page.evaluate callbacks touch in the page (the tests compile without the DOM library). */
interface InPage {
  location: { hash: string };
  sessionStorage: { getItem(key: string): string | null };
  marker?: number;
  innerWidth: number;
  document: { documentElement: { scrollWidth: number } };
  fetch: typeof fetch;
}

const get = (path: string) => s.call('GET', path, { token: s.tokens.admin });
const section = (p: Page, heading: string) =>
  p.locator('section', { has: p.getByRole('heading', { level: 2, name: heading }) });
const statusText = (p: Page, text: string | RegExp) => p.getByRole('status').filter({ hasText: text });

async function signIn(p: Page, token: string) {
  await p.goto(`${s.baseUrl}/`);
  await p.getByLabel('API token').fill(token);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { level: 1, name: 'Incidents' }).waitFor(UI_WAIT);
}

/** Goes to a console page by its hash and waits for its heading. */
async function visit(p: Page, hash: string, heading: string | RegExp) {
  await p.evaluate((h) => ((globalThis as unknown as InPage).location.hash = h), hash);
  await p.getByRole('heading', { level: 1, name: heading }).waitFor(UI_WAIT);
  await p
    .getByText(/^Loading /)
    .first()
    .waitFor({ state: 'detached', ...UI_WAIT });
}

const alert = (status: 'firing' | 'resolved') => dnsDownWebhook(status, new Date(Date.now() - 60_000).toISOString());

it('signs in with a token: a wrong one is refused on the form, the right one is kept out of the URL', async () => {
  page = await browser.newPage();
  await page.goto(`${s.baseUrl}/`);
  await page.getByLabel('API token').fill('not-a-token');
  browser.expectConsoleError(/401/);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'Invalid or revoked token' }).waitFor(UI_WAIT);
  await browser.screenshot(page, '00-sign-in-refused');

  await page.getByLabel('API token').fill(s.tokens.operator);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Incidents' }).waitFor(UI_WAIT);
  expect(page.url()).not.toContain(s.tokens.operator);
  const stored = await page.evaluate(() => (globalThis as unknown as InPage).sessionStorage.getItem('foghorn.session'));
  expect(JSON.parse(stored ?? '{}')).toMatchObject({
    token: s.tokens.operator,
    user: 'operator-user',
    role: 'operator',
  });
  await page.getByText('operator-user').waitFor();
});

it('shows an alert in the list within seconds of its arrival, without a reload', async () => {
  await page.evaluate(() => ((globalThis as unknown as InPage).marker = 42));
  const fired = await s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body: alert('firing') });
  expect(fired.status).toBe(202);
  const row = page.locator('tbody tr', { hasText: 'Deployment/resolver' });
  await row.waitFor(UI_WAIT);
  // Still the same document: the live refresh brought it, not a reload.
  expect(await page.evaluate(() => (globalThis as unknown as InPage).marker)).toBe(42);
  story.alertIncident = (await row.getByRole('link').first().textContent()) ?? '';
  expect(story.alertIncident).toMatch(/^INC-\d{8}-\d{3,}$/);
  await row.getByText('shop').waitFor();
  await browser.screenshot(page, '01-incidents');
});

it('opens the incident: its summary, insight and a timeline that grows', async () => {
  await page.getByRole('link', { name: story.alertIncident }).click();
  await page.getByRole('heading', { level: 1, name: new RegExp(story.alertIncident) }).waitFor(UI_WAIT);
  await section(page, 'Summary').getByText('shop/Deployment/resolver').waitFor(UI_WAIT);
  // The built-in analysis writes the insight; the page shows it when it lands.
  await section(page, 'Insight').getByText('builtin / rules-v1').waitFor(UI_WAIT);
  const timeline = section(page, 'Timeline');
  await timeline.locator('li[data-type="Detection"]').waitFor(UI_WAIT);
  await timeline.locator('li[data-type="RunbookMatch"]').waitFor(UI_WAIT);
  expect(await timeline.locator('li').count()).toBeGreaterThanOrEqual(3);
});

it('approves the pending approval with a comment, and the remediation continues', async () => {
  const listed = await s.eventually(
    () => get(`/approvals?status=pending&incident=${story.alertIncident}`),
    (r) => r.body.items?.length === 1,
    90_000,
  );
  story.approval = listed.body.items[0].name;
  await approvalAwaitingDecision(s.client, story.approval);
  // No policy matches and no chat home channel is set: the page says the approval paged nobody.
  await page
    .getByRole('alert')
    .filter({ hasText: 'Nobody was paged.' })
    .getByText(`No notification channel is configured for approval ${story.approval} of escalation policy default`, {
      exact: false,
    })
    .waitFor(UI_WAIT);

  const approvals = section(page, 'Approvals');
  await approvals.getByRole('link', { name: story.approval }).waitFor(UI_WAIT);
  await approvals.getByLabel(`Comment on ${story.approval}`).fill('the call is safe');
  await browser.screenshot(page, '02-incident-detail-pending-approval');
  await approvals.getByRole('button', { name: 'Approve' }).click();
  await statusText(page, `${story.approval} approved by operator-user`).waitFor(UI_WAIT);

  // The plan ran its step: the step shows ok, and the receiver got the call.
  const plans = section(page, 'Remediation plans');
  await plans.locator('tbody tr', { hasText: 'HttpRequest' }).getByText('ok', { exact: true }).waitFor(UI_WAIT);
  expect(receiver.hits('/gated/resolver')).toBe(1);
  // The open page's timeline grew with the decision and the step, no reload.
  const timeline = section(page, 'Timeline');
  await timeline.locator('li[data-type="ApprovalDecided"]').waitFor(UI_WAIT);
  await timeline.locator('li[data-type="ActionExecuted"]').waitFor(UI_WAIT);
  await approvals.getByRole('cell', { name: /operator-user: the call is safe/ }).waitFor(UI_WAIT);
  await browser.screenshot(page, '03-incident-detail-remediated');
});

it('acknowledges, snoozes and resolves an incident, then links its postmortem', async () => {
  const created = await s.call('POST', '/incidents', {
    token: s.tokens.admin,
    body: {
      resource: 'Deployment/checkout',
      namespace: 'shop',
      signalType: 'OOMKilled',
      severity: 'high',
      description: 'checkout runs out of memory',
    },
  });
  expect(created.status).toBe(201);
  story.manualIncident = created.body.metadata.name;
  await visit(page, `#/incidents/${story.manualIncident}`, new RegExp(story.manualIncident));
  const actions = section(page, 'Actions');

  await actions.getByLabel('Message').fill('looking into it');
  await actions.getByRole('button', { name: 'Acknowledge' }).click();
  await statusText(page, `${story.manualIncident} acknowledged.`).waitFor(UI_WAIT);
  await section(page, 'Summary').locator('dd', { hasText: /^yes$/ }).first().waitFor(UI_WAIT);

  await actions.getByLabel('Duration').fill('2h');
  await actions.getByLabel('Reason').fill('waiting for the vendor');
  await actions.getByRole('button', { name: 'Snooze' }).click();
  await statusText(page, `${story.manualIncident} snoozed until`).waitFor(UI_WAIT);

  await actions.getByLabel('Resolution').fill('raised the memory limit by hand');
  await actions.getByRole('button', { name: 'Resolve' }).click();
  await page.getByRole('heading', { level: 1 }).getByText('Resolved', { exact: true }).waitFor(UI_WAIT);
  await section(page, 'Summary')
    .getByText(/raised the memory limit by hand/)
    .waitFor(UI_WAIT);
  // The postmortem is written after the resolution; the live page links it when it exists.
  const link = section(page, 'Summary').getByRole('link', { name: /^PM-/ });
  await link.waitFor(UI_WAIT);
  story.postmortem = (await link.textContent()) ?? '';
  await browser.screenshot(page, '04-incident-detail-resolved');
  await link.click();
  await page.getByRole('heading', { level: 1, name: new RegExp(story.postmortem) }).waitFor(UI_WAIT);
});

it('reviews and closes the postmortem, and gives feedback', async () => {
  const review = section(page, 'Review');
  await review.getByLabel('Notes').fill('timeline checked');
  await review.getByRole('button', { name: 'Start review' }).click();
  await statusText(page, `${story.postmortem} is in review.`).waitFor(UI_WAIT);
  await page.getByRole('heading', { level: 1 }).getByText('InReview').waitFor(UI_WAIT);

  const feedback = section(page, 'Give feedback');
  await feedback.getByLabel('Remediation accuracy (1–5)').selectOption('4');
  await feedback.getByLabel('Comments').fill('the memory raise was right');
  await feedback.getByRole('button', { name: 'Send feedback' }).click();
  await statusText(page, 'Feedback saved.').waitFor(UI_WAIT);

  await review.getByRole('button', { name: 'Close postmortem' }).click();
  await page.getByRole('heading', { level: 1 }).getByText('Closed', { exact: true }).waitFor(UI_WAIT);
  await browser.screenshot(page, '05-postmortem-closed');
  const pm = await get(`/postmortems/${story.postmortem}`);
  expect(pm.body.status).toMatchObject({ state: 'Closed', reviewer: 'operator-user', notes: 'timeline checked' });
  expect(pm.body.feedback).toMatchObject({ remediationAccuracy: 4, providedBy: 'operator-user' });
});

it('audits every change made from the console with the signed-in token’s user', async () => {
  const audit = async (action: string, resource: string) =>
    (await get(`/audit?action=${action}&resource=${resource}`)).body.items as Json[];
  const expected: [string, string][] = [
    ['approval.approve', story.approval],
    ['incident.acknowledge', story.manualIncident],
    ['incident.snooze', story.manualIncident],
    ['incident.resolve', story.manualIncident],
    ['postmortem.review', story.postmortem],
    ['postmortem.feedback', story.postmortem],
    ['postmortem.close', story.postmortem],
  ];
  for (const [action, resource] of expected) {
    const records = await audit(action, resource);
    expect({ action, users: records.map((r) => r.user) }).toEqual({ action, users: ['operator-user'] });
  }
  const approval = await get(`/approvals/${story.approval}`);
  expect(approval.body).toMatchObject({ status: 'approved', decidedBy: 'operator-user', comment: 'the call is safe' });
});

it('lets an admin export the audit trail as a CSV file and see the chain verified', async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(page, s.tokens.admin);
  await visit(page, '#/audit', 'Audit');
  await page.getByText(/^Chain intact: \d+ of \d+ records verified/).waitFor(UI_WAIT);
  await page.locator('tbody tr', { hasText: 'incident.resolve' }).first().waitFor(UI_WAIT);
  const [file] = await Promise.all([
    page.waitForEvent('download', UI_WAIT),
    page.getByRole('button', { name: 'Export CSV' }).click(),
  ]);
  expect(file.suggestedFilename()).toMatch(/^audit-export-\d{8}\.csv$/);
  const saved = await file.path();
  const text = readFileSync(saved, 'utf8');
  expect(text.split(/\r?\n/)[0]).toBe(CSV_HEADER);
  expect(text).toContain('incident.acknowledge');
  await statusText(page, /^Downloaded audit-export-\d{8}\.csv\.$/).waitFor(UI_WAIT);
  await browser.screenshot(page, '06-audit');
});

it('shows the API’s validation errors on the runbook form’s fields', async () => {
  await visit(page, '#/runbooks/-new', 'New runbook');
  await page.getByLabel('Name').fill('Not A Label');
  await page.getByLabel('Description').fill('restart the checkout');
  await page.getByLabel('Version').fill('one');
  browser.expectConsoleError(/400/); // the browser logs the refused request
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('.field-error', { hasText: 'must be a DNS label' }).waitFor(UI_WAIT);
  await page.locator('.field-error', { hasText: 'semantic version' }).waitFor(UI_WAIT);
  expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
  await page.getByRole('alert').first().waitFor();
  await browser.screenshot(page, '07-runbook-form-errors');
});

it('answers a decision someone made first with a clear 409, and a role the token lacks with a clear 403', async () => {
  // An OOMKilled, critical incident's plan has risk 90 (≥ 85): only an admin may decide it.
  const gated = await createRunbook(
    runbookSpecSchema.parse({
      name: 'admin-gated-oom',
      category: 'oomkill',
      description: 'a memory fix an admin must approve',
      version: '1.0.0',
      automated: true,
      approvalRequired: true,
      severity: ['critical'],
      targets: { signalTypes: ['OOMKilled'] },
      steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${receiver.baseUrl}/admin/{{resourceName}}` } }],
    }),
  );
  expect(gated.created).toBe(true);
  const pendingApprovalFor = async (resource: string) => {
    const created = await s.call('POST', '/incidents', {
      token: s.tokens.admin,
      body: {
        resource,
        namespace: 'shop',
        signalType: 'OOMKilled',
        severity: 'critical',
        description: 'out of memory',
      },
    });
    expect(created.status).toBe(201);
    const listed = await s.eventually(
      () => get(`/approvals?status=pending&incident=${created.body.metadata.name}`),
      (r) => r.body.items?.length === 1,
      90_000,
    );
    const approval = listed.body.items[0];
    expect(approval).toMatchObject({ requiredRole: 'admin', riskScore: 90 });
    await approvalAwaitingDecision(s.client, approval.name);
    return approval.name as string;
  };
  const first = await pendingApprovalFor('Deployment/cache');
  const second = await pendingApprovalFor('Deployment/search');

  // 409: an admin's page that has not refreshed yet (its approval lists are held at what it first
  // saw) still offers a decision another admin has just made; the real API refuses it.
  const stale = await browser.newPage();
  let held = true;
  const seen = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>();
  await stale.route(/\/api\/v1\/approvals\?/, async (route) => {
    const key = route.request().url();
    const kept = held ? seen.get(key) : undefined;
    if (kept) return route.fulfill(kept);
    const response = await route.fetch();
    const body = await response.body();
    if (held) seen.set(key, { status: response.status(), headers: response.headers(), body });
    return route.fulfill({ response, body });
  });
  await signIn(stale, s.tokens.admin);
  await visit(stale, '#/approvals', 'Approvals');
  const row = (p: Page, name: string) => p.locator('tbody tr', { has: p.getByRole('link', { name, exact: true }) });
  await row(stale, first).getByLabel(`Comment on ${first}`).waitFor(UI_WAIT);
  const other = await s.call('POST', `/approvals/${first}/approve`, { token: s.tokens.admin, body: {} });
  expect(other.status).toBe(200);
  browser.expectConsoleError(/409/);
  await row(stale, first).getByLabel(`Comment on ${first}`).fill('too late');
  await row(stale, first).getByRole('button', { name: 'Reject' }).click();
  const conflict = row(stale, first).getByRole('alert');
  await conflict.filter({ hasText: /^Already done — Approval already decided: .*admin-user/ }).waitFor(UI_WAIT);
  // The page catches up (the refusal refreshes it) and the answer stays in view.
  held = false;
  await row(stale, first).getByText('approved', { exact: true }).waitFor(UI_WAIT);
  await conflict.waitFor();
  await browser.screenshot(stale, '08-approvals-409');
  expect((await get(`/approvals/${first}`)).body).toMatchObject({ status: 'approved', decidedBy: 'admin-user' });

  // 403: an operator who edits the stored session to claim "admin" sees the admin's buttons,
  // but the API decides by the token: the approval stays pending.
  const forged = await browser.newPage();
  await signIn(forged, s.tokens.operator);
  await forged.evaluate(() => {
    const w = globalThis as unknown as InPage & { sessionStorage: { setItem(k: string, v: string): void } };
    const session = JSON.parse(w.sessionStorage.getItem('foghorn.session') ?? '{}') as Record<string, string>;
    w.sessionStorage.setItem('foghorn.session', JSON.stringify({ ...session, role: 'admin' }));
  });
  await forged.reload();
  await visit(forged, '#/approvals', 'Approvals');
  browser.expectConsoleError(/403/);
  await row(forged, second).getByRole('button', { name: 'Approve' }).click();
  await row(forged, second)
    .getByRole('alert')
    .filter({ hasText: /^Not allowed — Forbidden: .*admin/ })
    .waitFor(UI_WAIT);
  await browser.screenshot(forged, '09-approvals-403');
  expect((await get(`/approvals/${second}`)).body).toMatchObject({ status: 'pending' });
  expect(receiver.hits('/admin/search')).toBe(0); // the refused plan never ran its step
  await stale.context().close();
  await forged.context().close();
});

it('shows what changed and the evidence on the incident page, and the insight text once', async () => {
  const created = await s.call('POST', '/incidents', {
    token: s.tokens.admin,
    body: {
      resource: 'Deployment/payments',
      namespace: 'shop',
      signalType: 'CrashLoopBackOff',
      severity: 'high',
      description: 'payments keeps restarting',
    },
  });
  expect(created.status).toBe(201);
  const name: string = created.body.metadata.name;
  story.evidenceIncident = name;
  // The built-in analysis stores the insight and the incident's root cause; evidence goes on top.
  const analysed = await s.eventually(
    () => get(`/incidents/${name}`),
    (r) => r.body.status?.analysisResult?.rootCause !== '',
    90_000,
  );
  await s.eventually(
    () => get(`/aiinsights?incident=${name}`),
    (r) => r.body.items?.length === 1,
    90_000,
  );
  const rootCause: string = analysed.body.status.analysisResult.rootCause;
  const detectedAt = new Date(analysed.body.status.detectedAt);
  const at = (seconds: number) => new Date(detectedAt.getTime() + seconds * 1000);

  // Before any evidence: the page says why there is none, once, instead of empty boxes.
  await visit(page, `#/incidents/${name}`, new RegExp(name));
  await section(page, 'Evidence')
    .getByText(/^No cluster evidence: .+/)
    .waitFor(UI_WAIT);
  await section(page, 'What changed')
    .getByText(/^No change recorded/)
    .waitFor(UI_WAIT);
  expect(await page.getByText(/No cluster evidence/).count()).toBe(1);

  // The change record: what the panel shows (cluster local, shop, Deployment/payments, the last 2 h)…
  const by = {
    manager: 'argocd-controller',
    changeCause: 'bump payments to 1.5.0',
    source: 'argocd revision 1a2b3c',
    foghorn: false,
  };
  const tpl = (image: string) => ({ spec: { containers: [{ name: 'app', image }] } });
  const rollout = (workload: string, revision: number, image: string, previous: string, when: Date) =>
    revisionChange({
      cluster: 'local',
      namespace: 'shop',
      workload,
      revision,
      previousRevision: revision - 1,
      previousTemplate: tpl(previous),
      template: tpl(image),
      at: when,
      by,
    });
  const suspected = rollout('Deployment/payments', 3, 'payments:1.5.0', 'payments:1.4.0', at(-6));
  const earlier = rollout('Deployment/payments', 2, 'payments:1.4.0', 'payments:1.3.0', at(-90 * 60));
  const foghornScale = scaleChange('local', 'shop', 'Deployment/payments', 7, 3, 5, at(30), {
    manager: 'foghorn',
    changeCause: '',
    source: '',
    foghorn: true,
  });
  await recordChanges([
    suspected,
    earlier,
    foghornScale,
    // …and what it leaves out: another workload, and a change older than two hours.
    rollout('Deployment/cart', 9, 'cart:2', 'cart:1', at(-10)),
    rollout('Deployment/payments', 1, 'payments:1.3.0', 'payments:1.2.0', at(-3 * 3600)),
  ]);
  const health = {
    cluster: 'local',
    namespace: 'shop',
    resource: 'Deployment/payments',
    replicaSet: 'payments-7d9f',
    templateHash: '7d9f',
    firstSeenAt: at(-90 * 60),
  };
  await recordRevision({
    ...health,
    revision: 2,
    images: ['app=payments:1.4.0'],
    state: 'Healthy',
    healthyAt: at(-89 * 60),
  });
  await recordRevision({
    ...health,
    revision: 3,
    images: ['app=payments:1.5.0'],
    state: 'Failed',
    failure: { signal: 'CrashLoopBackOff', reason: 'Error', exitCode: 1, at: at(-1) },
  });

  // The insight's evidence and the recommendations that cite it, written past the schema.
  const pod = 'payments-7d9f-x2k4p';
  const evidence = {
    collectedAt: at(2),
    firstSignalAt: detectedAt,
    windowMs: 7_200_000,
    ownerChain: [`Pod/${pod}`, 'ReplicaSet (revision 3)', 'Deployment/payments'],
    changes: [suspected],
    suspect: {
      change: suspected.id,
      resource: 'Deployment/payments',
      type: 'Rollout',
      revision: 3,
      previousRevision: 2,
      summary: suspected.summary,
      at: suspected.at,
      leadMs: 6000,
      confidence: 0.9,
      reason: 'Revision 3 reached the cluster 6 s before its pods began to crash, with the image it introduced.',
      by,
      evidence: 'E1',
    },
    revisions: [{ revision: 3, state: 'Failed', images: ['app=payments:1.5.0'] }],
    pods: [
      {
        name: pod,
        node: 'node-a',
        phase: 'Running',
        restarts: 4,
        waitingReason: 'CrashLoopBackOff',
        lastTermination: { reason: 'Error', exitCode: 1, at: at(-1) },
        previousLogs: ['starting payments 1.5.0', 'FATAL: PAYMENTS_API_KEY is not set'],
        currentLogs: [],
      },
    ],
    events: [],
    nodes: [],
    replicas: { desired: 3, available: 2, updated: 1 },
    items: [
      { id: 'E1', kind: 'change', summary: `${suspected.summary}, 6 s before the first failure`, at: suspected.at },
      { id: 'E2', kind: 'termination', summary: `${pod} exited with code 1 (Error) and restarted 4 times` },
      { id: 'E3', kind: 'logs', summary: `${pod} previous logs: FATAL: PAYMENTS_API_KEY is not set` },
    ],
    notes: [`no current logs of ${pod}: the container is waiting to restart`],
  };
  const recommendations = [
    'Roll Deployment/payments back to revision 2 (evidence E1, E2).',
    'Set PAYMENTS_API_KEY for revision 3 before rolling forward again (evidence E3).',
  ];
  await InsightModel.collection.updateOne(
    { issueRef: name },
    { $set: { evidence, recommendations, gitOpsContext: `Suspected: ${suspected.summary} (evidence E1).` } },
  );

  // The open page brings them with its live refresh.
  const changed = section(page, 'What changed');
  const entries = changed.locator('li.change');
  await changed.locator('li.change.suspected').waitFor(UI_WAIT);
  // Newest first; another workload's change and one older than two hours are not there.
  expect(await entries.evaluateAll((els) => els.map((e) => e.getAttribute('data-change')))).toEqual([
    foghornScale.id,
    suspected.id,
    earlier.id,
  ]);
  const suspect = entries.nth(1);
  expect(await suspect.getAttribute('class')).toContain('suspected');
  await suspect.getByRole('row', { name: 'image app payments:1.4.0 payments:1.5.0' }).waitFor();
  await suspect.getByText('Revision Failed: CrashLoopBackOff, exit code 1').waitFor();
  await suspect.getByText('6 s before detection').waitFor();
  await suspect
    .getByText('By manager argocd-controller, change-cause “bump payments to 1.5.0”, source argocd revision 1a2b3c')
    .waitFor();
  await entries.nth(0).getByText('30 s after detection').waitFor();
  await entries
    .nth(0)
    .locator('.badge', { hasText: /^Foghorn$/ })
    .waitFor();
  await entries.nth(2).getByText('Revision Healthy').waitFor();
  await entries.nth(2).getByText('1 h 30 min before detection').waitFor();
  expect(
    await entries
      .nth(2)
      .locator('.badge', { hasText: /^Foghorn$/ })
      .count(),
  ).toBe(0);
  const highlighted = changed.locator('.suspect');
  await highlighted.getByText('confidence 90%').waitFor();
  await highlighted.getByText(/^Revision 3 reached the cluster 6 s before its pods began to crash/).waitFor();

  // The evidence: every item by id, the failing pod with its last termination and logs, the notes.
  const ev = section(page, 'Evidence');
  for (const id of ['E1', 'E2', 'E3']) await ev.locator(`li#evidence-${id}`).waitFor();
  await ev.getByRole('heading', { level: 4, name: pod }).waitFor();
  await ev.getByText('Error, exit code 1', { exact: false }).waitFor();
  await ev.locator('pre', { hasText: 'FATAL: PAYMENTS_API_KEY is not set' }).waitFor();
  await ev.getByText(`no current logs of ${pod}: the container is waiting to restart`).waitFor();
  await ev.getByText('2 of 3 available, 1 updated').waitFor();

  // The insight: root cause, analysis and each recommendation once; the cited ids are links.
  const insight = section(page, 'Insight');
  await insight.getByText(recommendations[0]).waitFor(UI_WAIT);
  const text = (await insight.innerText()).replace(/\s+/g, ' ');
  const times = (needle: string) => text.split(needle.replace(/\s+/g, ' ')).length - 1;
  expect({ rootCause: times(rootCause), first: times(recommendations[0]), second: times(recommendations[1]) }).toEqual({
    rootCause: 1,
    first: 1,
    second: 1,
  });
  expect(times('Source description: "payments keeps restarting".')).toBe(1);
  await insight.getByRole('listitem').filter({ hasText: 'PAYMENTS_API_KEY' }).getByRole('link', { name: 'E3' }).click();
  await page.waitForFunction(() => {
    const w = globalThis as unknown as InPage & { document: { activeElement: { id: string } | null } };
    return w.location.hash.endsWith('?evidence=E3') && w.document.activeElement?.id === 'evidence-E3';
  });
  await ev.locator('li#evidence-E3.selected').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);
  await browser.screenshot(page, '09b-incident-what-changed');
});

it('renders every page without an error or a WCAG 2.1 AA violation (screenshots in test-results/console)', async () => {
  const pages: [string, string | RegExp, string][] = [
    ['#/incidents', 'Incidents', '10-incidents'],
    [`#/incidents/${story.alertIncident}`, new RegExp(story.alertIncident), '11-incident-detail'],
    [`#/incidents/${story.evidenceIncident}`, new RegExp(story.evidenceIncident), '11b-incident-evidence'],
    ['#/approvals', 'Approvals', '12-approvals'],
    [`#/approvals/${story.approval}`, new RegExp(story.approval), '13-approval-detail'],
    ['#/remediations', 'Remediations', '14-remediations'],
    ['#/runbooks', 'Runbooks', '15-runbooks'],
    ['#/runbooks/network-gated-fix', 'Runbook network-gated-fix', '16-runbook-detail'],
    ['#/runbooks/network-gated-fix/edit', 'Edit runbook network-gated-fix', '17-runbook-edit'],
    ['#/postmortems', 'Postmortems', '18-postmortems'],
    [`#/postmortems/${story.postmortem}`, new RegExp(story.postmortem), '19-postmortem-detail'],
    ['#/audit', 'Audit', '20-audit'],
    ['#/analytics', 'Analytics', '21-analytics'],
    ['#/clusters', 'Clusters', '22-clusters'],
    ['#/escalation', 'Escalation', '23-escalation'],
  ];
  // The checker is not blind: a page with an unlabelled input and faint text fails it.
  const bad = await browser.newPage();
  await bad.setContent(
    '<html lang="en"><title>t</title><main><input id="q"><p style="color:#ccc;background:#fff">faint</p></main></html>',
  );
  expect((await accessibilityViolations(bad)).map((v) => v.split(' ')[0]).sort()).toEqual(['color-contrast', 'label']);
  await bad.context().close();

  const violations: Record<string, string[]> = {};
  for (const [hash, heading, shot] of pages) {
    await visit(page, hash, heading);
    if (hash === '#/analytics') await page.locator('canvas').waitFor(UI_WAIT); // the trends chart
    await browser.screenshot(page, shot);
    const found = await accessibilityViolations(page);
    if (found.length) violations[hash] = found;
  }
  // Every page meets WCAG 2.1 AA as axe-core checks it: labels, names, contrast, landmarks, ARIA.
  expect(violations).toEqual({});
  const plan = (await get(`/remediations?incident=${story.alertIncident}`)).body.items[0].name;
  await visit(page, `#/remediations/${plan}`, `Remediation ${plan}`);
  await page.getByRole('cell', { name: 'ok', exact: true }).waitFor(UI_WAIT);
  await browser.screenshot(page, '24-remediation-detail');
});

it('shows a viewer no action buttons, and the API refuses a forged request with 403', async () => {
  const phone = await browser.newPage(PHONE);
  await signIn(phone, s.tokens.viewer);
  await browser.screenshot(phone, '30-phone-incidents');
  expect(await phone.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).count()).toBe(0);
  // The table scrolls sideways inside its region instead of widening the page.
  const widths = await phone.evaluate(() => {
    const w = globalThis as unknown as InPage;
    return { page: w.document.documentElement.scrollWidth, viewport: w.innerWidth };
  });
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);

  await visit(phone, `#/incidents/${story.alertIncident}`, new RegExp(story.alertIncident));
  await section(phone, 'Timeline').locator('li').first().waitFor(UI_WAIT);
  expect(await phone.getByRole('button', { name: /^(Acknowledge|Snooze|Resolve|Approve|Reject)$/ }).count()).toBe(0);
  expect(await section(phone, 'Actions').count()).toBe(0);
  await browser.screenshot(phone, '31-phone-incident-detail');

  await visit(phone, `#/postmortems/${story.postmortem}`, new RegExp(story.postmortem));
  expect(await phone.getByRole('button', { name: /Start review|Close postmortem|Send feedback/ }).count()).toBe(0);
  await visit(phone, '#/runbooks/network-gated-fix', 'Runbook network-gated-fix');
  expect(await phone.getByRole('button', { name: 'Delete' }).count()).toBe(0);
  expect(await phone.getByRole('link', { name: 'Edit' }).count()).toBe(0);

  // Hidden is not forbidden: the same request made by hand with the viewer's token is refused.
  browser.expectConsoleError(/403/);
  const forged = await phone.evaluate(async (name) => {
    const w = globalThis as unknown as InPage;
    const { token } = JSON.parse(w.sessionStorage.getItem('foghorn.session') ?? '{}') as { token: string };
    const res = await w.fetch(`/api/v1/incidents/${name}/acknowledge?namespace=shop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ acknowledgedBy: 'mallory' }),
    });
    return { status: res.status, body: (await res.json()) as { error: { message: string } } };
  }, story.alertIncident);
  expect(forged.status).toBe(403);
  expect(forged.body.error.message).toBe('Forbidden');
  const incident = await get(`/incidents/${story.alertIncident}`);
  expect(incident.body.status.acknowledged).toBe(false);
});

it('works with the keyboard alone, with a visible focus, and the sign-in and phone pages meet WCAG 2.1 AA', async () => {
  const kb = await browser.newPage();
  await kb.goto(`${s.baseUrl}/`);
  await kb.getByLabel('API token').waitFor(UI_WAIT);
  expect(await accessibilityViolations(kb)).toEqual([]);
  /** Presses Tab until the focused element is what `is` says (bounded), and answers its outline. */
  const tabTo = async (is: (el: { id: string; text: string }) => boolean) => {
    for (let i = 0; i < 40; i++) {
      await kb.keyboard.press('Tab');
      const focused = await kb.evaluate(() => {
        const w = globalThis as unknown as {
          document: { activeElement: FocusedElement | null };
          getComputedStyle(el: FocusedElement): { outlineStyle: string };
        };
        const el = w.document.activeElement;
        return el ? { id: el.id, text: el.textContent ?? '', outline: w.getComputedStyle(el).outlineStyle } : null;
      });
      if (focused && is(focused)) return focused.outline;
    }
    throw new Error('not reached with Tab');
  };
  const tokenField = await kb.getByLabel('API token').getAttribute('id');
  expect(await tabTo((el) => el.id === tokenField)).not.toBe('none');
  await kb.keyboard.type(s.tokens.operator);
  await kb.keyboard.press('Enter');
  await kb.getByRole('heading', { level: 1, name: 'Incidents' }).waitFor(UI_WAIT);
  expect(await tabTo((el) => el.text === 'Approvals')).not.toBe('none');
  await kb.keyboard.press('Enter');
  await kb.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor(UI_WAIT);
  await kb.context().close();

  const phone = await browser.newPage(PHONE);
  await signIn(phone, s.tokens.viewer);
  expect(await accessibilityViolations(phone)).toEqual([]);
  await visit(phone, `#/incidents/${story.alertIncident}`, new RegExp(story.alertIncident));
  expect(await accessibilityViolations(phone)).toEqual([]);
  await phone.context().close();
});
