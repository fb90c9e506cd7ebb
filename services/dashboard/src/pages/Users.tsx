import { type FormEvent, useState } from 'react';
import type { components } from '../../../../libs/sdk/src/schema';
import type { Me } from '../App';
import { ConfirmButton } from '../components/Confirm';
import { type Column, DataTable } from '../components/DataTable';
import { EnumFilter, Filters, type FilterValues, filterQuery } from '../components/Filters';
import { Outcome } from '../components/Outcome';
import { formatDate } from '../format';
import { ApiError, api } from '../session';
import { t } from '../strings';
import { useAction } from '../useApi';

export const ROLES: readonly User['role'][] = ['ORG_ADMIN', 'ORG_OPERATOR', 'ORG_FINANCE', 'ORG_VIEWER'];
const STATUSES: readonly User['status'][] = ['INVITED', 'ACTIVE', 'DEACTIVATED'];

type User = components['schemas']['User'];
type Invitation = components['schemas']['Invitation'];

/** The dashboard's own address with the acceptance page and the token in its fragment. */
function invitationLink(token: string): string {
  return `${location.origin}${location.pathname}#/accept-invitation/${encodeURIComponent(token)}`;
}

/** The link to pass on, shown once: the API keeps only a hash of the token. */
function InvitationLink({ invitation }: { invitation: Invitation }) {
  const [copied, setCopied] = useState(false);
  const link = invitationLink(invitation.invitationToken);
  return (
    <div className="once" data-testid="invitation-link">
      <p>
        {t('invitationCreated', {
          email: invitation.user.email,
          date: formatDate(invitation.invitationExpiresAt),
        })}
      </p>
      <label htmlFor="invitation-link">{t('invitationLink')}</label>
      <input id="invitation-link" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
      <button
        type="button"
        className="secondary"
        onClick={async () => {
          await navigator.clipboard.writeText(link);
          setCopied(true);
        }}
      >
        {copied ? t('copied') : t('copyLink')}
      </button>
    </div>
  );
}

/** `409` on a role change or a deactivation is the API's last-admin rule. */
const lastAdmin = (user: User) => (error: unknown) =>
  error instanceof ApiError && error.status === 409 ? t('lastAdmin', { name: user.name }) : undefined;

function UserActions({
  user,
  onChanged,
  onInvited,
}: {
  user: User;
  onChanged: (message: string, user: User) => void;
  onInvited: (invitation: Invitation) => void;
}) {
  const action = useAction();
  const change = (body: { role?: string; active?: boolean }, done: string) =>
    action.run(async () => {
      const changed = await api<{ data: User }>(`/organizations/me/users/${user.id}`, 'PATCH', body);
      onChanged(done, changed.data);
      return null;
    }, lastAdmin(user));

  function saveRole(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const role = String(new FormData(event.currentTarget).get('role'));
    if (role !== user.role) void change({ role }, t('roleChanged', { name: user.name, role }));
  }

  return (
    <div className="row-actions">
      {user.status !== 'DEACTIVATED' && (
        <form onSubmit={saveRole}>
          <select name="role" defaultValue={user.role} aria-label={t('roleOf', { name: user.name })}>
            {ROLES.map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
          <button type="submit" className="secondary" disabled={action.busy}>
            {t('changeRole')}
          </button>
        </form>
      )}
      {user.status === 'INVITED' && (
        <button
          type="button"
          className="secondary"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              const issued = await api<{ data: Invitation }>(
                `/organizations/me/users/${user.id}/invitation`,
                'POST',
              );
              onInvited(issued.data);
              return null;
            })
          }
        >
          {t('newInvitation')}
        </button>
      )}
      {user.status === 'DEACTIVATED' ? (
        <button
          type="button"
          className="secondary"
          disabled={action.busy}
          onClick={() => change({ active: true }, t('userRestored', { name: user.name }))}
        >
          {t('restore')}
        </button>
      ) : (
        <ConfirmButton
          label={t('deactivate')}
          title={t('deactivateTitle', { name: user.name })}
          confirmLabel={t('deactivate')}
          disabled={action.busy}
          onConfirm={() =>
            void action.run(async () => {
              const gone = await api<{ data: User }>(`/organizations/me/users/${user.id}`, 'DELETE');
              onChanged(t('userDeactivated', { name: user.name }), gone.data);
              return null;
            }, lastAdmin(user))
          }
        >
          <p>{t('deactivateWarning')}</p>
        </ConfirmButton>
      )}
      <Outcome action={action} />
    </div>
  );
}

function InviteForm({ onInvited }: { onInvited: (invitation: Invitation) => void }) {
  const action = useAction();
  async function invite(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const fields = new FormData(form);
    const invited = await action.run(
      async () => {
        const created = await api<{ data: Invitation }>('/organizations/me/users', 'POST', {
          email: String(fields.get('email') ?? ''),
          name: String(fields.get('name') ?? ''),
          role: String(fields.get('role') ?? ''),
        });
        onInvited(created.data);
        return null;
      },
      (error) => (error instanceof ApiError && error.status === 409 ? t('emailTaken') : undefined),
    );
    if (invited) form.reset();
  }
  return (
    <form className="stacked" onSubmit={invite} aria-labelledby="invite-heading">
      <h2 id="invite-heading">{t('inviteTitle')}</h2>
      <label htmlFor="invite-email">{t('email')}</label>
      <input id="invite-email" name="email" type="email" autoComplete="off" required />
      <label htmlFor="invite-name">{t('name')}</label>
      <input id="invite-name" name="name" autoComplete="off" maxLength={200} required />
      <label htmlFor="invite-role">{t('role')}</label>
      <select id="invite-role" name="role" defaultValue="ORG_VIEWER">
        {ROLES.map((role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
      <Outcome action={action} />
      <button type="submit" disabled={action.busy}>
        {t('invite')}
      </button>
    </form>
  );
}

export function Users({ me, onSelfChanged }: { me: Me; onSelfChanged: () => Promise<void> }) {
  const [filters, setFilters] = useState<FilterValues>({ status: '', role: '' });
  const [version, setVersion] = useState(0);
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const invited = (created: Invitation) => {
    setInvitation(created);
    setNotice(null);
    setVersion((v) => v + 1);
  };
  const changed = (message: string, user: User) => {
    setNotice(message);
    setInvitation(null);
    setVersion((v) => v + 1);
    // A change to oneself (a demotion) changes what this page may do: ask the API again.
    if (user.id === me.user?.id) void onSelfChanged();
  };
  const columns: readonly Column<User>[] = [
    { header: t('name'), cell: (u) => u.name, csv: (u) => u.name },
    { header: t('email'), cell: (u) => u.email, csv: (u) => u.email },
    { header: t('role'), cell: (u) => u.role, csv: (u) => u.role },
    { header: t('status'), cell: (u) => u.status, csv: (u) => u.status },
    { header: t('lastSignIn'), cell: (u) => formatDate(u.lastLoginAt), csv: (u) => u.lastLoginAt ?? '' },
    {
      header: t('actions'),
      cell: (u) => (
        <UserActions key={`${u.role}.${u.status}`} user={u} onChanged={changed} onInvited={invited} />
      ),
    },
  ];

  return (
    <>
      <h1>{t('usersTitle')}</h1>
      <InviteForm onInvited={invited} />
      {invitation && <InvitationLink invitation={invitation} />}
      <h2>{t('usersList')}</h2>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <DataTable
        path={`/organizations/me/users?${filterQuery(filters)}`}
        columns={columns}
        rowKey={(u) => u.id}
        caption={t('usersList')}
        csvName="users"
        empty={t('noUsers')}
        version={version}
        filters={
          <Filters onApply={setFilters}>
            <EnumFilter name="status" label={t('status')} values={STATUSES} value={filters.status ?? ''} />
            <EnumFilter name="role" label={t('role')} values={ROLES} value={filters.role ?? ''} />
          </Filters>
        }
      />
    </>
  );
}
