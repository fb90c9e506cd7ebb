import { type ReactElement, useCallback, useEffect, useRef, useState } from 'react';
import { AcceptInvitation } from './pages/AcceptInvitation';
import { ApiKey } from './pages/ApiKey';
import { DeterminationDetail, DeterminationsList } from './pages/Determinations';
import { FarmerDetail, FarmersList } from './pages/Farmers';
import { Overview } from './pages/Overview';
import { PayoutDetail, PayoutsList } from './pages/Payouts';
import { PoliciesList, PolicyDetail } from './pages/Policies';
import { SignIn } from './pages/SignIn';
import { Users } from './pages/Users';
import { DeliveryDetail, Webhooks } from './pages/Webhooks';
import { api, onSessionChange, refresh, signOut } from './session';
import { t } from './strings';

export interface Me {
  user: { id: string; name: string; email: string } | null;
  role: string;
  capabilities: string[];
}

const SECTIONS = [
  { path: '/policies', label: 'navPolicies', capability: 'policy:read' },
  { path: '/farmers', label: 'navFarmers', capability: 'farmer:read' },
  { path: '/determinations', label: 'navDeterminations', capability: 'determination:read' },
  { path: '/payouts', label: 'navPayouts', capability: 'payout:read' },
  { path: '/webhooks', label: 'navWebhooks', capability: 'webhook:manage' },
  { path: '/users', label: 'navUsers', capability: 'user:manage' },
  { path: '/api-key', label: 'navApiKey', capability: 'api-key:manage' },
] as const;

const ID = '([0-9a-f-]+)';

/** The page of a route the role may read; the overview for any other (a page not offered is not shown by its URL either). */
function pageOf(
  route: string,
  can: (capability: string) => boolean,
  self: { me: Me; onSelfChanged: () => Promise<void> },
): ReactElement {
  const [path = '/', search = ''] = route.split('?');
  const id = (prefix: string) => new RegExp(`^/${prefix}/${ID}$`).exec(path)?.[1];
  if (can('determination:read')) {
    if (path === '/determinations') return <DeterminationsList />;
    const found = id('determinations');
    if (found) return <DeterminationDetail key={found} id={found} can={can} />;
  }
  if (can('policy:read')) {
    if (path === '/policies') {
      const farmerId = new URLSearchParams(search).get('farmerId') ?? '';
      return <PoliciesList key={farmerId} farmerId={farmerId} />;
    }
    const found = id('policies');
    if (found) return <PolicyDetail key={found} id={found} />;
  }
  if (can('farmer:read')) {
    if (path === '/farmers') return <FarmersList />;
    const found = id('farmers');
    if (found) return <FarmerDetail key={found} id={found} can={can} />;
  }
  if (can('payout:read')) {
    if (path === '/payouts') return <PayoutsList />;
    const found = id('payouts');
    if (found) return <PayoutDetail key={found} id={found} can={can} />;
  }
  if (can('webhook:manage')) {
    if (path === '/webhooks') return <Webhooks />;
    const found = id('webhooks/deliveries');
    if (found) return <DeliveryDetail key={found} id={found} />;
  }
  if (can('user:manage') && path === '/users') return <Users {...self} />;
  if (can('api-key:manage') && path === '/api-key') return <ApiKey />;
  return <Overview can={can} />;
}

/** Routes live in the URL's fragment (`#/determinations/…`): the gateway serves one index.html. */
function useRoute(): string {
  const [route, setRoute] = useState(() => location.hash.slice(1) || '/');
  useEffect(() => {
    const changed = () => setRoute(location.hash.slice(1) || '/');
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [state, setState] = useState<'starting' | 'signedOut' | 'signedIn'>('starting');
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();

  const loadMe = useCallback(async () => {
    const session = await api<{ data: Me }>('/auth/session');
    setMe(session.data);
    setState('signedIn');
  }, []);

  // Whether the session that ends was signed in, and whether the user asked for it to end: the
  // notice says "signed out" or "session ended" (a state updater must not set other state).
  const signedIn = useRef(false);
  signedIn.current = state === 'signedIn';
  const leaving = useRef(false);
  useEffect(
    () =>
      onSessionChange((live) => {
        if (live) return;
        if (signedIn.current) setNotice(t(leaving.current ? 'signedOut' : 'sessionEnded'));
        leaving.current = false;
        setMe(null);
        setState('signedOut');
      }),
    [],
  );

  // A reload keeps the session: the cookie is still there, the access token is spent anew.
  useEffect(() => {
    void (async () => {
      if (await refresh()) await loadMe().catch(() => setState('signedOut'));
      else setState('signedOut');
    })();
  }, [loadMe]);

  // An invitation link opens its page whoever is signed in, or nobody: accepting signs in anew.
  const invitation = /^\/accept-invitation\/([^/]+)$/.exec(route);
  if (invitation?.[1])
    return (
      <AcceptInvitation
        token={decodeURIComponent(invitation[1])}
        onAccepted={async () => {
          setNotice(null);
          await loadMe();
        }}
      />
    );
  if (state === 'starting') return <p className="loading">{t('loading')}</p>;
  if (state === 'signedOut' || !me)
    return (
      <SignIn
        notice={notice}
        onSignedIn={async () => {
          setNotice(null);
          await loadMe();
        }}
      />
    );

  const can = (capability: string) => me.capabilities.includes(capability);
  const page = pageOf(route, can, { me, onSelfChanged: loadMe });
  /** The main sections a role may read, in the order the navigation shows them. */
  const sections = SECTIONS.filter((section) => can(section.capability));

  return (
    <>
      <a className="skip" href="#main">
        {t('skipToContent')}
      </a>
      <header className="top">
        <span className="brand">{t('appName')}</span>
        <nav aria-label={t('navMain')}>
          <a href="#/" aria-current={route === '/' ? 'page' : undefined}>
            {t('navOverview')}
          </a>
          {sections.map((section) => (
            <a
              key={section.path}
              href={`#${section.path}`}
              aria-current={route.startsWith(section.path) ? 'page' : undefined}
            >
              {t(section.label)}
            </a>
          ))}
        </nav>
        <span className="who" data-role={me.role}>
          {t('signedInAs', { name: me.user?.name ?? me.user?.email ?? '', role: me.role })}
        </span>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            leaving.current = true;
            void signOut();
          }}
        >
          {t('signOut')}
        </button>
      </header>
      {/* A page is new at each visit: it reads the API afresh (and a lapsed session shows at once). */}
      <main id="main" key={route}>
        {page}
      </main>
    </>
  );
}
