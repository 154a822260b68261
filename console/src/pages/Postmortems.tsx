import { useState, type FormEvent } from 'react';
import { send } from '../http';
import { Badge } from '../components/Badge';
import { Filters } from '../components/Filters';
import { SelectField, TextArea, TextField } from '../components/Fields';
import { Facts, Page, Section, TableScroll } from '../components/Layout';
import { ErrorMessage, Loading, StatusMessage } from '../components/Messages';
import { useAction } from '../components/useAction';
import { percent, when } from '../format';
import { useApi } from '../queries';
import { href, type Route } from '../router';
import { useIdentity } from '../session';
import type { List, Postmortem, PostmortemItem } from '../types';
import { atLeast, POSTMORTEM_STATES } from '../vocabulary';

export function Postmortems({ route }: { route: Route }) {
  const filter = { state: route.query.get('state') ?? '', incident: route.query.get('incident') ?? '' };
  const list = useApi<List<PostmortemItem>>('/postmortems', { ...filter, pageSize: 100 });
  return (
    <Page title="Postmortems">
      <Filters parts={['postmortems']} initial={filter}>
        {(v, set) => (
          <>
            <SelectField
              label="State"
              name="state"
              value={v.state}
              onChange={(x) => set('state', x)}
              options={POSTMORTEM_STATES}
              any="any"
            />
            <TextField label="Incident" name="incident" value={v.incident} onChange={(x) => set('incident', x)} />
          </>
        )}
      </Filters>
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading what="postmortems" />
      ) : (
        <TableScroll label="Postmortems">
          <thead>
            <tr>
              <th scope="col">Postmortem</th>
              <th scope="col">State</th>
              <th scope="col">Title</th>
              <th scope="col">Severity</th>
              <th scope="col">Incident</th>
              <th scope="col">Reviewed by</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.items.map((p) => (
              <tr key={p.name}>
                <td>
                  <a href={href('postmortems', p.name)}>{p.name}</a>
                </td>
                <td>
                  <Badge value={p.state} />
                </td>
                <td className="wrap">{p.title}</td>
                <td>{p.severity && <Badge kind="severity" value={p.severity} />}</td>
                <td>
                  <a href={href('incidents', p.incident)}>{p.incident}</a>
                </td>
                <td>{p.reviewedBy ?? '—'}</td>
                <td>{when(p.createdAt)}</td>
              </tr>
            ))}
            {list.data?.items.length === 0 && (
              <tr>
                <td colSpan={7}>No postmortem matches.</td>
              </tr>
            )}
          </tbody>
        </TableScroll>
      )}
    </Page>
  );
}

/**
 * The report's observed fields (types.ts's Postmortem does not list them yet). A number is null
 * when nothing measured it, and dataNotes says why.
 */
interface ObservedReport {
  impact?: {
    usersAffected: number | null;
    requestsAffected: string;
    revenueImpact: string;
    slosBreached: string[];
    podsAffected?: number | null;
    replicasAffected?: number | null;
    unavailableReplicaMinutes?: number | null;
  };
  gitCorrelation?: {
    commitSHA: string;
    commitMessage: string;
    author: string;
    timestamp: string;
    confidence: number;
    change?: string;
    reason?: string;
  };
  metricSnapshots?: { name: string; value: string; timestamp: string; phase: string }[];
  dataNotes?: string[];
}

const count = (n: number | null | undefined, unit = '') => (n === null || n === undefined ? '—' : `${n}${unit}`);

function Observed({ report }: { report: ObservedReport }) {
  const { impact, gitCorrelation: git, metricSnapshots = [], dataNotes = [] } = report;
  return (
    <>
      {impact && (
        <>
          <h3>Impact</h3>
          <Facts
            items={[
              ['Users affected', count(impact.usersAffected)],
              ['Pods affected', count(impact.podsAffected)],
              ['Replicas unavailable (most at once)', count(impact.replicasAffected)],
              ['Unavailable replica-minutes', count(impact.unavailableReplicaMinutes)],
              ['Requests affected', impact.requestsAffected],
              ['Revenue impact', impact.revenueImpact],
              ['SLOs breached', impact.slosBreached.join(', ')],
            ]}
          />
        </>
      )}
      {git && (
        <>
          <h3>Suspected change</h3>
          {git.change || git.commitMessage ? (
            <Facts
              items={[
                ['Change', git.commitMessage],
                ['When', when(git.timestamp)],
                ['By', git.author],
                ['Commit', git.commitSHA && <code>{git.commitSHA}</code>],
                ['Confidence', percent(git.confidence, 0)],
                ['Why', git.reason ?? ''],
              ]}
            />
          ) : (
            <p className="wrap muted">{git.reason || 'None.'}</p>
          )}
        </>
      )}
      {metricSnapshots.length > 0 && (
        <>
          <h3>Metric snapshots</h3>
          <TableScroll label="Metric snapshots">
            <thead>
              <tr>
                <th scope="col">Phase</th>
                <th scope="col">Metric</th>
                <th scope="col">Value</th>
                <th scope="col">At</th>
              </tr>
            </thead>
            <tbody>
              {metricSnapshots.map((m, i) => (
                <tr key={i}>
                  <td>{m.phase}</td>
                  <td>{m.name}</td>
                  <td>{m.value}</td>
                  <td>{when(m.timestamp)}</td>
                </tr>
              ))}
            </tbody>
          </TableScroll>
        </>
      )}
      {dataNotes.length > 0 && (
        <>
          <h3>Data notes</h3>
          <ul className="muted">
            {dataNotes.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

export function PostmortemDetail({ name }: { name: string }) {
  const { role } = useIdentity();
  const pm = useApi<Postmortem>(`/postmortems/${encodeURIComponent(name)}`);
  if (pm.isPending) return <Loading what={name} />;
  const p = pm.data;
  if (!p) return <Page title={name}>{<ErrorMessage error={pm.error} />}</Page>;
  const r = p.report;
  return (
    <Page
      title={
        <>
          {p.metadata.name} <Badge value={p.status.state} />
        </>
      }
    >
      <Section title="Report">
        <h3>{r.title}</h3>
        <Facts
          items={[
            ['Incident', <a href={href('incidents', p.metadata.incident)}>{p.metadata.incident}</a>],
            ['Severity', <Badge kind="severity" value={r.severity} />],
            ['Duration', r.duration],
            ['Detected', when(r.detectedAt)],
            ['Resolved', when(r.resolvedAt)],
            ['Author', p.metadata.author],
            ['Reviewer', p.status.reviewer ?? ''],
            ['Closed', when(p.status.closedAt)],
            ['Notes', p.status.notes ?? ''],
          ]}
        />
        <p className="wrap">{r.summary}</p>
        <h3>Root cause</h3>
        <p className="wrap">
          {r.rootCause.description || '—'}{' '}
          {r.rootCause.category && `(${r.rootCause.category}, confidence ${percent(r.rootCause.confidence, 0)})`}
        </p>
        <Observed report={r as ObservedReport} />
        <h3>Timeline</h3>
        <ol className="timeline">
          {r.timeline.map((t, i) => (
            <li key={i}>
              <time dateTime={t.time}>{when(t.time)}</time> {t.event}
            </li>
          ))}
        </ol>
        <h3>Remediation applied</h3>
        <p>
          {r.remediationApplied.runbook || 'none'} {r.remediationApplied.result && `— ${r.remediationApplied.result}`}
        </p>
        {r.actionItems.length > 0 && (
          <>
            <h3>Action items</h3>
            <TableScroll label="Action items">
              <thead>
                <tr>
                  <th scope="col">Priority</th>
                  <th scope="col">Description</th>
                  <th scope="col">Status</th>
                  <th scope="col">Due</th>
                </tr>
              </thead>
              <tbody>
                {r.actionItems.map((a, i) => (
                  <tr key={i}>
                    <td>{a.priority}</td>
                    <td className="wrap">{a.description}</td>
                    <td>{a.status}</td>
                    <td>{a.dueDate}</td>
                  </tr>
                ))}
              </tbody>
            </TableScroll>
          </>
        )}
        {r.lessonsLearned.length > 0 && (
          <>
            <h3>Lessons learned</h3>
            <ul>
              {r.lessonsLearned.map((l) => (
                <li key={l}>{l}</li>
              ))}
            </ul>
          </>
        )}
      </Section>
      {p.feedback && (
        <Section title="Feedback">
          <Facts
            items={[
              ['Root cause override', p.feedback.overrideRootCause ?? ''],
              ['Remediation accuracy', p.feedback.remediationAccuracy ? `${p.feedback.remediationAccuracy}/5` : ''],
              ['Comments', p.feedback.comments ?? ''],
              ['By', `${p.feedback.providedBy} at ${when(p.feedback.providedAt)}`],
            ]}
          />
        </Section>
      )}
      {atLeast(role, 'operator') && <PostmortemActions pm={p} />}
    </Page>
  );
}

function PostmortemActions({ pm }: { pm: Postmortem }) {
  const { user } = useIdentity();
  const path = `/postmortems/${encodeURIComponent(pm.metadata.name)}`;
  const ns = { namespace: pm.metadata.namespace };
  const [reviewer, setReviewer] = useState(user);
  const [notes, setNotes] = useState('');
  const [accuracy, setAccuracy] = useState('');
  const [override, setOverride] = useState('');
  const [comments, setComments] = useState('');
  const decide = useAction(
    (verb: 'review' | 'close') => send('POST', `${path}/${verb}`, { reviewer, notes }, ns),
    (_r, verb) => (verb === 'review' ? `${pm.metadata.name} is in review.` : `${pm.metadata.name} closed.`),
  );
  const feedback = useAction(
    () =>
      send(
        'POST',
        `${path}/feedback`,
        {
          ...(override && { overrideRootCause: override }),
          ...(accuracy && { remediationAccuracy: Number(accuracy) }),
          ...(comments && { comments }),
        },
        ns,
      ),
    () => 'Feedback saved.',
  );
  const closed = pm.status.state === 'Closed';
  const run = (verb: 'review' | 'close') => (e?: FormEvent) => {
    e?.preventDefault();
    decide.run(verb);
  };
  return (
    <>
      <Section title="Review">
        {closed ? (
          <p className="muted">Closed by {pm.status.reviewer}.</p>
        ) : (
          <form onSubmit={run(pm.status.state === 'Open' ? 'review' : 'close')} aria-label="Review and close">
            <TextField
              label="Reviewer"
              name="reviewer"
              value={reviewer}
              onChange={setReviewer}
              problems={decide.problems}
              required
            />
            <TextArea label="Notes" name="notes" value={notes} onChange={setNotes} problems={decide.problems} />
            <div className="buttons">
              {pm.status.state === 'Open' && (
                <button type="submit" className="primary" disabled={decide.busy}>
                  Start review
                </button>
              )}
              <button
                type={pm.status.state === 'Open' ? 'button' : 'submit'}
                onClick={pm.status.state === 'Open' ? run('close') : undefined}
                disabled={decide.busy}
              >
                Close postmortem
              </button>
            </div>
          </form>
        )}
        <ErrorMessage error={decide.error} />
        <StatusMessage text={decide.done} />
      </Section>
      <Section title="Give feedback">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            feedback.run(undefined);
          }}
          aria-label="Feedback"
        >
          <SelectField
            label="Remediation accuracy (1–5)"
            name="remediationAccuracy"
            value={accuracy}
            onChange={setAccuracy}
            options={['1', '2', '3', '4', '5']}
            any="not rated"
            problems={feedback.problems}
          />
          <TextField
            label="Root cause override"
            name="overrideRootCause"
            value={override}
            onChange={setOverride}
            problems={feedback.problems}
          />
          <TextArea
            label="Comments"
            name="comments"
            value={comments}
            onChange={setComments}
            problems={feedback.problems}
          />
          <button type="submit" disabled={feedback.busy}>
            Send feedback
          </button>
          <ErrorMessage error={feedback.error} />
          <StatusMessage text={feedback.done} />
        </form>
      </Section>
    </>
  );
}
