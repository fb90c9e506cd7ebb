/**
 * The design floor of the policy service's `GET /policies/{id}` (issue 24, target 3), as its own
 * process behind bench/support/floor-gateway.ts, like the policy service behind the gateway:
 * express, one MongoDB driver `findOne` on the platform's own MongoDB, and the policy as JSON.
 *
 * The query is the service's: the `policies` collection of its database (`MONGO_DB`), by `_id`
 * and `organizationId`, as services/policy/src/policies/reads.ts reads it through the
 * organization's binding (libs/mongo/src/tenant.ts adds `organizationId` to every filter); both
 * are one `find` with a limit of 1 and the same filter. The view is written out here rather than
 * imported, so that the floor stays put when the service changes; the bench checks the bytes
 * equal the service's answer (through the gateway) before measuring.
 *
 * `FLOOR_DUTIES=1`: the duty floor's service, behind floor-gateway.ts with the same setting: the
 * per-request duties (bench/support/floor-duties.ts), the caller's organization only from the
 * gateway's signed hop (`FLOOR_HOP_SECRET`), and the id checked for the form the platform gives
 * ids before MongoDB is asked (the service refuses any other with `400`).
 */
import express from 'express';
import { MongoClient } from 'mongodb';
import { duties, UUID, verifyHop } from './floor-duties';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

/** The stored fields the partner's view shows (services/policy/src/policies/model.ts). */
interface StoredPolicy {
  _id: string;
  organizationId: string;
  policyNumber: string;
  status: string;
  premiumPaid: boolean;
  exponent: number;
  sumInsuredMinor: bigint | number;
  premiumMinor: bigint | number;
  coverageType: string;
  onChainPolicyId?: string | null;
  payouts?: unknown[];
  damageAssessments?: unknown[];
  settlementMode: string;
  productType: string;
  farmerId: string;
  plotId?: string | null;
  herdId?: string | null;
  season?: string | null;
  durationDays: number;
  currency: string;
  coverStartsAt?: Date | null;
  coverEndsAt?: Date | null;
  activatedAt?: Date | null;
  txHash?: string | null;
  premiumReference?: string | null;
  rateTableVersion: string;
  createdAt: Date;
}

const DAY_MS = 86_400_000;
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
/** Minor units as the JSON number the API shows (a decimal string parses exactly rounded). */
const amount = (minor: bigint | number, exponent: number) => Number(`${minor}e-${exponent}`);

/**
 * The `Policy` schema's fields in the service's order (services/policy/src/policies/reads.ts
 * `policyView`). The bench reads pending policies, whose payouts and assessments are empty.
 */
function view(p: StoredPolicy, now: Date) {
  return {
    id: p._id,
    policyNumber: p.policyNumber,
    status: p.status,
    premiumPaid: p.premiumPaid,
    sumInsured: amount(p.sumInsuredMinor, p.exponent),
    premium: amount(p.premiumMinor, p.exponent),
    coverageType: p.coverageType,
    onChainPolicyId: p.onChainPolicyId ?? null,
    daysRemaining: p.coverEndsAt
      ? Math.max(0, Math.ceil((p.coverEndsAt.getTime() - now.getTime()) / DAY_MS))
      : p.status === 'PENDING'
        ? p.durationDays
        : 0,
    payouts: p.payouts ?? [],
    damageAssessments: p.damageAssessments ?? [],
    settlementMode: p.settlementMode,
    productType: p.productType,
    farmerId: p.farmerId,
    plotId: p.plotId ?? null,
    herdId: p.herdId ?? null,
    season: p.season ?? null,
    durationDays: p.durationDays,
    currency: p.currency,
    coverStartsAt: iso(p.coverStartsAt),
    coverEndsAt: iso(p.coverEndsAt),
    activatedAt: iso(p.activatedAt),
    txHash: p.txHash ?? null,
    premiumReference: p.premiumReference ?? null,
    rateTableVersion: p.rateTableVersion,
    createdAt: p.createdAt.toISOString(),
  };
}

async function main(): Promise<void> {
  // The driver's default pool (100), as mongoose's connection in the service has.
  const client = await MongoClient.connect(required('MONGO_URL'));
  const policies = client.db(required('MONGO_DB')).collection<StoredPolicy>('policies');

  const app = express();
  // As libs/http/src/app.ts sets up every platform app (no ETag hashing of each body).
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/readyz', async (_req, res) => {
    await client.db('admin').command({ ping: 1 });
    res.end();
  });
  const withDuties = process.env.FLOOR_DUTIES === '1';
  if (withDuties) {
    const secret = required('FLOOR_HOP_SECRET');
    app.use(
      duties('duties-policy', (req, res) => {
        const organizationId = verifyHop(secret, req.headers);
        if (organizationId) {
          res.locals.organizationId = organizationId;
          return true;
        }
        res.status(401).json({ error: { code: 'UNAUTHORIZED' } });
        return false;
      }),
    );
  }
  app.get('/policies/:id', async (req, res) => {
    // Who the caller is: the signed hop's organization with the duties, else the plain header.
    const organizationId: unknown = withDuties ? res.locals.organizationId : req.headers['x-organization-id'];
    if (typeof organizationId !== 'string' || (withDuties && !UUID.test(req.params.id))) {
      res.status(400).end();
      return;
    }
    const policy = await policies.findOne({ _id: req.params.id, organizationId });
    if (!policy) {
      res.status(404).json({ error: { code: 'NOT_FOUND' } });
      return;
    }
    // The success envelope every platform answer has (libs/http/src/mount.ts `ok`).
    res.json({ success: true, data: view(policy, new Date()) });
  });

  const server = app.listen(Number(required('PORT')), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => client.close().finally(() => process.exit(0))));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
