import { Section, TableScroll } from './Layout';
import { Cited } from './Evidence';
import { ErrorMessage, Loading } from './Messages';
import {
  CHANGE_LOOKBACK_MS,
  changedObjectOf,
  relativeTo,
  span,
  type Change,
  type ChangeAuthor,
  type Evidence,
  type RevisionHealth,
  type SuspectedChange,
} from '../evidence';
import { percent, when } from '../format';
import { useApi } from '../queries';
import type { Incident, List } from '../types';
import './evidence.css';

/**
 * "What changed": the change record around the incident's workload, from two hours before
 * detection on, newest first; the change the evidence suspects is highlighted with why.
 */
export function WhatChanged({ incident, evidence }: { incident: Incident; evidence?: Evidence | null }) {
  const resource = changedObjectOf(incident.spec.resource, evidence);
  const detectedAt = incident.status.detectedAt;
  const since = new Date(new Date(detectedAt).getTime() - CHANGE_LOOKBACK_MS).toISOString();
  const changes = useApi<List<Change>>('/changes', {
    cluster: incident.spec.cluster || undefined,
    // Nodes are cluster-scoped: their changes have no namespace.
    namespace: resource.startsWith('Node/') ? undefined : incident.metadata.namespace,
    resource,
    since,
    pageSize: 50,
  });
  const suspect = evidence?.suspect;
  const items = changes.data?.items ?? [];
  const known = new Set(evidence?.items.map((e) => e.id) ?? []);
  return (
    <Section title="What changed">
      <ErrorMessage error={changes.error} />
      <p className="muted">
        Changes to {resource}
        {incident.spec.cluster ? ` in cluster ${incident.spec.cluster}` : ''} since {span(CHANGE_LOOKBACK_MS)} before
        detection, newest first.
      </p>
      {suspect && <Suspect suspect={suspect} detectedAt={detectedAt} incident={incident.metadata.name} known={known} />}
      {changes.isPending && <Loading what="the change record" />}
      {changes.data && items.length === 0 && (
        <p>No change recorded: nothing changed {resource} in that window, or its cluster is not watched.</p>
      )}
      {items.length > 0 && (
        <ol className="changes">
          {items.map((c, n) => (
            <ChangeEntry key={c.id} change={c} n={n} detectedAt={detectedAt} suspected={c.id === suspect?.change} />
          ))}
        </ol>
      )}
      {changes.data && changes.data.metadata.totalCount > items.length && (
        <p className="muted">
          The {items.length} newest of {changes.data.metadata.totalCount} changes.
        </p>
      )}
    </Section>
  );
}

function Suspect({
  suspect,
  detectedAt,
  incident,
  known,
}: {
  suspect: SuspectedChange;
  detectedAt: string;
  incident: string;
  known: ReadonlySet<string>;
}) {
  return (
    <div className="suspect">
      <h3 id="suspect-heading">
        Suspected change <span className="badge tone-suspected">confidence {percent(suspect.confidence, 0)}</span>
      </h3>
      <p>
        <strong>{suspect.summary}</strong> ({suspect.type} of {suspect.resource}
        {revisionText(suspect.revision, suspect.previousRevision)}),{' '}
        <time dateTime={suspect.at} title={when(suspect.at)}>
          {relativeTo(suspect.at, detectedAt)}
        </time>
        , {span(suspect.leadMs)} before the first failure. <Who by={suspect.by} />
      </p>
      <p className="wrap">
        <Cited text={suspect.reason} incident={incident} known={known} />
        {suspect.evidence && known.has(suspect.evidence) && (
          <>
            {' '}
            (<Cited text={`evidence ${suspect.evidence}`} incident={incident} known={known} />)
          </>
        )}
      </p>
    </div>
  );
}

const revisionText = (revision?: number, previous?: number) =>
  revision === undefined ? '' : `, revision ${revision}${previous === undefined ? '' : ` after ${previous}`}`;

function ChangeEntry({
  change: c,
  n,
  detectedAt,
  suspected,
}: {
  change: Change;
  n: number;
  detectedAt: string;
  suspected: boolean;
}) {
  return (
    <li className={suspected ? 'change suspected' : 'change'} data-change={c.id}>
      <div className="change-head">
        <span className="badge">{c.type}</span> <strong>{c.summary}</strong>
        {suspected && (
          <>
            {' '}
            <span className="badge tone-suspected">Suspected</span>
          </>
        )}
        {c.revisionHealth && (
          <>
            {' '}
            <RevisionBadge health={c.revisionHealth} />
          </>
        )}
      </div>
      <p className="change-meta">
        <time dateTime={c.at} title={when(c.at)}>
          {relativeTo(c.at, detectedAt)}
        </time>
        {' · '}
        {c.resource}
        {revisionText(c.revision, c.previousRevision)}
        {' · '}
        <Who by={c.by} />
      </p>
      {c.diff.length > 0 && (
        <TableScroll label={`Diff of change ${n + 1}: ${c.summary}`}>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">From</th>
              <th scope="col">To</th>
            </tr>
          </thead>
          <tbody>
            {c.diff.map((d, i) => (
              <tr key={`${i}-${d.field}`}>
                <td>{d.field}</td>
                <td className="diff-cell">{d.from || '—'}</td>
                <td className="diff-cell">{d.to || '—'}</td>
              </tr>
            ))}
          </tbody>
        </TableScroll>
      )}
    </li>
  );
}

/** Who made a change: the field manager, the change-cause, the GitOps or release source, Foghorn itself. */
export function Who({ by }: { by: ChangeAuthor }) {
  const parts = [
    by.manager && `manager ${by.manager}`,
    by.changeCause && `change-cause “${by.changeCause}”`,
    by.source && `source ${by.source}`,
  ].filter(Boolean);
  return (
    <span className="who-changed">
      By {parts.length ? parts.join(', ') : 'an unrecorded author'}
      {by.foghorn && (
        <>
          {' '}
          <span className="badge tone-foghorn">Foghorn</span>
        </>
      )}
    </span>
  );
}

/** What Foghorn has seen of a revision: Healthy, Failed (signal, exit code), Progressing or Unobserved. */
export function RevisionBadge({ health }: { health: Pick<RevisionHealth, 'state' | 'failure' | 'healthyAt'> }) {
  const f = health.failure;
  const text =
    health.state === 'Failed' && f
      ? `Failed: ${f.signal}${f.exitCode !== undefined ? `, exit code ${f.exitCode}` : ''}`
      : health.state;
  const title =
    health.state === 'Healthy' && health.healthyAt
      ? `healthy since ${when(health.healthyAt)}`
      : f
        ? `${f.reason} at ${when(f.at)}`
        : undefined;
  return (
    <span className={`badge tone-${health.state.toLowerCase()}`} title={title}>
      Revision {text}
    </span>
  );
}
