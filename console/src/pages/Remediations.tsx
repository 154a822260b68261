import { Badge } from '../components/Badge';
import { Filters } from '../components/Filters';
import { SelectField, TextField } from '../components/Fields';
import { Page, PagedTable, Section } from '../components/Layout';
import { ErrorMessage, Loading } from '../components/Messages';
import { PlanSteps } from '../components/PlanSteps';
import { when } from '../format';
import { useApi } from '../queries';
import { href, replaceQuery, type Route } from '../router';
import type { List, Plan } from '../types';
import { PLAN_STATES } from '../vocabulary';

const FILTERS = ['state', 'namespace', 'incident'] as const;

export function Remediations({ route }: { route: Route }) {
  const filter = Object.fromEntries(FILTERS.map((k) => [k, route.query.get(k) ?? '']));
  const page = Number(route.query.get('page') ?? '1') || 1;
  const list = useApi<List<Plan>>('/remediations', { ...filter, page, pageSize: 50 });
  return (
    <Page title="Remediations">
      <Filters parts={['remediations']} initial={filter}>
        {(v, set) => (
          <>
            <SelectField
              label="State"
              name="state"
              value={v.state}
              onChange={(x) => set('state', x)}
              options={PLAN_STATES}
              any="any"
            />
            <TextField label="Namespace" name="namespace" value={v.namespace} onChange={(x) => set('namespace', x)} />
            <TextField label="Incident" name="incident" value={v.incident} onChange={(x) => set('incident', x)} />
          </>
        )}
      </Filters>
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading what="plans" />
      ) : (
        list.data && (
          <PagedTable
            label="Remediation plans"
            headers={['Plan', 'State', 'Incident', 'Strategy', 'Steps done', 'Risk', 'Started']}
            list={list.data}
            empty="No plan matches."
            onPage={(p) => replaceQuery(['remediations'], { ...filter, page: String(p) })}
            row={(p) => (
              <tr key={p.name}>
                <td>
                  <a href={href('remediations', p.name)}>{p.name}</a>
                </td>
                <td>
                  <Badge value={p.state} />
                </td>
                <td>
                  <a href={href('incidents', p.issueRef)}>{p.issueRef}</a>
                </td>
                <td className="wrap">{p.strategy}</td>
                <td>
                  {p.actions.filter((a) => a.outcome).length}/{p.actions.length}
                </td>
                <td>{p.riskScore}</td>
                <td>{when(p.startedAt ?? p.creationTimestamp)}</td>
              </tr>
            )}
          />
        )
      )}
    </Page>
  );
}

interface PlanDetail {
  metadata: { name: string; namespace: string; creationTimestamp: string };
  spec: Omit<
    Plan,
    'name' | 'namespace' | 'state' | 'startedAt' | 'completedAt' | 'result' | 'approval' | 'creationTimestamp'
  >;
  status: { state: string; startedAt?: string; completedAt?: string; result: string; approval: string };
}

export function RemediationDetail({ name }: { name: string }) {
  const plan = useApi<PlanDetail>(`/remediations/${encodeURIComponent(name)}`);
  if (plan.isPending) return <Loading what={name} />;
  const p = plan.data;
  if (!p) return <Page title={name}>{<ErrorMessage error={plan.error} />}</Page>;
  const flat: Plan = {
    ...p.spec,
    ...p.status,
    name: p.metadata.name,
    namespace: p.metadata.namespace,
    creationTimestamp: p.metadata.creationTimestamp,
  };
  return (
    <Page title={`Remediation ${p.metadata.name}`}>
      <p>
        For incident <a href={href('incidents', p.spec.issueRef)}>{p.spec.issueRef}</a>
      </p>
      <Section title="Plan">
        <PlanSteps plan={flat} />
      </Section>
    </Page>
  );
}
