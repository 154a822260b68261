import { incidentDetail, incidentDetailSchema } from '../../api/views';
import { signalSchema } from '../../contracts/incidents';
import { createCluster, getClusterWithCounts } from '../../store/clusters';
import { openOrJoin } from '../../store/incidents';
import { createPlanOnce, type PlanRecord } from '../../store/remediations';
import { useApi } from '../harness/api';

/** The read side of remediation plans: list shape, filters, order, paging, bad inputs, detail. */
describe('remediation plan reads', () => {
  let api: Awaited<ReturnType<typeof useApi>>;
  const day = (d: number, h = 12) => new Date(Date.UTC(2026, 10, d, h));

  const plan = (name: string, fields: Partial<PlanRecord>): PlanRecord => ({
    name,
    key: `${fields.issueRef ?? 'INC-20261101-001'}/attempt/${fields.attempt ?? 1}`,
    namespace: 'shop',
    issueRef: 'INC-20261101-001',
    cluster: 'plans-east',
    attempt: 1,
    strategy: 'runbook oom-raise-memory (tier 1: category+severity+kind)',
    strategyKind: 'runbook',
    runbook: 'oom-raise-memory',
    state: 'Pending',
    result: '',
    agenticMode: false,
    agenticStepCount: 0,
    actions: [],
    riskScore: 40,
    approvalRequired: false,
    approvalReasons: [],
    approval: '',
    verifyWindowMs: 60_000,
    startedAt: day(1),
    creationTimestamp: day(1),
    ...fields,
  });

  // Oldest first; the list answers newest first (creationTimestamp, then name).
  const seeds: PlanRecord[] = [
    plan('RP-20261101-001', {
      state: 'Completed',
      result: 'memory limit raised; pods healthy for 1m',
      completedAt: day(1, 13),
      actions: [
        {
          type: 'AdjustResources',
          params: { deployment: 'checkout', namespace: 'shop', memoryLimit: '512Mi' },
          outcome: 'ok',
          result: 'memory limit 256Mi → 512Mi',
        },
      ] as PlanRecord['actions'],
    }),
    plan('RP-20261102-001', {
      attempt: 2,
      state: 'Executing',
      strategy: 'agentic',
      strategyKind: 'agentic',
      runbook: '',
      agenticMode: true,
      agenticStepCount: 1,
      // A final-looking result on an executing plan is not shown: it is '' while executing.
      result: 'stale',
      completedAt: day(2, 13),
      startedAt: day(2),
      creationTimestamp: day(2),
      riskScore: 75,
      approvalRequired: true,
      approvalReasons: ['plan risk 75 ≥ threshold 70'],
      approval: 'APR-20261102-001',
    }),
    plan('RP-20261103-001', {
      issueRef: 'INC-20261103-001',
      namespace: 'data',
      cluster: 'plans-west',
      state: 'Failed',
      result: 'step 1 failed',
      completedAt: day(3, 13),
      startedAt: day(3),
      creationTimestamp: day(3),
      actions: [
        {
          type: 'HttpRequest',
          params: {
            url: 'https://hooks.example.com/restart',
            method: 'POST',
            headers: { Authorization: 'Bearer abcdefghijklmnopqrstuvwxyz', 'X-Team': 'dba' },
          },
          outcome: 'failed',
          result: 'HTTP 500',
        },
      ] as PlanRecord['actions'],
    }),
    plan('RP-20261104-001', {
      issueRef: 'INC-20261104-001',
      state: 'Verifying',
      startedAt: day(4),
      creationTimestamp: day(4),
    }),
  ];
  const names = seeds.map((s) => s.name);

  beforeAll(async () => {
    api = await useApi();
    for (const s of seeds) await createPlanOnce(s);
    await createCluster({
      name: 'plans-east',
      namespace: 'default',
      displayName: 'East',
      tier: 'standard',
      region: 'us-east',
      kubeconfigSecret: 'plans-east-kubeconfig',
      source: 'registered',
    });
  });
  afterAll(() => api?.stop());

  const list = (qs = '') => api.call('GET', `/remediations${qs}`, { token: api.tokens.viewer });
  const itemNames = (body: { items: { name: string }[] }) => body.items.map((i) => i.name);

  it('lists newest first with the spec fields and the extras', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'RemediationPlanList',
      metadata: { totalCount: 4, page: 1, pageSize: 20 },
    });
    expect(itemNames(res.body)).toEqual([...names].reverse());
    expect(res.body.items.find((i: { name: string }) => i.name === names[0])).toEqual({
      name: names[0],
      namespace: 'shop',
      issueRef: 'INC-20261101-001',
      attempt: 1,
      strategy: 'runbook oom-raise-memory (tier 1: category+severity+kind)',
      state: 'Completed',
      startedAt: '2026-11-01T12:00:00.000Z',
      completedAt: '2026-11-01T13:00:00.000Z',
      result: 'memory limit raised; pods healthy for 1m',
      agenticMode: false,
      agenticStepCount: 0,
      actions: [
        {
          type: 'AdjustResources',
          params: { deployment: 'checkout', namespace: 'shop', memoryLimit: '512Mi' },
          outcome: 'ok',
          result: 'memory limit 256Mi → 512Mi',
        },
      ],
      creationTimestamp: '2026-11-01T12:00:00.000Z',
      runbook: 'oom-raise-memory',
      riskScore: 40,
      approvalRequired: false,
      approvalReasons: [],
      approval: '',
      cluster: 'plans-east',
    });
    const executing = res.body.items.find((i: { name: string }) => i.name === names[1]);
    expect(executing).toMatchObject({
      state: 'Executing',
      result: '',
      agenticMode: true,
      agenticStepCount: 1,
      actions: [],
      approval: 'APR-20261102-001',
    });
    expect(executing).not.toHaveProperty('completedAt');
  });

  it("never shows an HTTP step's headers or body, nor a secret from its params", async () => {
    const res = await list('?namespace=data');
    expect(res.body.items[0].actions[0].params).not.toHaveProperty('headers');
    expect(res.text).not.toContain('abcdefghijklmnopqrstuvwxyz');
    expect(res.text).not.toContain('X-Team');
  });

  it.each([
    ['?namespace=data', [2]],
    ['?state=Executing', [1]],
    ['?incident=INC-20261101-001', [1, 0]],
    ['?namespace=shop&state=Completed', [0]],
    ['?incident=INC-00000000-000', []],
  ])('filters %s', async (qs, expected) => {
    const res = await list(qs as string);
    expect(itemNames(res.body)).toEqual((expected as number[]).map((i) => names[i]));
    expect(res.body.metadata.totalCount).toBe((expected as number[]).length);
  });

  it('paginates and keeps totalCount past the end', async () => {
    const p2 = await list('?page=2&pageSize=3');
    expect(p2.body.metadata).toEqual({ totalCount: 4, page: 2, pageSize: 3 });
    expect(itemNames(p2.body)).toEqual([names[0]]);
    const beyond = await list('?page=9&pageSize=100');
    expect(beyond.body).toMatchObject({ metadata: { totalCount: 4, page: 9, pageSize: 100 }, items: [] });
  });

  it.each(['?pageSize=101', '?page=0', '?state=Running', '?state=completed', '?namespace=Shop', '?incident='])(
    'rejects %s with 400 Invalid request',
    async (qs) => {
      const res = await list(qs);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 400, message: 'Invalid request' });
    },
  );

  it('shows one plan as spec and status, 404 for an unknown name', async () => {
    const res = await api.call('GET', `/remediations/${names[2]}`, { token: api.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      apiVersion: 'v1',
      kind: 'RemediationPlan',
      metadata: { name: names[2], namespace: 'data', creationTimestamp: '2026-11-03T12:00:00.000Z' },
      spec: {
        issueRef: 'INC-20261103-001',
        cluster: 'plans-west',
        attempt: 1,
        strategy: 'runbook oom-raise-memory (tier 1: category+severity+kind)',
        runbook: 'oom-raise-memory',
        agenticMode: false,
        actions: [
          {
            type: 'HttpRequest',
            params: {
              url: 'https://hooks.example.com/restart',
              method: 'POST',
            },
            outcome: 'failed',
            result: 'HTTP 500',
          },
        ],
        riskScore: 40,
        approvalRequired: false,
        approvalReasons: [],
      },
      status: {
        state: 'Failed',
        startedAt: '2026-11-03T12:00:00.000Z',
        completedAt: '2026-11-03T13:00:00.000Z',
        result: 'step 1 failed',
        agenticStepCount: 0,
        approval: '',
      },
    });
    const verifying = await api.call('GET', `/remediations/${names[3]}`, { token: api.tokens.viewer });
    expect(verifying.body.status).toEqual({
      state: 'Verifying',
      startedAt: '2026-11-04T12:00:00.000Z',
      result: '',
      agenticStepCount: 0,
      approval: '',
    });
    const missing = await api.call('GET', '/remediations/RP-20990101-001', { token: api.tokens.viewer });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 404, message: 'Remediation plan not found' });
  });

  it("counts a cluster's plans in flight as its activeRemediations", async () => {
    // plans-east holds a Completed, an Executing and a Verifying plan: two in flight.
    expect(await getClusterWithCounts('plans-east')).toMatchObject({ activeRemediations: 2 });
  });

  it('shows remediationAttempts and the plan in flight on the incident detail', async () => {
    const { incident } = await openOrJoin(
      signalSchema.parse({ resource: 'Deployment/checkout', signalType: 'OOMKilled' }),
    );
    const res = await api.call('GET', `/incidents/${incident.name}`, { token: api.tokens.viewer });
    expect(res.body.status).toMatchObject({ remediationAttempts: 0 });
    expect(res.body.status).not.toHaveProperty('activePlan');
    // The view picks the latest plan not final among the incident's plans (oldest first).
    const detail = incidentDetail(incident, 1, seeds.slice(0, 2));
    expect(detail.status.activePlan).toEqual({ name: names[1], state: 'Executing', strategy: 'agentic', attempt: 2 });
    expect(incidentDetail(incident, 1, seeds.slice(0, 1)).status).not.toHaveProperty('activePlan');
    expect(incidentDetailSchema.safeParse(JSON.parse(JSON.stringify(detail))).success).toBe(true);
  });
});
