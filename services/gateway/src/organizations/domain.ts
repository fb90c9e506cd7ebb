import { AppError } from '@parametric/http';
import { issueCredentials } from '../api-keys/credentials';
import type { GatewayRepositories, TenantGatewayData } from '../repositories';
import type { OrganizationDoc } from './model';
import { organizationView, settingsView } from './view';

export interface RegistrationInput {
  name: string;
  type: OrganizationDoc['type'];
  countryCode: OrganizationDoc['countryCode'];
  contactEmail?: string;
  contactPhone?: string;
}

/**
 * A new organization (a new tenant, hence across organizations) and its first credential.
 * The plaintext key and secret are returned here and never stored.
 */
export async function registerOrganization(
  across: ReturnType<GatewayRepositories['acrossOrganizations']>,
  input: RegistrationInput,
  pepper: string,
) {
  const organization = await across.organizations.create({
    name: input.name,
    type: input.type,
    countryCode: input.countryCode,
    contactEmail: input.contactEmail ?? null,
    contactPhone: input.contactPhone ?? null,
  });
  const credentials = issueCredentials(pepper, 'reg');
  try {
    await across.apiKeys.create({ _id: organization._id, ...credentials.record });
  } catch (err) {
    // An organization nobody can authenticate as is worse than none.
    await across.organizations.deleteOne({ _id: organization._id });
    throw err;
  }
  return {
    organization: {
      ...organizationView(organization.toObject() as OrganizationDoc),
      // A new organization has no webhook yet.
      webhookUrl: null,
      apiKey: credentials.apiKey,
      apiSecret: credentials.apiSecret,
    },
  };
}

/** The organization with its webhook URL, which the webhooks service owns. */
export async function readOrganization(
  organization: OrganizationDoc,
  webhookUrlOf: (organizationId: string) => Promise<string | null>,
) {
  return { ...organizationView(organization), webhookUrl: await webhookUrlOf(organization._id) };
}

/** Sets the writable settings given (`null` clears one); other keys never reach here. */
export async function updateSettings(
  tenant: TenantGatewayData,
  settings: { brandColor?: string | null; contactPhone?: string | null },
) {
  const changes: Partial<Pick<OrganizationDoc, 'brandColor' | 'contactPhone'>> = {};
  if (settings.brandColor !== undefined) changes.brandColor = settings.brandColor;
  if (settings.contactPhone !== undefined) changes.contactPhone = settings.contactPhone;
  const updated = await tenant.organization.findOneAndUpdate({}, { $set: changes });
  if (!updated) throw AppError.notFound('Organization');
  return settingsView(updated);
}
