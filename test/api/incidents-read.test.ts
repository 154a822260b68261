import { signalSchema } from '../../contracts/incidents';
import { IncidentModel, InsightModel } from '../../store/models';
import { openOrJoin, updateIncident } from '../../store/incidents';
import { useApi } from '../harness/api';

/** The read side of incidents and insights: filters, pagination, shapes and bad inputs. */
describe('incident and insight reads', () => {
  let api: Awaited<ReturnType<typeof useApi>>;
  const names: string[] = [];
  beforeAll(async () => {
    api = await useApi();
    const specs = [
      { resource: 'Deployment/a', namespace: 'shop', signalType: 'OOMKilled', severity: 'critical' },
      { resource: 'Deployment/b', namespace: 'shop', signalType: 'HighLatency', severity: 'medium' },
      {
        resource: 'StatefulSet/db',
        namespace: 'data',
        signalType: 'DiskPressure',
        severity: 'high',
        labels: { team: 'dba' },
      },
      { resource: 'Pod/web-0', namespace: 'shop', signalType: 'PodNotReady' },
    ];
    for (const [i, spec] of specs.entries()) {
      const { incident } = await openOrJoin(signalSchema.parse(spec), new Date(Date.UTC(2026, 10, 1 + i, 12)));
      names.push(incident.name);
    }
    await updateIncident(names[1], { state: 'Escalated' });
    await updateIncident(
      names[0],
      { state: 'Resolved', resolvedAt: new Date(Date.UTC(2026, 10, 1, 13)) },
      { allowResolved: true },
    );
    await InsightModel.create({
      name: 'AI-20261101-001',
      namespace: 'shop',
      issueRef: names[0],
      provider: 'builtin',
      model: 'rules-v1',
      analysis: 'x',
      confidence: 0.9,
      recommendations: ['r'],
      generatedAt: new Date(),
      creationTimestamp: new Date(),
    });
  });
  afterAll(() => api?.stop());

  const list = (qs = '') => api.call('GET', `/incidents${qs}`, { token: api.tokens.viewer });

  it('lists newest first with every list-item field', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'IncidentList',
      metadata: { totalCount: 4, page: 1, pageSize: 20 },
    });
    expect(res.body.items.map((i: { name: string }) => i.name)).toEqual([...names].reverse());
    const resolved = res.body.items.find((i: { name: string }) => i.name === names[0]);
    expect(resolved).toEqual({
      name: names[0],
      namespace: 'shop',
      severity: 'critical',
      state: 'Resolved',
      resource: 'Deployment/a',
      description: '',
      riskScore: 80,
      detectedAt: '2026-11-01T12:00:00.000Z',
      resolvedAt: '2026-11-01T13:00:00.000Z',
      age: expect.stringMatching(/^\d+h\d+m\d+s$/),
      labels: {},
    });
    const pod = res.body.items[0];
    expect(pod).not.toHaveProperty('resolvedAt');
    expect(pod.severity).toBe('low'); // no severity given: derived from the risk score (20)
  });

  it('gives a filtered list its exact total on full pages, the last page and past the end', async () => {
    // The last page's total comes from its items; the others from a count (store/pagination.ts).
    const all = (await list('')).body.items as { name: string; namespace: string }[];
    const shop = all.filter((i) => i.namespace === 'shop').map((i) => i.name);
    expect(shop.length).toBeGreaterThan(1);
    for (const [page, pageSize] of [
      [1, 1],
      [2, 1],
      [1, shop.length - 1],
      [2, shop.length - 1],
      [1, 100],
      [9, 100],
    ]) {
      const res = await list(`?namespace=shop&page=${page}&pageSize=${pageSize}`);
      expect(res.body.metadata).toEqual({ totalCount: shop.length, page, pageSize });
      expect(res.body.items.map((i: { name: string }) => i.name)).toEqual(
        shop.slice((page - 1) * pageSize, page * pageSize),
      );
    }
  });

  it.each([
    ['?severity=critical', [0]],
    ['?state=Escalated', [1]],
    ['?namespace=data', [2]],
    ['?resource=Pod/web-0', [3]],
    ['?since=2026-11-03T00:00:00Z', [3, 2]],
    ['?namespace=shop&state=Detected', [3]],
  ])('filters %s', async (qs, expected) => {
    const res = await list(qs as string);
    expect(res.body.items.map((i: { name: string }) => i.name)).toEqual((expected as number[]).map((i) => names[i]));
    expect(res.body.metadata.totalCount).toBe((expected as number[]).length);
  });

  it('paginates and keeps totalCount past the end', async () => {
    const p2 = await list('?page=2&pageSize=3');
    expect(p2.body.metadata).toEqual({ totalCount: 4, page: 2, pageSize: 3 });
    expect(p2.body.items.map((i: { name: string }) => i.name)).toEqual([names[0]]);
    const beyond = await list('?page=9&pageSize=100');
    expect(beyond.body).toMatchObject({ metadata: { totalCount: 4, page: 9, pageSize: 100 }, items: [] });
  });

  it.each([
    '?pageSize=101',
    '?page=0',
    '?severity=urgent',
    '?state=Open',
    '?since=last-week',
    '?resource=web',
    '?namespace=Shop',
  ])('rejects %s with 400 Invalid request', async (qs) => {
    const res = await list(qs);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 400, message: 'Invalid request' });
  });

  it('shows the detail and the timeline, 404 for unknown names and other namespaces', async () => {
    const res = await api.call('GET', `/incidents/${names[2]}`, { token: api.tokens.viewer });
    expect(res.body).toMatchObject({
      kind: 'Incident',
      metadata: { name: names[2], namespace: 'data', createdAt: '2026-11-03T12:00:00.000Z', labels: { team: 'dba' } },
      spec: {
        resource: 'StatefulSet/db',
        severity: 'high',
        description: '',
        detectionSource: 'api',
        correlationId: 'local/data/StatefulSet/db',
        runbook: '',
        escalationPolicy: 'default',
      },
      status: {
        state: 'Detected',
        riskScore: 35,
        acknowledged: false,
        assignedTo: '',
        detectedAt: '2026-11-03T12:00:00.000Z',
        timelineCount: 1,
        analysisResult: { rootCause: '', recommendation: '', confidence: 0, relatedEvents: [] },
      },
    });
    const timeline = await api.call('GET', `/incidents/${names[2]}/timeline`, { token: api.tokens.viewer });
    expect(timeline.body).toMatchObject({
      kind: 'IncidentTimeline',
      metadata: { name: names[2], namespace: 'data', eventCount: 1 },
    });
    expect(timeline.body.events[0]).toMatchObject({ type: 'Detection', source: 'detector', severity: 'high' });
    for (const path of [
      '/incidents/INC-20000101-001',
      `/incidents/${names[2]}?namespace=shop`,
      '/incidents/INC-20000101-001/timeline',
    ]) {
      const missing = await api.call('GET', path, { token: api.tokens.viewer });
      expect(missing.status).toBe(404);
      expect(missing.body.error.message).toBe('Incident not found');
    }
  });

  it('answers 503 for changes when Temporal is not configured, 400 for bad bodies first', async () => {
    const bad = await api.call('POST', '/incidents', {
      token: api.tokens.operator,
      body: { resource: 'Deployment/x', signalType: 'Meltdown' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toContain('body.signalType');
    const noTemporal = await api.call('POST', '/incidents', {
      token: api.tokens.operator,
      body: { resource: 'Deployment/x', signalType: 'OOMKilled' },
    });
    expect(noTemporal.status).toBe(503);
    expect(await IncidentModel.countDocuments()).toBe(4);
  });

  it('lists AI insights with filters', async () => {
    const all = await api.call('GET', '/aiinsights', { token: api.tokens.viewer });
    expect(all.body).toMatchObject({ kind: 'AIInsightList', metadata: { totalCount: 1 } });
    expect(all.body.items[0]).toMatchObject({
      name: 'AI-20261101-001',
      issueRef: names[0],
      provider: 'builtin',
      model: 'rules-v1',
      confidence: 0.9,
    });
    expect((await api.call('GET', '/aiinsights?namespace=data')).body.metadata.totalCount).toBe(0);
    expect((await api.call('GET', `/aiinsights?incident=${names[0]}`)).body.metadata.totalCount).toBe(1);
    expect((await api.call('GET', '/aiinsights?pageSize=101')).status).toBe(400);
  });
});
