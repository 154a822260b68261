import { useState, type FormEvent } from 'react';
import { send } from '../http';
import { ApprovalDecision } from '../components/ApprovalDecision';
import { Badge } from '../components/Badge';
import { WhatChanged } from '../components/Changes';
import { Cited, EvidenceSection } from '../components/Evidence';
import { TextArea, TextField } from '../components/Fields';
import { Facts, Page, Section, TableScroll } from '../components/Layout';
import { ErrorMessage, Loading, StatusMessage } from '../components/Messages';
import { PlanSteps } from '../components/PlanSteps';
import { useAction } from '../components/useAction';
import { workflowLink } from '../config';
import { analysisWithout, NO_EVIDENCE, type InsightWithEvidence } from '../evidence';
import { ago, percent, when } from '../format';
import { useApi } from '../queries';
import { href } from '../router';
import { useIdentity } from '../session';
import type { Approval, Incident, List, Plan, TimelineEvent } from '../types';
import { atLeast } from '../vocabulary';

/**
 * One incident: summary, insight, what changed and the evidence, live timeline, plans, approvals,
 * and the operator actions.
 */
export function IncidentDetail({ name }: { name: string }) {
  const path = `/incidents/${encodeURIComponent(name)}`;
  const incident = useApi<Incident>(path);
  const { role } = useIdentity();
  if (incident.isPending) return <Loading what={name} />;
  if (!incident.data) return <Page title={name}>{<ErrorMessage error={incident.error} />}</Page>;
  const i = incident.data;
  const temporal = workflowLink(i.metadata.name);
  return (
    <Page
      title={
        <>
          {i.metadata.name} <Badge kind="severity" value={i.spec.severity} /> <Badge value={i.status.state} />
        </>
      }
    >
      <ErrorMessage error={incident.error} />
      <NobodyPaged path={`${path}/timeline`} />
      <Section title="Summary">
        <Facts
          items={[
            ['Resource', `${i.metadata.namespace}/${i.spec.resource}`],
            ['Description', i.spec.description],
            ['Signal', i.spec.signalType],
            ['Detected', `${when(i.status.detectedAt)} (${ago(i.status.detectedAt)} ago)`],
            ['Risk score', i.status.riskScore],
            ['Acknowledged', i.status.acknowledged ? 'yes' : 'no'],
            ['Snoozed until', i.status.snoozed ? when(i.status.snoozeUntil) : ''],
            ['Escalated', when(i.status.escalatedAt)],
            ['Resolved', i.status.resolvedAt ? `${when(i.status.resolvedAt)}: ${i.status.resolution ?? ''}` : ''],
            ['Runbook', i.spec.runbook ? <a href={href('runbooks', i.spec.runbook)}>{i.spec.runbook}</a> : ''],
            ['Escalation policy', i.spec.escalationPolicy],
            ['Cluster', i.spec.cluster],
            [
              'Postmortem',
              i.status.postmortem ? <a href={href('postmortems', i.status.postmortem)}>{i.status.postmortem}</a> : '',
            ],
            [
              'Workflow',
              temporal ? (
                <a href={temporal} target="_blank" rel="noreferrer">
                  Open in Temporal UI
                </a>
              ) : (
                ''
              ),
            ],
          ]}
        />
      </Section>
      {atLeast(role, 'operator') && <OperatorActions incident={i} />}
      <InsightAndEvidence incident={i} />
      <Timeline path={`${path}/timeline`} />
      <Plans incident={i.metadata.name} />
      <Approvals incident={i.metadata.name} />
    </Page>
  );
}

/** The insight, what changed and the evidence: one query of the insight, shared by the three. */
function InsightAndEvidence({ incident }: { incident: Incident }) {
  const insights = useApi<List<InsightWithEvidence>>('/aiinsights', { incident: incident.metadata.name });
  const insight = insights.data?.items[0];
  return (
    <>
      <InsightSection incident={incident} insight={insight} error={insights.error} />
      <WhatChanged incident={incident} evidence={insight?.evidence} />
      <EvidenceSection incident={incident} insight={insight} />
    </>
  );
}

/**
 * Each text once: the root cause, the analysis (without the root cause and change context it
 * repeats), the recommendations, the change context and the log analysis.
 */
function InsightSection({
  incident,
  insight,
  error,
}: {
  incident: Incident;
  insight?: InsightWithEvidence;
  error: unknown;
}) {
  const a = incident.status.analysisResult;
  const name = incident.metadata.name;
  const known = new Set(insight?.evidence?.items.map((e) => e.id) ?? []);
  // Without evidence the change context only says why: the Evidence section says it.
  const context = insight?.gitOpsContext?.startsWith(NO_EVIDENCE) ? '' : (insight?.gitOpsContext ?? '');
  const analysis = insight ? analysisWithout(insight.analysis, [a.rootCause, context]) : '';
  const recommendations = insight?.recommendations.length
    ? insight.recommendations
    : a.recommendation
      ? [a.recommendation]
      : [];
  return (
    <Section title="Insight">
      <ErrorMessage error={error} />
      {!insight && !a.rootCause ? (
        <p className="muted">No insight yet: the analysis is running.</p>
      ) : (
        <div className="insight">
          <Facts
            items={[
              ['Confidence', percent(insight?.confidence ?? a.confidence, 0)],
              ['Model', insight ? `${insight.provider} / ${insight.model}` : ''],
            ]}
          />
          {a.rootCause && (
            <>
              <h3>Root cause</h3>
              <p className="wrap insight-text">
                <Cited text={a.rootCause} incident={name} known={known} />
              </p>
            </>
          )}
          {analysis && (
            <>
              <h3>Analysis</h3>
              <p className="wrap insight-text">
                <Cited text={analysis} incident={name} known={known} />
              </p>
            </>
          )}
          {recommendations.length > 0 && (
            <>
              <h3>Recommendations</h3>
              <ol>
                {recommendations.map((r, n) => (
                  <li key={`${n}-${r}`} className="wrap">
                    <Cited text={r} incident={name} known={known} />
                  </li>
                ))}
              </ol>
            </>
          )}
          {context && (
            <>
              <h3>Change context</h3>
              <p className="wrap insight-text">
                <Cited text={context} incident={name} known={known} />
              </p>
            </>
          )}
          {insight?.logAnalysis && (
            <>
              <h3>Log analysis</h3>
              <p className="wrap insight-text">
                <Cited text={insight.logAnalysis} incident={name} known={known} />
              </p>
            </>
          )}
        </div>
      )}
    </Section>
  );
}

/**
 * Said at the top when an approval or an escalation of this incident reached nobody: no policy
 * matched and no chat home channel is set, or the policy pages nobody. The notifier puts a
 * `Notification` event of channel `none` on the timeline (the same query as the timeline's).
 */
function NobodyPaged({ path }: { path: string }) {
  const timeline = useApi<{ events: TimelineEvent[] }>(path);
  const unheard = [
    ...new Set(
      (timeline.data?.events ?? [])
        .filter((e) => e.type === 'Notification' && e.details?.channel === 'none')
        .map((e) => e.message),
    ),
  ];
  if (unheard.length === 0) return null;
  return (
    <div role="alert" className="message message-error">
      <strong>Nobody was paged.</strong> Approvals and escalations of this incident reach no one until an escalation
      policy with reachable targets matches it (or FOGHORN_WEBHOOK_HOME_CHANNEL is set):
      <ul>
        {unheard.map((m) => (
          <li key={m}>{m}</li>
        ))}
      </ul>
    </div>
  );
}

/** The timeline, oldest first; new events arrive with the live refresh. */
function Timeline({ path }: { path: string }) {
  const timeline = useApi<{ events: TimelineEvent[] }>(path);
  return (
    <Section title="Timeline">
      <ErrorMessage error={timeline.error} />
      <ol className="timeline" aria-live="polite" aria-relevant="additions">
        {timeline.data?.events.map((e, n) => (
          <li key={`${e.timestamp}-${n}`} data-type={e.type}>
            <time dateTime={e.timestamp}>{when(e.timestamp)}</time> <strong>{e.type}</strong>{' '}
            <span className="muted">({e.source})</span>
            <div className="wrap">{e.message}</div>
          </li>
        ))}
      </ol>
    </Section>
  );
}

function Plans({ incident }: { incident: string }) {
  const plans = useApi<List<Plan>>('/remediations', { incident });
  return (
    <Section title="Remediation plans">
      <ErrorMessage error={plans.error} />
      {plans.data?.items.length === 0 && <p className="muted">No remediation plan.</p>}
      {plans.data?.items.map((p) => (
        <PlanSteps key={p.name} plan={p} />
      ))}
    </Section>
  );
}

function Approvals({ incident }: { incident: string }) {
  const approvals = useApi<List<Approval>>('/approvals', { incident });
  return (
    <Section title="Approvals">
      <ErrorMessage error={approvals.error} />
      {approvals.data?.items.length === 0 && <p className="muted">No approval requested.</p>}
      {approvals.data && approvals.data.items.length > 0 && (
        <TableScroll label="Approvals of this incident">
          <thead>
            <tr>
              <th scope="col">Approval</th>
              <th scope="col">Status</th>
              <th scope="col">Action</th>
              <th scope="col">Needs</th>
              <th scope="col">Decision</th>
            </tr>
          </thead>
          <tbody>
            {approvals.data.items.map((a) => (
              <tr key={a.name}>
                <td>
                  <a href={href('approvals', a.name)}>{a.name}</a>
                </td>
                <td>
                  <Badge value={a.status} />
                </td>
                <td className="wrap">{a.action}</td>
                <td>{a.requiredRole}</td>
                <td>
                  {a.decidedBy ? `${a.decidedBy}${a.comment ? `: ${a.comment}` : ''}` : ''}
                  <ApprovalDecision approval={a} />
                </td>
              </tr>
            ))}
          </tbody>
        </TableScroll>
      )}
    </Section>
  );
}

/** Acknowledge, snooze and resolve: each audited by the API with the token's user. */
function OperatorActions({ incident }: { incident: Incident }) {
  const { user } = useIdentity();
  const name = incident.metadata.name;
  const ns = { namespace: incident.metadata.namespace };
  const base = `/incidents/${encodeURIComponent(name)}`;
  const [message, setMessage] = useState('');
  const [duration, setDuration] = useState('30m');
  const [reason, setReason] = useState('');
  const [resolution, setResolution] = useState('');

  const ack = useAction(
    () => send('POST', `${base}/acknowledge`, { acknowledgedBy: user, message }, ns),
    () => `${name} acknowledged.`,
  );
  const snooze = useAction(
    () =>
      send<{ status: { snoozeUntil: string } }>('POST', `${base}/snooze`, { duration, reason, snoozedBy: user }, ns),
    (r) => `${name} snoozed until ${when(r.status.snoozeUntil)}.`,
  );
  const resolve = useAction(
    () => send('POST', `${base}/resolve`, resolution.trim() ? { resolution } : {}, ns),
    () => `${name} resolved.`,
  );
  const on = (run: () => void) => (e: FormEvent) => {
    e.preventDefault();
    run();
  };

  const resolved = incident.status.state === 'Resolved';
  return (
    <Section title="Actions">
      {resolved && <p className="muted">Resolved: nothing left to do here.</p>}
      <div className="actions-grid" hidden={resolved}>
        {!incident.status.acknowledged && !resolved && (
          <form onSubmit={on(() => ack.run(undefined))} aria-label="Acknowledge">
            <h3>Acknowledge</h3>
            <TextField label="Message" name="message" value={message} onChange={setMessage} problems={ack.problems} />
            <button type="submit" className="primary" disabled={ack.busy}>
              Acknowledge
            </button>
            <ErrorMessage error={ack.error} />
          </form>
        )}
        <form onSubmit={on(() => snooze.run(undefined))} aria-label="Snooze">
          <h3>Snooze</h3>
          <TextField
            label="Duration"
            name="duration"
            value={duration}
            onChange={setDuration}
            hint="Go duration up to 24h, e.g. 30m or 2h"
            required
            problems={snooze.problems}
          />
          <TextField label="Reason" name="reason" value={reason} onChange={setReason} problems={snooze.problems} />
          <button type="submit" disabled={snooze.busy}>
            Snooze
          </button>
          <ErrorMessage error={snooze.error} />
        </form>
        <form onSubmit={on(() => resolve.run(undefined))} aria-label="Resolve">
          <h3>Resolve</h3>
          <TextArea
            label="Resolution"
            name="resolution"
            value={resolution}
            onChange={setResolution}
            rows={2}
            problems={resolve.problems}
          />
          <button type="submit" className="danger" disabled={resolve.busy}>
            Resolve
          </button>
          <ErrorMessage error={resolve.error} />
        </form>
      </div>
      <StatusMessage text={[ack.done, snooze.done, resolve.done].filter(Boolean).join(' ')} />
    </Section>
  );
}
