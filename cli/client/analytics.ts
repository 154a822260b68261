import { type Command, Option } from 'commander';
import { ANALYTICS_PERIODS, TREND_GROUPS } from '../../domain/analytics';
import { GRANULARITIES } from '../../domain/mttr';
import { formatTable, type Column } from '../../domain/table';
import { act, clientCommand, clientGroup } from './command';
import { keyValues, printAnswer, show } from './output';

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON, shown as the API sends it */
type Json = any;

type Row = { name: string; values: Record<string, unknown> };
const rowColumns = (first: string, keys: string[]): Column<Row>[] => [
  { header: first, value: (r) => r.name },
  ...keys.map((k) => ({ header: k.replace(/([a-z])([A-Z])/g, '$1-$2'), value: (r: Row) => show(r.values[k]) })),
];

function describeMttr(a: Json): string {
  const { overall, bySeverity, byPhase, improvement } = a.mttr;
  const severities: Row[] = [
    { name: 'all', values: overall },
    ...Object.entries(bySeverity as Record<string, Record<string, unknown>>).map(([name, values]) => ({
      name,
      values,
    })),
  ];
  const phases: Row[] = Object.entries(byPhase as Record<string, Record<string, unknown>>).map(([name, values]) => ({
    name,
    values,
  }));
  return [
    `MTTR over ${a.metadata.period} (${a.metadata.from} – ${a.metadata.to})`,
    '',
    formatTable(rowColumns('SEVERITY', ['mean', 'median', 'p95', 'p99', 'count']), severities),
    '',
    formatTable(rowColumns('PHASE', ['mean', 'description']), phases),
    '',
    keyValues([
      ['vs previous period', improvement.vsPrevPeriod],
      [`vs baseline (${improvement.baselinePeriod})`, improvement.vsBaseline],
    ]),
  ].join('\n');
}

function describeTrends(a: Json): string {
  const severities = Object.keys(a.trends[0]?.bySeverity ?? {});
  const columns: Column<Json>[] = [
    { header: 'DATE', value: (t) => t.date.slice(0, 10) },
    { header: 'TOTAL', value: (t) => show(t.total) },
    ...severities.map((s) => ({ header: s, value: (t: Json) => show(t.bySeverity[s]) })),
  ];
  return formatTable(columns, a.trends);
}

/** Nanoseconds (the report's Go time.Duration numbers) as text. */
const nanos = (n: number | null) => (n === null ? null : `${Math.round(n / 1e6) / 1000}s`);

function describeCompliance(a: Json): string {
  const {
    Period,
    IncidentMetrics: i,
    RemediationMetrics: r,
    SLAMetrics: s,
    ApprovalMetrics: p,
    AuditSummary: u,
  } = a.spec;
  return keyValues([
    ['period', `${Period.Start} – ${Period.End}`],
    ['incidents', i.TotalIncidents],
    ['  by severity', i.BySeverity],
    ['  by state', i.ByState],
    ['  MTTD', nanos(i.MTTD)],
    ['  MTTR', nanos(i.MTTR)],
    ['remediations', r.TotalRemediations],
    ['  success rate', r.SuccessRate],
    ['  auto-remediated', r.AutoRemediatedCount],
    ['  agentic', r.AgenticCount],
    ['SLA compliance %', s.CompliancePercentage],
    ['  response violations', s.ResponseSLAViolations],
    ['  resolution violations', s.ResolutionSLAViolations],
    ['approvals', p.TotalRequests],
    ['  approved (auto/manual)', `${p.AutoApproved}/${p.ManualApproved}`],
    ['  rejected', p.Rejected],
    ['  expired', p.Expired],
    ['  pending', p.Pending],
    ['audit events', u.TotalEvents],
  ]);
}

/** `foghorn analytics mttr|trends|compliance`. */
export function analyticsCommand(): Command {
  const analytics = clientGroup('analytics').description('MTTR, incident trends and the compliance report');
  analytics.addCommand(
    clientCommand('mttr', 'mean time to resolve: overall, by severity and phase, against earlier periods')
      .addOption(new Option('--period <period>', 'the window, up to now').choices(ANALYTICS_PERIODS))
      .option('--severity <severity>', 'only this severity')
      .option('-n, --namespace <namespace>', 'only this namespace')
      .addOption(new Option('--granularity <g>', 'history buckets').choices(GRANULARITIES))
      .action(
        act<{ period?: string; severity?: string; namespace?: string; granularity?: string }>(
          async ({ client, opts, output }) => {
            const { period, severity, namespace, granularity } = opts;
            const answer = await client.get<Json>('/analytics/mttr', { period, severity, namespace, granularity });
            printAnswer(output, answer, () => describeMttr(answer));
          },
        ),
      ),
  );
  analytics.addCommand(
    clientCommand('trends', 'incidents detected per day or week, by severity')
      .option('--start <time>', 'RFC 3339 time')
      .option('--end <time>', 'RFC 3339 time')
      .addOption(new Option('--group-by <unit>', 'bucket size').choices(TREND_GROUPS))
      .action(
        act<{ start?: string; end?: string; groupBy?: string }>(async ({ client, opts, output }) => {
          const answer = await client.get<Json>('/analytics/trends', {
            start: opts.start,
            end: opts.end,
            groupBy: opts.groupBy,
          });
          printAnswer(output, answer, () => describeTrends(answer));
        }),
      ),
  );
  analytics.addCommand(
    clientCommand('compliance', 'the compliance report (default: the last 7 days)')
      .option('--start <time>', 'RFC 3339 time')
      .option('--end <time>', 'RFC 3339 time')
      .option('-n, --namespace <namespace>', 'only this namespace')
      .action(
        act<{ start?: string; end?: string; namespace?: string }>(async ({ client, opts, output }) => {
          const { start, end, namespace } = opts;
          const answer = await client.get<Json>('/analytics/compliance', { start, end, namespace });
          printAnswer(output, answer, () => describeCompliance(answer));
        }),
      ),
  );
  return analytics;
}
