import { ApprovalDecision } from '../components/ApprovalDecision';
import { Badge } from '../components/Badge';
import { Facts, Page, Section, TableScroll } from '../components/Layout';
import { ErrorMessage, Loading } from '../components/Messages';
import { workflowLink } from '../config';
import { when } from '../format';
import { useApi } from '../queries';
import { href } from '../router';
import type { Approval, List } from '../types';

/**
 * Approvals: pending ones first (they wait for someone), then the decided ones, newest first, in
 * one table: a row that gets decided moves down but keeps its decision form's answer in view.
 */
export function Approvals() {
  const pending = useApi<List<Approval>>('/approvals', { status: 'pending', pageSize: 100 });
  const recent = useApi<List<Approval>>('/approvals', { pageSize: 50 });
  // Both lists, each approval once (the pending list's copy wins), pending first. A row never
  // leaves the table while the two lists refresh one after the other, so its answer stays.
  const pendingItems = pending.data?.items ?? [];
  const rows = [
    ...pendingItems,
    ...(recent.data?.items ?? []).filter((a) => !pendingItems.some((p) => p.name === a.name)),
  ].sort((a, b) => Number(b.status === 'pending') - Number(a.status === 'pending'));
  return (
    <Page title="Approvals">
      <Section title="Pending first">
        <ErrorMessage error={pending.error ?? recent.error} />
        {pending.isPending ? <Loading what="approvals" /> : <ApprovalTable items={rows} />}
      </Section>
    </Page>
  );
}

function ApprovalTable({ items }: { items: Approval[] }) {
  if (items.length === 0) return <p className="muted">None.</p>;
  return (
    <TableScroll label="Approvals, pending first">
      <thead>
        <tr>
          <th scope="col">Approval</th>
          <th scope="col">Status</th>
          <th scope="col">Incident</th>
          <th scope="col">Action</th>
          <th scope="col">Risk</th>
          <th scope="col">Needs</th>
          <th scope="col">Expires / decided</th>
          <th scope="col">Decision</th>
        </tr>
      </thead>
      <tbody>
        {items.map((a) => (
          <tr key={a.name}>
            <td>
              <a href={href('approvals', a.name)}>{a.name}</a>
            </td>
            <td>
              <Badge value={a.status} />
            </td>
            <td>
              <a href={href('incidents', a.incident)}>{a.incident}</a>
            </td>
            <td className="wrap">{a.action}</td>
            <td>{a.riskScore}</td>
            <td>{a.requiredRole}</td>
            <td>
              {a.status === 'pending'
                ? `expires ${when(a.expiresAt)}`
                : `${when(a.decidedAt)}${a.decidedBy ? ` by ${a.decidedBy}` : ''}`}
            </td>
            <td>
              <ApprovalDecision approval={a} />
            </td>
          </tr>
        ))}
      </tbody>
    </TableScroll>
  );
}

export function ApprovalDetail({ name }: { name: string }) {
  const approval = useApi<Approval>(`/approvals/${encodeURIComponent(name)}`);
  if (approval.isPending) return <Loading what={name} />;
  const a = approval.data;
  if (!a) return <Page title={name}>{<ErrorMessage error={approval.error} />}</Page>;
  const temporal = workflowLink(a.name);
  return (
    <Page
      title={
        <>
          {a.name} <Badge value={a.status} />
        </>
      }
    >
      <Section title="Request">
        <Facts
          items={[
            ['Incident', <a href={href('incidents', a.incident)}>{a.incident}</a>],
            ['Plan', <a href={href('remediations', a.plan)}>{a.plan}</a>],
            ['Action', a.action],
            ['Runbook', a.runbook],
            ['Risk', a.riskScore],
            ['Needs role', a.requiredRole],
            ['Why', a.reasons.join('; ')],
            ['Requested', when(a.requestedAt)],
            ['Expires', when(a.expiresAt)],
            ['Decided', a.decidedAt ? `${when(a.decidedAt)}${a.decidedBy ? ` by ${a.decidedBy}` : ''}` : ''],
            ['Comment', a.comment ?? ''],
            ['Expiry reason', a.expiryReason ?? ''],
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
        <ApprovalDecision approval={a} />
      </Section>
      <Section title="Previews">
        {(a.previews ?? []).length === 0 && <p className="muted">No preview.</p>}
        {a.previews?.map((p) => (
          <div key={p.step} className="preview">
            <h3>
              Step {p.step}: {p.action} {p.target}
            </h3>
            <p>
              {p.summary} {p.dryRun ? '(server-side dry run)' : ''}
            </p>
            {p.error && <p className="field-error">{p.error}</p>}
            {p.diff && <pre>{p.diff}</pre>}
          </div>
        ))}
      </Section>
    </Page>
  );
}
