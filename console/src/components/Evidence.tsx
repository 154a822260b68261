import { Fragment, useEffect, type MouseEvent } from 'react';
import { Facts, Section } from './Layout';
import {
  evidenceAnchor,
  NO_EVIDENCE,
  relativeTo,
  span,
  splitCitations,
  type Evidence,
  type InsightWithEvidence,
  type PodEvidence,
} from '../evidence';
import { when } from '../format';
import { href, useRoute, withQuery } from '../router';
import type { Incident } from '../types';
import './evidence.css';

/** How many log lines a pod shows (the analysis keeps a capped tail already). */
const LOG_TAIL = 20;

/** Moves to an evidence item: focus (which scrolls it into view) for keyboards and screen readers. */
function focusEvidence(id: string) {
  const el = document.getElementById(evidenceAnchor(id));
  if (!el) return;
  el.focus({ preventScroll: true });
  el.scrollIntoView({ block: 'center' });
}

/**
 * A text with the evidence ids it cites (`(evidence E1, E3)`) as links to the items. The link
 * keeps the page and names the item in the hash's query (`#/incidents/INC-…?evidence=E1`), so it
 * survives the live refresh, reloads and the back button, as filters do.
 */
export function Cited({ text, incident, known }: { text: string; incident: string; known: ReadonlySet<string> }) {
  return (
    <>
      {splitCitations(text, known).map((p, n) =>
        p.id ? <EvidenceLink key={n} id={p.id} incident={incident} /> : <Fragment key={n}>{p.text}</Fragment>,
      )}
    </>
  );
}

function EvidenceLink({ id, incident }: { id: string; incident: string }) {
  const target = withQuery(href('incidents', incident), { evidence: id });
  // Already there (the hash would not change): move to the item again.
  const onClick = (e: MouseEvent) => {
    if (window.location.hash === target) {
      e.preventDefault();
      focusEvidence(id);
    }
  };
  return (
    <a href={target} onClick={onClick} className="evidence-link">
      {id}
    </a>
  );
}

/**
 * What the analysis collected from the cluster: the citable items by id, the failing pods (the
 * collector keeps only those not ready or restarting) with their last termination and logs, and
 * what could not be collected.
 */
export function EvidenceSection({ incident, insight }: { incident: Incident; insight?: InsightWithEvidence }) {
  const target = useRoute().query.get('evidence');
  const evidence = insight?.evidence;
  const ready = Boolean(evidence);
  useEffect(() => {
    if (target && ready) focusEvidence(target);
  }, [target, ready]);

  let missing = '';
  if (!insight) missing = 'the analysis is still running.';
  else if (!evidence) missing = noEvidenceReason(incident, insight);
  else if (evidence.items.length === 0 && evidence.pods.length === 0)
    missing = evidence.notes.length ? evidence.notes.join('; ') : 'nothing could be collected.';
  return (
    <Section title="Evidence">
      {missing || !evidence ? (
        <p className="muted">
          {NO_EVIDENCE}
          {missing}
        </p>
      ) : (
        <EvidenceBody evidence={evidence} incident={incident} target={target} />
      )}
    </Section>
  );
}

/** The kinds the analysis collects cluster evidence for (activities/evidence.ts). */
const EVIDENCE_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Pod', 'Node'];

/** Why an analysed incident has no evidence: the analysis says so in its change context, else the console guesses. */
function noEvidenceReason(incident: Incident, insight: InsightWithEvidence): string {
  const said = insight.gitOpsContext ?? '';
  if (said.startsWith(NO_EVIDENCE)) return said.slice(NO_EVIDENCE.length);
  const kind = incident.spec.resource.split('/')[0];
  if (!EVIDENCE_KINDS.includes(kind)) return `${kind} is not a kind Foghorn collects cluster evidence for.`;
  const cluster = incident.spec.cluster || 'local';
  return `the analysis collected none (cluster ${cluster} is not registered with Foghorn, or the incident was analysed before evidence was collected).`;
}

function EvidenceBody({
  evidence: e,
  incident,
  target,
}: {
  evidence: Evidence;
  incident: Incident;
  target: string | null;
}) {
  const detectedAt = incident.status.detectedAt;
  return (
    <>
      <Facts
        items={[
          ['Collected', when(e.collectedAt)],
          ['First failure', relativeTo(e.firstSignalAt, detectedAt)],
          ['Window', `${span(e.windowMs)} before the first failure`],
          ['Owner chain', e.ownerChain.join(' → ')],
          [
            'Replicas',
            e.replicas
              ? `${e.replicas.available} of ${e.replicas.desired} available, ${e.replicas.updated} updated`
              : '',
          ],
        ]}
      />
      <h3>Items</h3>
      {e.items.length === 0 ? (
        <p className="muted">No citable item.</p>
      ) : (
        <ol className="evidence-items">
          {e.items.map((item) => (
            <li
              key={item.id}
              id={evidenceAnchor(item.id)}
              tabIndex={-1}
              className={item.id === target ? 'selected' : undefined}
            >
              <strong className="evidence-id">{item.id}</strong> <span className="badge">{item.kind}</span>{' '}
              <span className="wrap">{item.summary}</span>
              {item.at && (
                <>
                  {' '}
                  <time className="muted" dateTime={item.at} title={when(item.at)}>
                    ({relativeTo(item.at, detectedAt)})
                  </time>
                </>
              )}
            </li>
          ))}
        </ol>
      )}
      <h3>Failing pods</h3>
      {e.pods.length === 0 ? (
        <p className="muted">No failing pod collected.</p>
      ) : (
        e.pods.map((p) => <Pod key={p.name} pod={p} />)
      )}
      {e.notes.length > 0 && (
        <>
          <h3>Not collected</h3>
          <ul className="evidence-notes">
            {e.notes.map((n) => (
              <li key={n} className="wrap">
                {n}
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function Pod({ pod: p }: { pod: PodEvidence }) {
  const t = p.lastTermination;
  const [kind, lines] = p.previousLogs.length
    ? ['Previous container’s logs', p.previousLogs]
    : ['Current logs', p.currentLogs];
  const tail = lines.slice(-LOG_TAIL);
  return (
    <div className="pod">
      <h4>{p.name}</h4>
      <Facts
        items={[
          ['Node', p.node],
          ['Phase', p.phase],
          ['Restarts', p.restarts],
          ['Waiting', p.waitingReason],
          ['Last termination', t ? `${t.reason}, exit code ${t.exitCode}${t.at ? ` (${when(t.at)})` : ''}` : ''],
        ]}
      />
      {tail.length > 0 ? (
        <>
          <p className="log-label">
            {kind} (last {tail.length} line{tail.length === 1 ? '' : 's'})
          </p>
          <pre className="logs">{tail.join('\n')}</pre>
        </>
      ) : (
        <p className="muted">No logs collected.</p>
      )}
    </div>
  );
}
