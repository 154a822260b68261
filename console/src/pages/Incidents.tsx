import { Badge } from '../components/Badge';
import { Filters, toIso, toLocal } from '../components/Filters';
import { SelectField, TextField } from '../components/Fields';
import { Page, PagedTable } from '../components/Layout';
import { ErrorMessage, Loading } from '../components/Messages';
import { ago } from '../format';
import { useApi } from '../queries';
import { href, replaceQuery, type Route } from '../router';
import type { IncidentItem, List } from '../types';
import { INCIDENT_STATES, SEVERITIES } from '../vocabulary';

const FILTERS = ['severity', 'state', 'namespace', 'resource', 'since'] as const;

/** Incidents, newest first, refreshed every few seconds with the API's filters. */
export function Incidents({ route }: { route: Route }) {
  const filter = Object.fromEntries(FILTERS.map((k) => [k, route.query.get(k) ?? '']));
  const page = Number(route.query.get('page') ?? '1') || 1;
  const list = useApi<List<IncidentItem>>('/incidents', { ...filter, page, pageSize: 50 });
  return (
    <Page title="Incidents">
      <Filters
        parts={['incidents']}
        initial={{ ...filter, since: toLocal(filter.since) }}
        encode={(v) => ({ ...v, since: toIso(v.since) })}
      >
        {(v, set) => (
          <>
            <SelectField
              label="Severity"
              name="severity"
              value={v.severity}
              onChange={(x) => set('severity', x)}
              options={SEVERITIES}
              any="any"
            />
            <SelectField
              label="State"
              name="state"
              value={v.state}
              onChange={(x) => set('state', x)}
              options={INCIDENT_STATES}
              any="any"
            />
            <TextField label="Namespace" name="namespace" value={v.namespace} onChange={(x) => set('namespace', x)} />
            <TextField
              label="Resource"
              name="resource"
              value={v.resource}
              onChange={(x) => set('resource', x)}
              placeholder="Deployment/checkout"
            />
            <TextField
              label="Detected since"
              name="since"
              type="datetime-local"
              value={v.since}
              onChange={(x) => set('since', x)}
            />
          </>
        )}
      </Filters>
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading what="incidents" />
      ) : (
        list.data && (
          <PagedTable
            label="Incidents"
            caption="Incidents, newest first"
            headers={['Incident', 'Severity', 'State', 'Resource', 'Namespace', 'Age', 'Risk', 'Description']}
            list={list.data}
            empty="No incidents match."
            onPage={(p) => replaceQuery(['incidents'], { ...filter, page: String(p) })}
            row={(i) => (
              <tr key={i.name}>
                <td>
                  <a href={href('incidents', i.name)}>{i.name}</a>
                </td>
                <td>
                  <Badge kind="severity" value={i.severity} />
                </td>
                <td>
                  <Badge value={i.state} />
                </td>
                <td>{i.resource}</td>
                <td>{i.namespace}</td>
                <td>
                  <time dateTime={i.detectedAt} title={i.detectedAt}>
                    {ago(i.detectedAt)}
                  </time>
                </td>
                <td>{i.riskScore}</td>
                <td className="wrap">{i.description}</td>
              </tr>
            )}
          />
        )
      )}
    </Page>
  );
}
