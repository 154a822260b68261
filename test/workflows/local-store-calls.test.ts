import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { runbookSpecSchema } from '../../domain/runbook';
import { createRunbook } from '../../store/runbooks';
import { chatWorkflowId } from '../../workflows/chat-messages';
import { LOCAL_STORE_CALLS } from '../../workflows/store-calls';
import { useGateway } from '../harness/gateway';
import { useStepReceiver } from '../harness/step-receiver';

/**
 * New runs call their own store as local activities (workflows/store-calls.ts): each call is a
 * marker in the workflow's history, not a scheduled activity, and the records they write are
 * the same, each once. Calls to other parties (the analysis, HTTP steps, verification,
 * callbacks) stay activities. Runs from before the patch are test/replay's.
 */

jest.setTimeout(180_000);

type History = temporal.api.history.v1.IHistory;
const EventType = temporal.api.enums.v1.EventType;

/** The activity types a history scheduled on the task queue, in order. */
const scheduled = (history: History) =>
  (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

/** The activity types a history ran as local activities (one marker per call), in order. */
const local = (history: History) =>
  (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = defaultPayloadConverter.fromPayload<{ activity_type: string }>(marker.details!.data!.payloads![0]!);
    return [data.activity_type];
  });

/** The patches a history's run took, in order. */
const patches = (history: History) =>
  (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    return [defaultPayloadConverter.fromPayload<{ id: string }>(marker.details!['patch-data']!.payloads![0]!).id];
  });

/** The event of a run's first command: the patch decides, before anything else, how the run calls its store. */
const firstCommand = (history: History) => {
  const events = history.events ?? [];
  return events[events.findIndex((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) + 1];
};
const isPatch = (history: History) => {
  const marker = firstCommand(history)?.markerRecordedEventAttributes;
  return marker?.markerName === 'core_patch' && patches(history)[0] === LOCAL_STORE_CALLS;
};

let gw: Awaited<ReturnType<typeof useGateway>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;

beforeAll(async () => {
  receiver = await useStepReceiver(() => 200);
  gw = await useGateway({ env: { FOGHORN_VERIFY_WINDOW: '1m' } });
}, 120_000);
afterAll(async () => {
  await gw?.stop();
  await receiver?.stop();
});

const history = (workflowId: string) => gw.client.workflow.getHandle(workflowId).fetchHistory();
const get = (path: string) => gw.call('GET', path, { token: gw.tokens.viewer });

it('an incident remediated by a runbook: store calls are local; the analysis and the HTTP step are activities', async () => {
  const spec = runbookSpecSchema.parse({
    version: '1.0.0',
    name: 'local-calls-fix',
    description: 'an HTTP call, then verification by signals',
    category: 'custom',
    automated: true,
    severity: ['low'],
    targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
    steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${receiver.baseUrl}/fix`, expectStatus: 200 } }],
  });
  expect((await createRunbook(spec)).created).toBe(true);
  const created = await gw.call('POST', '/incidents', {
    token: gw.tokens.operator,
    body: {
      resource: 'Deployment/local-calls',
      namespace: 'shop',
      signalType: 'Custom',
      severity: 'low',
      description: 'test',
    },
  });
  expect(created.status).toBe(201);
  const name = created.body.metadata.name as string;

  // The verification window is workflow time: skip through it until the plan resolves the incident.
  const deadline = Date.now() + 120_000;
  while ((await get(`/incidents/${name}`)).body.status?.state !== 'Resolved') {
    if (Date.now() > deadline) throw new Error(`${name} not resolved`);
    await gw.wf.env.sleep(30_000);
  }
  await gw.client.workflow.getHandle(name).result();
  const [plan] = (await get(`/remediations?incident=${name}`)).body.items as { name: string; state: string }[];
  expect(plan).toMatchObject({ state: 'Completed' });

  const incident = await history(name);
  expect(isPatch(incident)).toBe(true);
  expect(scheduled(incident)).toEqual(['analyzeIncident']);
  expect(local(incident)).toEqual(
    expect.arrayContaining([
      'setIncidentState',
      'matchRunbook',
      'remediationOptions',
      'preparePlan',
      'resolveIncident',
    ]),
  );

  const remediation = await history(plan.name);
  expect(isPatch(remediation)).toBe(true);
  expect(scheduled(remediation)).toEqual(['runHttpPlanStep']); // no cluster: verified by signals, a timer
  expect(local(remediation)).toEqual(
    expect.arrayContaining(['setPlanState', 'recordStep', 'recordVerification', 'finishPlan']),
  );

  // The postmortem is the incident's own call now, not a child workflow's.
  expect(local(incident)).toContain('generatePostmortem');
  expect(
    incident.events!.some(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name === 'postmortemWorkflow',
    ),
  ).toBe(false);

  // What the calls wrote is there, each once.
  const events = (await get(`/incidents/${name}/timeline`)).body.events as { type: string }[];
  const types = events.map((e) => e.type);
  expect(types).toEqual([
    'Detection',
    'Analysis', // started
    'Analysis', // done
    'RunbookMatch',
    'RemediationStarted',
    'ActionExecuted',
    'Verification',
    'RemediationCompleted',
    'PostMortemGenerated',
    'Resolved',
  ]);
  expect(receiver.received.filter((r) => r.url === '/fix')).toHaveLength(1);
  const audit = await gw.call('GET', `/audit?resource=${name}&action=incident.resolve`, { token: gw.tokens.operator });
  expect(audit.body.items).toHaveLength(1);
});

it('a chat turn: the chat reads its history and the turn its records locally; the callback is an activity', async () => {
  const id = await gw.send({ chat_id: 'c-local', user_id: 'alice', text: '/help' });
  expect((await gw.reply(id)).body.kind).toBe('final');
  const turn = await gw.eventually(
    () => history(id),
    (h) => h.events!.at(-1)!.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  );
  expect(isPatch(turn)).toBe(true);
  expect(scheduled(turn)).toEqual(['deliverCallback']);
  expect(local(turn)).toEqual(['prepareTurn', 'completeTurn']);

  const chat = await history(chatWorkflowId('c-local'));
  expect(isPatch(chat)).toBe(true);
  expect(scheduled(chat)).toEqual([]);
  expect(local(chat)).toEqual(['loadChatHistory']);
});

it('an escalated incident: its ladder reads its levels and notes locally', async () => {
  const created = await gw.call('POST', '/incidents', {
    token: gw.tokens.operator,
    body: { resource: 'Deployment/ladder', namespace: 'shop', signalType: 'HighLatency', severity: 'high' },
  });
  const name = created.body.metadata.name as string;
  await gw.eventually(
    () => get(`/incidents/${name}`),
    (r) => r.body.status?.state === 'Escalated',
  );
  const ladder = await gw.eventually(
    () => history(`${name}-escalation`).catch(() => ({ events: [] })), // (not started yet)
    (h) => local(h).includes('levelEndpoints'),
  );
  expect(isPatch(ladder)).toBe(true);
  expect(scheduled(ladder)).toEqual([]); // nothing configured: L1 has no endpoint to deliver to
  const incident = await history(name);
  expect(scheduled(incident)).toEqual(['analyzeIncident']);
  expect(local(incident)).toEqual(expect.arrayContaining(['chooseEscalation']));
});
