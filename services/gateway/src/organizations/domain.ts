import { randomUUID } from 'node:crypto';
import { createEvent, outboxInsert } from '@parametric/events';
import { AppError } from '@parametric/http';
import type { Clock } from '../clock';
import { issueCredentials } from '../credentials/secrets';
import type { GatewayDataAcross, GatewayRepositories, TenantGatewayData } from '../repositories';
import { joinAdmins } from '../users/admin-roster';
import type { Users } from '../users/domain';
import type { UserDoc } from '../users/model';
import { userView } from '../users/view';
import type { OrganizationDoc } from './model';
import { organizationView, settingsView } from './view';

export interface RegistrationInput {
  name: string;
  type: OrganizationDoc['type'];
  countryCode: OrganizationDoc['countryCode'];
  contactEmail?: string;
  contactPhone?: string;
  adminEmail?: string;
  adminPassword?: string;
  /** Absent: live. */
  environment?: OrganizationDoc['environment'];
}

export interface OrganizationDeps {
  /** Registration creates a tenant, hence works across organizations. */
  repositories: Pick<GatewayRepositories, 'acrossOrganizations' | 'forOrganization'>;
  /** The new credential is stored only as HMACs under it (credentials/secrets.ts). */
  pepper: string;
  /** Registration's first dashboard user is made by the users module. */
  users: Pick<Users, 'createFirstAdmin'>;
  clock: Clock;
  /** Whether sandbox organizations may be registered (config.ts `sandboxEnabled`). */
  sandboxEnabled: boolean;
}

/** Organizations, bound once per process; each call names the organization or registers one. */
export function createOrganizations(deps: OrganizationDeps) {
  const across = deps.repositories.acrossOrganizations();
  return {
    register: (input: RegistrationInput) => registerOrganization(deps, across, input),
    read: readOrganization,
    updateSettings,
  };
}

export type Organizations = ReturnType<typeof createOrganizations>;

/**
 * How old a dashboard user must be, with no organization behind it, to count as left over from a
 * registration that died half-way (a registration takes well under a second).
 */
const ORPHAN_AGE_MS = 60_000;

/**
 * A new organization (a new tenant, hence across organizations) and its first credential,
 * and with `adminEmail` its first dashboard user. The organization is written last, so a
 * process killed half-way leaves no organization without its key or admin: only parts nobody
 * can reach (a key and a user of an organization that does not exist). The user is written
 * first, so an email already taken stops the registration before anything else; a user left
 * by a registration that died half-way is reclaimed when its email registers again. The
 * plaintext key and secret are returned here and never stored.
 */
async function registerOrganization(
  deps: OrganizationDeps,
  across: GatewayDataAcross,
  input: RegistrationInput,
) {
  const environment = input.environment ?? 'live';
  const sandbox = environment === 'sandbox';
  if (sandbox && !deps.sandboxEnabled) {
    throw AppError.invalid('Sandbox organizations cannot be registered here', [
      { field: 'environment', message: 'sandbox is switched off on this platform; use "live"' },
    ]);
  }
  const organizationId = randomUUID();
  const tenant = deps.repositories.forOrganization(organizationId);
  let admin: UserDoc | undefined;
  if (input.adminEmail !== undefined && input.adminPassword !== undefined) {
    const first = { email: input.adminEmail, password: input.adminPassword, name: input.name };
    try {
      admin = await deps.users.createFirstAdmin(tenant, first);
    } catch (err) {
      if (
        !(
          err instanceof AppError &&
          err.code === 'CONFLICT' &&
          (await reclaimOrphan(deps, across, first.email))
        )
      )
        throw err;
      admin = await deps.users.createFirstAdmin(tenant, first);
    }
  }
  const credentials = issueCredentials(deps.pepper, 'reg', environment);
  let organization: OrganizationDoc;
  try {
    await across.apiKeys.create({ _id: organizationId, ...credentials.record });
    if (admin) await joinAdmins(tenant, admin._id);
    const created = await across.organizations.create({
      _id: organizationId,
      name: input.name,
      type: input.type,
      countryCode: input.countryCode,
      contactEmail: input.contactEmail ?? null,
      contactPhone: input.contactPhone ?? null,
      environment,
      ...(sandbox ? sandboxKyb(organizationId, deps.clock()) : {}),
    });
    organization = created.toObject() as OrganizationDoc;
  } catch (err) {
    // An organization nobody can authenticate as is worse than none.
    await Promise.all([
      across.organizations.deleteOne({ _id: organizationId }),
      across.apiKeys.deleteOne({ _id: organizationId }),
      across.users.deleteOne({ organizationId }),
    ]);
    throw err;
  }
  return {
    organization: {
      ...organizationView(organization),
      // A new organization has no webhook yet.
      webhookUrl: null,
      apiKey: credentials.apiKey,
      apiSecret: credentials.apiSecret,
    },
    ...(admin ? { adminUser: userView(admin) } : {}),
  };
}

/**
 * A sandbox organization is KYB-verified at registration, with the `kyb.verified` event an ops
 * decision records (ops/domain.ts), in the same write as the organization: the outbox relays
 * it to its webhook, if one is set by then, like any other.
 */
function sandboxKyb(organizationId: string, now: Date) {
  const event = createEvent('kyb.verified', organizationId, { organizationId, kybStatus: 'VERIFIED' });
  return {
    kybStatus: 'VERIFIED' as const,
    kybNotes: 'Sandbox organization: verified at registration',
    kybUpdatedAt: now,
    ...outboxInsert(event),
  };
}

type OrganizationRead = ReturnType<typeof organizationView> & { webhookUrl: string | null };

/**
 * The last view made of each organization document, with the URL it was made with. A cached
 * caller (services/gateway/src/auth/principal.ts) carries the same document on every request
 * until the organization's stamp changes, and a change reads a new document from MongoDB, so
 * the view goes with the document it was made from and is made once per document and URL, not
 * on every `GET /organizations/me`. Documents are read-only once read (`lean`), and the view
 * is only serialized.
 */
const reads = new WeakMap<OrganizationDoc, OrganizationRead>();

/** The organization with its webhook URL, which the webhooks service owns. */
async function readOrganization(
  organization: OrganizationDoc,
  webhookUrlOf: (organizationId: string) => Promise<string | null>,
): Promise<OrganizationRead> {
  const webhookUrl = await webhookUrlOf(organization._id);
  const made = reads.get(organization);
  if (made !== undefined && made.webhookUrl === webhookUrl) return made;
  const read = { ...organizationView(organization), webhookUrl };
  reads.set(organization, read);
  return read;
}

/** Sets the writable settings given (`null` clears one); other keys never reach here. */
async function updateSettings(
  tenant: TenantGatewayData,
  settings: { brandColor?: string | null; contactPhone?: string | null },
) {
  const changes: Partial<Pick<OrganizationDoc, 'brandColor' | 'contactPhone'>> = {};
  if (settings.brandColor !== undefined) changes.brandColor = settings.brandColor;
  if (settings.contactPhone !== undefined) changes.contactPhone = settings.contactPhone;
  const updated = await tenant.organization.findOneAndUpdate({}, { $set: changes });
  if (!updated) throw AppError.notFound('Organization');
  // Cached principals carry the organization, and GET /organizations/me shows its settings.
  await tenant.authChanged();
  return settingsView(updated);
}

/**
 * Frees an email held by a user whose organization was never written (its registration died
 * between the two writes) and is old enough that no registration is still making it. Answers
 * whether it did.
 */
async function reclaimOrphan(deps: OrganizationDeps, across: GatewayDataAcross, email: string) {
  const holder = await across.users.findOne({ email }).lean<UserDoc>();
  if (!holder || holder.createdAt.getTime() > deps.clock().getTime() - ORPHAN_AGE_MS) return false;
  if (await across.organizations.exists({ _id: holder.organizationId })) return false;
  await Promise.all([
    across.users.deleteOne({ _id: holder._id, organizationId: holder.organizationId }),
    across.apiKeys.deleteOne({ _id: holder.organizationId }),
  ]);
  return true;
}
