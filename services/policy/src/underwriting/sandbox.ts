import { currencyOfMarket, type Market } from '@parametric/money';
import type { TenantPolicyData } from '../repositories';
import { exponentOfCurrency } from './model';

type Tenant = Pick<TenantPolicyData, 'licences' | 'capacity'>;

/** A sandbox organization's capacity, in whole units of its market's currency: more than any test spends. */
export const SANDBOX_CAPACITY_UNITS = 1_000_000_000n;
/** How long a sandbox licence and solvency attestation hold from their set-up. */
const SANDBOX_VALIDITY_MS = 10 * 365 * 24 * 3_600_000;

/** The licence number a sandbox organization gets: it says it is none. */
export const sandboxLicenceNumber = (market: string) => `SANDBOX-${market}-NOT-A-LICENCE`;

/**
 * Tenant bindings (repositories.ts keeps them per organization) whose sandbox set-up this
 * process has already seen through: the set-up is two idempotent writes, done once per
 * organization and process rather than on every purchase.
 */
const setUp = new WeakSet<object>();

/**
 * A sandbox organization's licence for its market and its labelled capacity (`sandbox: true`),
 * written when its first purchase reaches the gates (docs/decisions.md, "Sandbox set-up"). Only
 * what is missing is written (`$setOnInsert`): a licence or capacity ops recorded for it since
 * stays as recorded. The gateway's registration never waits for this service, so a sandbox
 * organization is never left half set up by it being down: its first purchase sets it up.
 */
export async function ensureSandboxUnderwriting(tenant: Tenant, market: string, now: Date): Promise<void> {
  if (setUp.has(tenant)) return;
  const until = new Date(now.getTime() + SANDBOX_VALIDITY_MS);
  const currency = currencyOfMarket(market as Market);
  const amountMinor = SANDBOX_CAPACITY_UNITS * 10n ** BigInt(exponentOfCurrency(currency));
  await Promise.all([
    upsertOnce(() =>
      tenant.licences.findOneAndUpdate(
        { market: market as Market },
        { $setOnInsert: { licenceNumber: sandboxLicenceNumber(market), expiresAt: until } },
        { upsert: true },
      ),
    ),
    upsertOnce(() =>
      tenant.capacity.upsert({
        $setOnInsert: { currency, amountMinor, reservedMinor: 0n, solvencyAttestedUntil: until },
        // Whatever capacity a sandbox organization has is sandbox capacity, however it was recorded.
        $set: { sandbox: true },
      }),
    ),
  ]);
  setUp.add(tenant);
}

/** An upsert that a concurrent one beat (a duplicate key) found the document made: done either way. */
async function upsertOnce(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if ((err as { code?: unknown }).code !== 11000) throw err;
  }
}
