import { useState } from 'react';
import { download } from '../http';
import { Filters, toIso, toLocal } from '../components/Filters';
import { SelectField, TextField } from '../components/Fields';
import { Page, PagedTable, Section } from '../components/Layout';
import { ErrorMessage, Loading, StatusMessage } from '../components/Messages';
import { when } from '../format';
import { useApi } from '../queries';
import { replaceQuery, type Route } from '../router';
import { useIdentity } from '../session';
import type { AuditRecord, List } from '../types';
import { atLeast, AUDIT_ACTIONS } from '../vocabulary';

const FILTERS = ['action', 'user', 'resource', 'from', 'to'] as const;

interface Verification {
  status: {
    intact: boolean;
    totalRecords: number;
    verifiedRecords: number;
    brokenRecords: number;
    missingRecords: number;
  };
}

/** The audit trail (operators and admins); admins also export it and verify its chain. */
export function Audit({ route }: { route: Route }) {
  const { role } = useIdentity();
  const filter = Object.fromEntries(FILTERS.map((k) => [k, route.query.get(k) ?? '']));
  const page = Number(route.query.get('page') ?? '1') || 1;
  const list = useApi<List<AuditRecord>>('/audit', { ...filter, page, pageSize: 50 });
  const admin = atLeast(role, 'admin');
  return (
    <Page title="Audit">
      <Filters
        parts={['audit']}
        initial={{ ...filter, from: toLocal(filter.from), to: toLocal(filter.to) }}
        encode={(v) => ({ ...v, from: toIso(v.from), to: toIso(v.to) })}
      >
        {(v, set) => (
          <>
            <SelectField
              label="Action"
              name="action"
              value={v.action}
              onChange={(x) => set('action', x)}
              options={AUDIT_ACTIONS}
              any="any"
            />
            <TextField label="User" name="user" value={v.user} onChange={(x) => set('user', x)} />
            <TextField label="Resource" name="resource" value={v.resource} onChange={(x) => set('resource', x)} />
            <TextField label="From" name="from" type="datetime-local" value={v.from} onChange={(x) => set('from', x)} />
            <TextField label="To" name="to" type="datetime-local" value={v.to} onChange={(x) => set('to', x)} />
          </>
        )}
      </Filters>
      {admin && <AdminTools filter={filter} />}
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading what="audit records" />
      ) : (
        list.data && (
          <PagedTable
            label="Audit records"
            headers={['When', 'Action', 'User', 'Role', 'Resource', 'Namespace', 'Source IP']}
            list={list.data}
            empty="No audit record matches."
            onPage={(p) => replaceQuery(['audit'], { ...filter, page: String(p) })}
            row={(a) => (
              <tr key={a.id}>
                <td>{when(a.timestamp)}</td>
                <td>{a.action}</td>
                <td>{a.user}</td>
                <td>{a.role}</td>
                <td>
                  {a.resourceType} {a.resource}
                </td>
                <td>{a.namespace || '—'}</td>
                <td>{a.sourceIP}</td>
              </tr>
            )}
          />
        )
      )}
    </Page>
  );
}

function AdminTools({ filter }: { filter: Record<string, string> }) {
  const verify = useApi<Verification>('/audit/verify', {}, { live: false });
  const [done, setDone] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const exportAs = async (format: 'csv' | 'json') => {
    setBusy(true);
    setDone('');
    setError(null);
    try {
      const query = {
        format,
        start: filter.from || undefined,
        end: filter.to || undefined,
        action: filter.action || undefined,
        user: filter.user || undefined,
      };
      const name = await download('/audit/export', query, `audit-export.${format}`);
      setDone(`Downloaded ${name}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const v = verify.data?.status;
  return (
    <Section title="Export and integrity">
      <div className="buttons">
        <button type="button" onClick={() => void exportAs('csv')} disabled={busy}>
          Export CSV
        </button>
        <button type="button" onClick={() => void exportAs('json')} disabled={busy}>
          Export JSON
        </button>
        <button type="button" onClick={() => void verify.refetch()} disabled={verify.isFetching}>
          Verify chain
        </button>
      </div>
      <ErrorMessage error={error ?? verify.error} />
      <StatusMessage text={done} />
      {verify.isPending ? (
        <Loading what="the chain verification" />
      ) : (
        v && (
          <p className={v.intact ? 'message message-ok' : 'message message-error'} data-testid="chain-status">
            Chain {v.intact ? 'intact' : 'BROKEN'}: {v.verifiedRecords} of {v.totalRecords} records verified
            {v.brokenRecords ? `, ${v.brokenRecords} broken` : ''}
            {v.missingRecords ? `, ${v.missingRecords} missing` : ''}.
          </p>
        )
      )}
    </Section>
  );
}
