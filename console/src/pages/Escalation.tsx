import { Page, Section, TableScroll } from '../components/Layout';
import { ErrorMessage, Loading } from '../components/Messages';
import { when } from '../format';
import { useApi } from '../queries';
import type { List } from '../types';

type Target = { channel: string; target: string };
interface Policy {
  name: string;
  source: string;
  description: string;
  priority: number;
  match: { namespaces?: string[]; severities?: string[] };
  levels: { targets: Target[]; escalateAfter: string }[];
}
interface Schedule {
  name: string;
  source: string;
  description: string;
  start: string;
  shift: string;
  people: { name: string }[];
  overrides: unknown[];
}
interface Window {
  name: string;
  namespace: string;
  from: string;
  to: string;
  reason: string;
}
interface OnCall {
  schedule: string;
  person: string;
  since: string;
  until: string;
  override: boolean;
  channels: Target[];
}

const targets = (ts: Target[]) => ts.map((t) => `${t.channel}: ${t.target}`).join(', ') || '—';

/** Escalation policies, on-call schedules, maintenance windows, and who is on call now. */
export function Escalation() {
  const oncall = useApi<{ items: OnCall[] }>('/oncall');
  const policies = useApi<List<Policy>>('/escalation-policies', { pageSize: 100 }, { live: false });
  const schedules = useApi<List<Schedule>>('/oncall-schedules', { pageSize: 100 }, { live: false });
  const windows = useApi<List<Window>>('/maintenance-windows', { pageSize: 100 }, { live: false });
  return (
    <Page title="Escalation">
      <Section title="On call now">
        <ErrorMessage error={oncall.error} />
        {oncall.isPending ? (
          <Loading what="who is on call" />
        ) : oncall.data?.items.length === 0 ? (
          <p className="muted">No on-call schedule.</p>
        ) : (
          <TableScroll label="On call now">
            <thead>
              <tr>
                <th scope="col">Schedule</th>
                <th scope="col">Person</th>
                <th scope="col">Until</th>
                <th scope="col">Reached by</th>
              </tr>
            </thead>
            <tbody>
              {oncall.data?.items.map((o) => (
                <tr key={o.schedule}>
                  <td>{o.schedule}</td>
                  <td>
                    {o.person}
                    {o.override && ' (override)'}
                  </td>
                  <td>{when(o.until)}</td>
                  <td>{targets(o.channels)}</td>
                </tr>
              ))}
            </tbody>
          </TableScroll>
        )}
      </Section>
      <Section title="Escalation policies">
        <ErrorMessage error={policies.error} />
        <TableScroll label="Escalation policies">
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Priority</th>
              <th scope="col">Matches</th>
              <th scope="col">Levels</th>
              <th scope="col">Source</th>
            </tr>
          </thead>
          <tbody>
            {policies.data?.items.map((p) => (
              <tr key={p.name}>
                <td>
                  <strong>{p.name}</strong>
                  <div className="muted wrap">{p.description}</div>
                </td>
                <td>{p.priority}</td>
                <td>
                  {[
                    p.match.namespaces?.length ? `namespaces ${p.match.namespaces.join(', ')}` : '',
                    p.match.severities?.length ? `severities ${p.match.severities.join(', ')}` : '',
                  ]
                    .filter(Boolean)
                    .join('; ') || 'everything'}
                </td>
                <td>
                  <ol>
                    {p.levels.map((l, i) => (
                      <li key={i}>
                        {targets(l.targets)} (after {l.escalateAfter})
                      </li>
                    ))}
                  </ol>
                </td>
                <td>{p.source}</td>
              </tr>
            ))}
          </tbody>
        </TableScroll>
      </Section>
      <Section title="On-call schedules">
        <ErrorMessage error={schedules.error} />
        {schedules.data?.items.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <TableScroll label="On-call schedules">
            <thead>
              <tr>
                <th scope="col">Schedule</th>
                <th scope="col">Shift</th>
                <th scope="col">People</th>
                <th scope="col">Overrides</th>
              </tr>
            </thead>
            <tbody>
              {schedules.data?.items.map((s) => (
                <tr key={s.name}>
                  <td>{s.name}</td>
                  <td>
                    {s.shift} from {when(s.start)}
                  </td>
                  <td>{s.people.map((p) => p.name).join(', ')}</td>
                  <td>{s.overrides.length}</td>
                </tr>
              ))}
            </tbody>
          </TableScroll>
        )}
      </Section>
      <Section title="Maintenance windows">
        <ErrorMessage error={windows.error} />
        {windows.data?.items.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <TableScroll label="Maintenance windows">
            <thead>
              <tr>
                <th scope="col">Window</th>
                <th scope="col">Namespace</th>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {windows.data?.items.map((w) => (
                <tr key={w.name}>
                  <td>{w.name}</td>
                  <td>{w.namespace}</td>
                  <td>{when(w.from)}</td>
                  <td>{when(w.to)}</td>
                  <td className="wrap">{w.reason}</td>
                </tr>
              ))}
            </tbody>
          </TableScroll>
        )}
      </Section>
    </Page>
  );
}
