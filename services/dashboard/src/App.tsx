import { useCallback, useEffect, useState } from 'react';
import { DeterminationDetail, DeterminationsList } from './pages/Determinations';
import { Overview } from './pages/Overview';
import { SignIn } from './pages/SignIn';
import { api, onSessionChange, refresh, signOut } from './session';
import { t } from './strings';

export interface Me {
  user: { name: string; email: string } | null;
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
      <main id="main">{page}</main>
    </>
  );
}
