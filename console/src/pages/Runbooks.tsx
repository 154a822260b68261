import { Badge } from '../components/Badge';
import { Facts, Page, Section, TableScroll } from '../components/Layout';
import { ErrorMessage, Loading, StatusMessage } from '../components/Messages';
import { useAction } from '../components/useAction';
import { send } from '../http';
import { useApi } from '../queries';
import { href } from '../router';
import { useIdentity } from '../session';
import type { List, Runbook, RunbookItem } from '../types';
import { atLeast } from '../vocabulary';

/** A success rate (0–100) or an average time; the API sends null before the first run. */
const rate = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `${n}%`);
const average = (d: string | null | undefined) => d ?? '—';

export function Runbooks() {
  const { role } = useIdentity();
  const list = useApi<List<RunbookItem>>('/runbooks', { pageSize: 100 }, { live: false });
  return (
    <Page
      title="Runbooks"
      actions={
        atLeast(role, 'admin') && (
          <a className="button primary" href={href('runbooks', '-new')}>
            New runbook
          </a>
        )
      }
    >
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading what="runbooks" />
      ) : (
        <TableScroll label="Runbooks">
          <thead>
            <tr>
              <th scope="col">Runbook</th>
              <th scope="col">Category</th>
              <th scope="col">Version</th>
              <th scope="col">Severities</th>
              <th scope="col">Automated</th>
              <th scope="col">Approval</th>
              <th scope="col">Steps</th>
              <th scope="col">Success</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.items.map((r) => (
              <tr key={r.name}>
                <td>
                  <a href={href('runbooks', r.name)}>{r.name}</a>
                </td>
                <td>{r.category}</td>
                <td>{r.version}</td>
                <td>{r.severity.join(', ')}</td>
                <td>{r.automated ? 'yes' : 'no'}</td>
                <td>{r.approvalRequired ? 'required' : '—'}</td>
                <td>{r.stepsCount}</td>
                <td>{rate(r.successRate)}</td>
              </tr>
            ))}
          </tbody>
        </TableScroll>
      )}
    </Page>
  );
}

export function RunbookDetail({ name }: { name: string }) {
  const { role } = useIdentity();
  const runbook = useApi<Runbook>(`/runbooks/${encodeURIComponent(name)}`, {}, { live: false });
  const remove = useAction(
    () => send('DELETE', `/runbooks/${encodeURIComponent(name)}`),
    () => `Runbook ${name} deleted.`,
  );
  if (remove.done)
    return (
      <Page title={name}>
        <StatusMessage text={remove.done} />
        <a href={href('runbooks')}>Back to the runbooks</a>
      </Page>
    );
  if (runbook.isPending) return <Loading what={name} />;
  const r = runbook.data;
  if (!r) return <Page title={name}>{<ErrorMessage error={runbook.error} />}</Page>;
  const admin = atLeast(role, 'admin');
  return (
    <Page
      title={`Runbook ${r.metadata.name}`}
      actions={
        admin && (
          <>
            <a className="button" href={href('runbooks', r.metadata.name, 'edit')}>
              Edit
            </a>
            <button
              type="button"
              className="danger"
              disabled={remove.busy}
              onClick={() => {
                if (window.confirm(`Delete runbook ${r.metadata.name}?`)) remove.run(undefined);
              }}
            >
              Delete
            </button>
          </>
        )
      }
    >
      <ErrorMessage error={remove.error} />
      <Section title="Spec">
        <Facts
          items={[
            ['Category', r.spec.category],
            ['Description', r.spec.description],
            ['Version', r.spec.version],
            ['Automated', r.spec.automated ? 'yes' : 'no (suggested to a person)'],
            ['Approval required', r.spec.approvalRequired ? 'yes' : 'no'],
            ['Severities', r.spec.severity.map((s) => <Badge key={s} kind="severity" value={s} />)],
            ['Signal types', r.spec.targets.signalTypes.join(', ') || 'any'],
            ['Resource kinds', r.spec.targets.resourceKinds.join(', ') || 'any'],
            ['Max attempts', r.spec.maxAttempts],
            ['Verification window', r.spec.verificationWindow ?? 'default'],
            ['Executions', r.status.executions],
            ['Success rate', rate(r.status.successRate)],
            ['Average time', average(r.status.avgExecutionTime)],
          ]}
        />
      </Section>
      <Section title="Steps">
        <ol>
          {r.spec.steps.map((s, i) => (
            <li key={i}>
              <strong>{s.type}</strong> {s.description}
              <pre>{JSON.stringify(s.params, null, 2)}</pre>
            </li>
          ))}
        </ol>
      </Section>
    </Page>
  );
}
