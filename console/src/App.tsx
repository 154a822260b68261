import { lazy, Suspense, useEffect, useRef, type ReactNode } from 'react';
import { href, useRoute, type Route } from './router';
import { useIdentity, useSession } from './session';
import { atLeast } from './vocabulary';
import { ApprovalDetail, Approvals } from './pages/Approvals';
import { Audit } from './pages/Audit';
import { ClusterDetail, Clusters } from './pages/Clusters';
import { Escalation } from './pages/Escalation';
import { IncidentDetail } from './pages/IncidentDetail';
import { Incidents } from './pages/Incidents';
import { PostmortemDetail, Postmortems } from './pages/Postmortems';
import { RemediationDetail, Remediations } from './pages/Remediations';
import { RunbookForm } from './pages/RunbookForm';
import { RunbookDetail, Runbooks } from './pages/Runbooks';
import { SignIn } from './pages/SignIn';
import { Page } from './components/Layout';
import { Loading } from './components/Messages';

/** Chart.js is only needed here: its own chunk, loaded on the first visit. */
const Analytics = lazy(() => import('./pages/Analytics').then((m) => ({ default: m.Analytics })));

const NAV = [
  ['incidents', 'Incidents'],
  ['approvals', 'Approvals'],
  ['remediations', 'Remediations'],
  ['runbooks', 'Runbooks'],
  ['postmortems', 'Postmortems'],
  ['audit', 'Audit'],
  ['analytics', 'Analytics'],
  ['clusters', 'Clusters'],
  ['escalation', 'Escalation'],
] as const;

export function App() {
  const { session } = useSession();
  return session ? <Console /> : <SignIn />;
}

function Console() {
  const { signOut } = useSession();
  const { user, role } = useIdentity();
  const route = useRoute();
  const section = route.parts[0] ?? 'incidents';
  const path = route.parts.join('/');
  const main = useRef<HTMLElement>(null);

  // A new page: move focus to its heading so screen readers and keyboards start there.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [path]);

  return (
    <>
      <a className="skip-link" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header className="topbar">
        <a className="brand" href={href('incidents')}>
          Foghorn
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.filter(([id]) => id !== 'audit' || atLeast(role, 'operator')).map(([id, label]) => (
              <li key={id}>
                <a href={href(id)} aria-current={section === id ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span>
            {user} <span className="role">({role})</span>
          </span>
          <button type="button" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {page(route, role)}
      </main>
    </>
  );
}

function page(route: Route, role: 'viewer' | 'operator' | 'admin'): ReactNode {
  const [section = 'incidents', name, sub] = route.parts;
  switch (section) {
    case 'incidents':
      return name ? <IncidentDetail key={name} name={name} /> : <Incidents route={route} />;
    case 'approvals':
      return name ? <ApprovalDetail key={name} name={name} /> : <Approvals />;
    case 'remediations':
      return name ? <RemediationDetail key={name} name={name} /> : <Remediations route={route} />;
    case 'runbooks':
      if (name === '-new') return <RunbookForm />;
      if (name && sub === 'edit') return <RunbookForm key={name} name={name} />;
      return name ? <RunbookDetail key={name} name={name} /> : <Runbooks />;
    case 'postmortems':
      return name ? <PostmortemDetail key={name} name={name} /> : <Postmortems route={route} />;
    case 'audit':
      return atLeast(role, 'operator') ? <Audit route={route} /> : <NotFound />;
    case 'analytics':
      return (
        <Suspense fallback={<Loading what="analytics" />}>
          <Analytics />
        </Suspense>
      );
    case 'clusters':
      return name ? <ClusterDetail key={name} name={name} /> : <Clusters />;
    case 'escalation':
      return <Escalation />;
    default:
      return <NotFound />;
  }
}

function NotFound() {
  return (
    <Page title="Not found">
      <p>
        No such page. <a href={href('incidents')}>Go to the incidents</a>.
      </p>
    </Page>
  );
}
