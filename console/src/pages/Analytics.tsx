import { useState } from 'react';
import { SelectField } from '../components/Fields';
import { Facts, Page, Section, TableScroll } from '../components/Layout';
import { ErrorMessage, Loading } from '../components/Messages';
import { TrendChart, type TrendPoint } from '../components/TrendChart';
import { nanos, percent } from '../format';
import { useApi } from '../queries';

type Dur = string | null;
interface Mttr {
  mttr: {
    overall: { mean: Dur; median: Dur; p95: Dur; p99: Dur; count: number; detected: number };
    bySeverity: Record<string, { mean: Dur; median: Dur; count: number }>;
    byPhase: Record<string, { mean: Dur; description: string }>;
    improvement: { vsPrevPeriod: string | null; vsBaseline: string | null; baselinePeriod: string };
  };
}
interface Trends {
  trends: TrendPoint[];
}
interface Compliance {
  spec: {
    IncidentMetrics: {
      TotalIncidents: number;
      MTTD: number | null;
      MTTR: number | null;
      MeanRemediationAttempts: number | null;
    };
    RemediationMetrics: { TotalRemediations: number; SuccessRate: number | null; AutoRemediatedCount: number };
    SLAMetrics: { CompliancePercentage: number | null; ResponseSLAViolations: number; ResolutionSLAViolations: number };
    ApprovalMetrics: {
      TotalRequests: number;
      ManualApproved: number;
      Rejected: number;
      Expired: number;
      Pending: number;
      AverageDecisionTime: Dur;
    };
    AuditSummary: { TotalEvents: number };
  };
}

const d = (v: Dur) => v ?? '—';

export function Analytics() {
  const [period, setPeriod] = useState('30d');
  const [groupBy, setGroupBy] = useState('day');
  const mttr = useApi<Mttr>('/analytics/mttr', { period }, { live: false });
  const trends = useApi<Trends>('/analytics/trends', { groupBy }, { live: false });
  const compliance = useApi<Compliance>('/analytics/compliance', {}, { live: false });
  const m = mttr.data?.mttr;
  const c = compliance.data?.spec;
  return (
    <Page title="Analytics">
      <Section title="Mean time to resolve">
        <SelectField
          label="Period"
          name="period"
          value={period}
          onChange={setPeriod}
          options={['7d', '30d', '90d', '180d']}
        />
        <ErrorMessage error={mttr.error} />
        {!m ? (
          <Loading what="MTTR" />
        ) : (
          <>
            <Facts
              items={[
                ['Mean', d(m.overall.mean)],
                ['Median', d(m.overall.median)],
                ['95th percentile', d(m.overall.p95)],
                ['99th percentile', d(m.overall.p99)],
                ['Resolved / detected', `${m.overall.count} / ${m.overall.detected}`],
                ['Vs previous period', m.improvement.vsPrevPeriod ?? '—'],
                [`Vs baseline (${m.improvement.baselinePeriod})`, m.improvement.vsBaseline ?? '—'],
              ]}
            />
            <h3>By phase</h3>
            <TableScroll label="MTTR by phase">
              <thead>
                <tr>
                  <th scope="col">Phase</th>
                  <th scope="col">Mean</th>
                  <th scope="col">Measured</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(m.byPhase).map(([phase, v]) => (
                  <tr key={phase}>
                    <th scope="row">{phase}</th>
                    <td>{d(v.mean)}</td>
                    <td className="wrap">{v.description}</td>
                  </tr>
                ))}
              </tbody>
            </TableScroll>
            <h3>By severity</h3>
            <TableScroll label="MTTR by severity">
              <thead>
                <tr>
                  <th scope="col">Severity</th>
                  <th scope="col">Mean</th>
                  <th scope="col">Median</th>
                  <th scope="col">Resolved</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(m.bySeverity).map(([s, v]) => (
                  <tr key={s}>
                    <th scope="row">{s}</th>
                    <td>{d(v.mean)}</td>
                    <td>{d(v.median)}</td>
                    <td>{v.count}</td>
                  </tr>
                ))}
              </tbody>
            </TableScroll>
          </>
        )}
      </Section>
      <Section title="Trends">
        <SelectField label="Group by" name="groupBy" value={groupBy} onChange={setGroupBy} options={['day', 'week']} />
        <ErrorMessage error={trends.error} />
        {trends.data ? (
          <>
            <TrendChart points={trends.data.trends} label={`Incidents per ${groupBy} by severity, last 30 days`} />
            <details>
              <summary>The numbers</summary>
              <TableScroll label="Incidents per period">
                <thead>
                  <tr>
                    <th scope="col">Date</th>
                    <th scope="col">Total</th>
                    <th scope="col">Critical</th>
                    <th scope="col">High</th>
                    <th scope="col">Medium</th>
                    <th scope="col">Low</th>
                  </tr>
                </thead>
                <tbody>
                  {trends.data.trends.map((t) => (
                    <tr key={t.date}>
                      <th scope="row">{t.date.slice(0, 10)}</th>
                      <td>{t.total}</td>
                      <td>{t.bySeverity.critical ?? 0}</td>
                      <td>{t.bySeverity.high ?? 0}</td>
                      <td>{t.bySeverity.medium ?? 0}</td>
                      <td>{t.bySeverity.low ?? 0}</td>
                    </tr>
                  ))}
                </tbody>
              </TableScroll>
            </details>
          </>
        ) : (
          <Loading what="trends" />
        )}
      </Section>
      <Section title="Compliance (last 7 days)">
        <ErrorMessage error={compliance.error} />
        {!c ? (
          <Loading what="the compliance report" />
        ) : (
          <Facts
            items={[
              ['Incidents', c.IncidentMetrics.TotalIncidents],
              ['Mean time to detect', nanos(c.IncidentMetrics.MTTD)],
              ['Mean time to resolve', nanos(c.IncidentMetrics.MTTR)],
              [
                'SLA compliance',
                c.SLAMetrics.CompliancePercentage === null ? '—' : `${c.SLAMetrics.CompliancePercentage}%`,
              ],
              [
                'SLA violations (response / resolution)',
                `${c.SLAMetrics.ResponseSLAViolations} / ${c.SLAMetrics.ResolutionSLAViolations}`,
              ],
              ['Remediations', c.RemediationMetrics.TotalRemediations],
              ['Remediation success', percent(c.RemediationMetrics.SuccessRate)],
              ['Auto-remediated', c.RemediationMetrics.AutoRemediatedCount],
              [
                'Approvals (approved / rejected / expired / pending)',
                `${c.ApprovalMetrics.ManualApproved} / ${c.ApprovalMetrics.Rejected} / ${c.ApprovalMetrics.Expired} / ${c.ApprovalMetrics.Pending}`,
              ],
              ['Average decision time', d(c.ApprovalMetrics.AverageDecisionTime)],
              ['Audit events', c.AuditSummary.TotalEvents],
            ]}
          />
        )}
      </Section>
    </Page>
  );
}
