import { PARTNER_ROUTES } from '@parametric/contracts';
import type { RouteContract } from '@parametric/http';
import {
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from '../../services/determinations/test/support';
import { startPaymentsStack } from '../../services/payments/test/support';
import { BODY_REFERENCES, ID_PROBES, type IdProbe, type Ids, unknownIds } from './id-probes';
import { type OwnedResources, ownEveryResource } from './owned-resources';

/**
 * Every partner route that takes another resource's id, called by organization B with
 * organization A's ids: each must answer 404 NOT_FOUND with a body identical to the answer for
 * an id that does not exist at all, and change nothing of A's.
 */

type Owned = OwnedResources;

const upperCased = (ids: Ids): Ids =>
  Object.fromEntries(
    Object.keys(unknownIds()).map((name) => [name, ids[name as keyof Ids].toUpperCase()]),
  ) as Ids;

const partnerRoutes = Object.values(PARTNER_ROUTES).flat() as RouteContract[];

let p: DeterminationsPlatform;
let a: Owned;
let b: Owned;

const own = () => ownEveryResource(p, { webhook: false });

beforeAll(async () => {
  p = await startDeterminationsPlatform({}, {}, async ({ policyUrl, determinationsUrl, redisPrefix }) => {
    const payments = await startPaymentsStack({ policyUrl, determinationsUrl, redisPrefix });
    return {
      gatewayEnv: { PAYMENTS_URL: payments.payments.url, PAYMENTS_INITIATE_LIMIT_POINTS: '1000' },
      stop: () => payments.stop(),
    };
  });
  [a, b] = await Promise.all([own(), own()]);
  // B has a webhook URL, so a retry cannot fail on "no URL" before the ownership check.
  await p.connectWebhook(b.apiKey);
}, 60_000);

afterAll(async () => {
  await p.stop();
});

it('has a probe for every partner route that takes an id, and for every route whose body names one', () => {
  const withIds = partnerRoutes.filter((r) => r.params).map((r) => r.operationId);
  expect(withIds.length).toBeGreaterThan(0);
  expect(Object.keys(ID_PROBES).sort()).toEqual([...withIds, ...BODY_REFERENCES].sort());
});

it.each(Object.keys(ID_PROBES))(
  "%s with another organization's id answers exactly as for an unknown id, and changes nothing",
  async (operationId) => {
    const route = partnerRoutes.find((r) => r.operationId === operationId) as RouteContract;
    const probe = ID_PROBES[operationId] as IdProbe;
    const unknown = unknownIds();
    const aPolicy = () => p.gateway.api('GET', `/policies/${a.policyId}`, { key: a.apiKey });
    const aDeliveries = () => p.gateway.api('GET', '/organizations/me/webhook/deliveries', { key: a.apiKey });
    const aReports = () =>
      p.gateway.api('GET', `/determinations/${a.determinationId}/settlement-report`, { key: a.apiKey });
    const aUser = () => p.gateway.api('GET', `/organizations/me/users/${a.userId}`, { key: a.apiKey });
    const [before, deliveriesBefore, reportsBefore, userBefore] = [
      await aPolicy(),
      await aDeliveries(),
      await aReports(),
      await aUser(),
    ];
    const call = (ids: Ids) => {
      const { path, body } = probe(ids, b.farmerId);
      return p.gateway.api(route.method.toUpperCase(), path, { key: b.apiKey, body });
    };
    const foreign = await call(a);
    const missing = await call(unknown);
    expect([foreign.status, foreign.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect(foreign.body).toEqual(missing.body);
    // Ids are read in any case (RFC 9562): A's ids in upper case are A's ids, still not B's.
    const foreignUpper = await call(upperCased(a));
    expect(foreignUpper.body).toEqual((await call(upperCased(unknown))).body);
    expect(foreignUpper.body).toEqual(missing.body);

    expect((await aPolicy()).body).toEqual(before.body);
    expect((await aDeliveries()).body).toEqual(deliveriesBefore.body);
    expect((await aReports()).body).toEqual(reportsBefore.body);
    expect((await aUser()).body).toEqual(userBefore.body);
    const plots = await p.gateway.api('GET', `/farmers/${a.farmerId}/plots`, { key: a.apiKey });
    const herds = await p.gateway.api('GET', `/farmers/${a.farmerId}/herds`, { key: a.apiKey });
    expect([plots.body.data.length, herds.body.data.length]).toEqual([1, 1]);
  },
);
