import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PARTNER_ROUTES, partnerDocument } from '@parametric/contracts';
import {
  CAPABILITIES,
  type PartnerCapability,
  ROLE_CAPABILITIES,
  type RouteContract,
  roleHas,
} from '@parametric/http';

const routes = Object.values(PARTNER_ROUTES).flat() as RouteContract[];
const capabilityOf = (operationId: string) => routes.find((r) => r.operationId === operationId)?.capability;

describe('capabilities (docs/api.md, Capabilities)', () => {
  it('has every keyed partner route declare one known capability, and every key-less one none', () => {
    const keyed = routes.filter((r) => r.auth === 'partner');
    expect(keyed.length).toBeGreaterThan(30);
    for (const route of keyed) {
      expect({
        route: route.operationId,
        known: CAPABILITIES.includes(route.capability as PartnerCapability),
      }).toEqual({
        route: route.operationId,
        known: true,
      });
    }
    for (const route of routes.filter((r) => r.auth === 'none')) expect(route.capability).toBeUndefined();
  });

  it('shows each route’s capability in the OpenAPI document', () => {
    const document = partnerDocument() as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    for (const route of routes.filter((r) => r.capability)) {
      const operation = document.paths[route.path]?.[route.method];
      expect(operation?.['x-capability']).toBe(route.capability);
      expect(String(operation?.description)).toContain(`Needs capability \`${route.capability}\``);
    }
  });

  it('gates what the spec names: determinations, keys, webhooks and delivery retry, the organization read', () => {
    expect(capabilityOf('listDeterminations')).toBe('determination:read');
    for (const id of ['getApiKey', 'rotateApiKey', 'revokeApiKey'])
      expect(capabilityOf(id)).toBe('api-key:manage');
    for (const id of [
      'setWebhook',
      'getWebhook',
      'rotateWebhookSecret',
      'listWebhookDeliveries',
      'getWebhookDelivery',
      'retryWebhookDelivery',
    ]) {
      expect(capabilityOf(id)).toBe('webhook:manage');
    }
    expect(capabilityOf('getOrganization')).toBe('organization:read');
  });

  it('gives ORG_ADMIN everything, every role the organization read, and only ORG_ADMIN key and webhook management', () => {
    expect([...ROLE_CAPABILITIES.ORG_ADMIN].sort()).toEqual([...CAPABILITIES].sort());
    for (const role of Object.keys(ROLE_CAPABILITIES)) {
      expect(roleHas(role, 'organization:read')).toBe(true);
      expect(roleHas(role, 'api-key:manage')).toBe(role === 'ORG_ADMIN');
      expect(roleHas(role, 'webhook:manage')).toBe(role === 'ORG_ADMIN');
    }
    expect(roleHas('ORG_VIEWER', 'determination:read')).toBe(false);
    expect(roleHas('ORG_OPERATOR', 'determination:read')).toBe(true);
    expect(roleHas('ORG_FINANCE', 'settlement-report:write')).toBe(true);
    expect(roleHas('NO_SUCH_ROLE', 'organization:read')).toBe(false);
  });

  it('has the partner guide’s role table say exactly what the code grants', () => {
    const guide = readFileSync(join(__dirname, '../../docs/api.md'), 'utf8');
    const rows = [...guide.matchAll(/^\| `(ORG_[A-Z]+)` +\| (.+?) +\|$/gm)];
    const table = Object.fromEntries(
      rows.map(([, role, cells]) => [
        role,
        cells === 'all of them'
          ? [...CAPABILITIES]
          : [...(cells as string).matchAll(/`([^`]+)`/g)].map((m) => m[1]),
      ]),
    );
    expect(table).toEqual(
      Object.fromEntries(Object.entries(ROLE_CAPABILITIES).map(([r, caps]) => [r, [...caps]])),
    );
  });
});
