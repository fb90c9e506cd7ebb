import { useCallback, useEffect, useState } from 'react';
import { DeterminationDetail, DeterminationsList } from './Determinations';
import { Overview } from './Overview';
import { AcceptInvitation } from './pages/AcceptInvitation';
import { ApiKey } from './pages/ApiKey';
import { Users } from './pages/Users';
import { DeliveryDetail, Webhooks } from './pages/Webhooks';
import { SignIn } from './SignIn';
import { api, onSessionChange, refresh, signOut } from './session';
import { t } from './strings';

export interface Me {
  user: { id: string; name: string; email: string } | null;
  role: string;
  capabilities: string[];
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

  useEffect(
    () =>
      onSessionChange((signedIn) => {
        if (!signedIn) {
          setMe(null);
          setState((previous) => {
            if (previous === 'signedIn') setNotice(t('sessionEnded'));
            return 'signedOut';
          });
        }
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
  const detail = /^\/determinations\/([0-9a-f-]+)$/.exec(route);
  let page = <Overview can={can} />;
  if (route === '/determinations' && can('determination:read')) page = <DeterminationsList />;
  else if (detail?.[1] && can('determination:read')) page = <DeterminationDetail id={detail[1]} />;
  const delivery = /^\/webhooks\/deliveries\/([0-9a-f-]+)$/.exec(route);
  if (route === '/users' && can('user:manage')) page = <Users me={me} onSelfChanged={loadMe} />;
  else if (route === '/webhooks' && can('webhook:manage')) page = <Webhooks />;
  else if (delivery?.[1] && can('webhook:manage')) page = <DeliveryDetail id={delivery[1]} />;
  else if (route === '/api-key' && can('api-key:manage')) page = <ApiKey />;

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
          {can('determination:read') && (
            <a
              href="#/determinations"
              aria-current={route.startsWith('/determinations') ? 'page' : undefined}
            >
              {t('navDeterminations')}
            </a>
          )}
          {can('webhook:manage') && (
            <a href="#/webhooks" aria-current={route.startsWith('/webhooks') ? 'page' : undefined}>
              {t('navWebhooks')}
            </a>
          )}
          {can('user:manage') && (
            <a href="#/users" aria-current={route === '/users' ? 'page' : undefined}>
              {t('navUsers')}
            </a>
          )}
          {can('api-key:manage') && (
            <a href="#/api-key" aria-current={route === '/api-key' ? 'page' : undefined}>
              {t('navApiKey')}
            </a>
          )}
        </nav>
        <span className="who" data-role={me.role}>
          {t('signedInAs', { name: me.user?.name ?? me.user?.email ?? '', role: me.role })}
        </span>
        <button
          type="button"
          className="secondary"
          onClick={async () => {
            await signOut();
            setNotice(t('signedOut'));
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
