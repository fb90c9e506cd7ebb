import { farmerBody, type PolicyPlatform, plotBody, startPolicyPlatform } from './support';

describe('farmers, plots and herds (through the gateway)', () => {
  let p: PolicyPlatform;
  let org: { id: string; apiKey: string };
  let other: { id: string; apiKey: string };
  beforeAll(async () => {
    p = await startPolicyPlatform();
    org = await p.gateway.register();
    other = await p.gateway.register();
  });
  afterAll(async () => {
    await p.stop();
  });

  const api = (method: string, path: string, body?: unknown, key = org.apiKey) =>
    p.gateway.api(method, path, { key, body });
  const count = (collection: string) => p.db.collection(collection).countDocuments();

  describe('POST /farmers', () => {
    it('registers a farmer with KYC PENDING', async () => {
      const body = farmerBody({ location: { latitude: -0.3, longitude: 36.1 } });
      const reply = await api('POST', '/farmers', body);
      expect(reply.status).toBe(201);
      expect(reply.body.data).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        ...body,
        kycStatus: 'PENDING',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    });

    it('answers 409 CONFLICT for a phone number or national ID already registered in the organization', async () => {
      const first = farmerBody();
      await api('POST', '/farmers', first);
      const before = await count('farmers');
      const samePhone = await api('POST', '/farmers', farmerBody({ phoneNumber: first.phoneNumber }));
      expect(samePhone.status).toBe(409);
      expect(samePhone.body.error.code).toBe('CONFLICT');
      expect(samePhone.body.error.details).toEqual([{ field: 'phoneNumber', message: expect.any(String) }]);
      const sameId = await api('POST', '/farmers', farmerBody({ nationalId: first.nationalId }));
      expect(sameId.status).toBe(409);
      expect(sameId.body.error.details).toEqual([{ field: 'nationalId', message: expect.any(String) }]);
      expect(await count('farmers')).toBe(before);
    });

    it('lets another organization register the same phone number and national ID', async () => {
      const body = farmerBody();
      expect((await api('POST', '/farmers', body)).status).toBe(201);
      expect((await api('POST', '/farmers', body, other.apiKey)).status).toBe(201);
    });

    it('creates exactly one farmer when the same registration races itself', async () => {
      const body = farmerBody();
      const replies = await Promise.all(Array.from({ length: 5 }, () => api('POST', '/farmers', body)));
      expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      expect(
        await p.db
          .collection('farmers')
          .countDocuments({ nationalId: body.nationalId, organizationId: org.id }),
      ).toBe(1);
    });

    it.each([
      ['a phone number that is not E.164', { phoneNumber: '0712345678' }, 'phoneNumber'],
      ['an empty first name', { firstName: '' }, 'firstName'],
      ['a national ID with spaces', { nationalId: 'AB 1234' }, 'nationalId'],
      ['a missing region', { region: undefined }, 'region'],
      [
        'a location outside Africa (swapped coordinates)',
        { location: { latitude: 36.1, longitude: -80 } },
        'location.longitude',
      ],
      ['an unknown field', { kycStatus: 'APPROVED' }, 'kycStatus'],
    ])('rejects %s with 400 naming the field, creating nothing', async (_what, change, field) => {
      const before = await count('farmers');
      const reply = await api('POST', '/farmers', farmerBody(change));
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
      expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await count('farmers')).toBe(before);
    });
  });

  describe('reads', () => {
    it('reads a farmer by id; another organization gets 404 NOT_FOUND, exactly as for an unknown id', async () => {
      const created = (await api('POST', '/farmers', farmerBody())).body.data;
      expect((await api('GET', `/farmers/${created.id}`)).body.data).toEqual(created);
      const foreign = await api('GET', `/farmers/${created.id}`, undefined, other.apiKey);
      const unknown = await api(
        'GET',
        '/farmers/3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        undefined,
        other.apiKey,
      );
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(unknown.body);
    });

    it('lists farmers page by page with the pagination envelope, filtered by KYC status', async () => {
      const fresh = await p.gateway.register();
      for (let i = 0; i < 3; i++) await api('POST', '/farmers', farmerBody(), fresh.apiKey);
      const page = await api('GET', '/farmers?limit=2&page=2', undefined, fresh.apiKey);
      expect(page.status).toBe(200);
      expect(page.body.pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
      expect(page.body.data).toHaveLength(1);
      expect(
        (await api('GET', '/farmers?kycStatus=PENDING', undefined, fresh.apiKey)).body.pagination.total,
      ).toBe(3);
      expect(
        (await api('GET', '/farmers?kycStatus=APPROVED', undefined, fresh.apiKey)).body.pagination.total,
      ).toBe(0);
      expect((await api('GET', '/farmers?kycStatus=MAYBE', undefined, fresh.apiKey)).status).toBe(400);
      expect((await api('GET', '/farmers?limit=0', undefined, fresh.apiKey)).status).toBe(400);
      // The one paging rule of every list: a limit over 100 is served as 100, not refused.
      const capped = await api('GET', '/farmers?limit=101', undefined, fresh.apiKey);
      expect([capped.status, capped.body.pagination]).toEqual([
        200,
        { page: 1, limit: 100, total: 3, totalPages: 1 },
      ]);
    });
  });

  describe('plots and herds', () => {
    it("registers a plot for the organization's farmer and lists it under the farmer", async () => {
      const farmer = (await api('POST', '/farmers', farmerBody())).body.data;
      const plot = await api('POST', '/plots', plotBody(farmer.id));
      expect(plot.status).toBe(201);
      expect(plot.body.data).toMatchObject({ farmerId: farmer.id, cropType: 'MAIZE', areaHectares: 1.5 });
      expect((await api('GET', `/plots/${plot.body.data.id}`)).body.data).toEqual(plot.body.data);
      expect((await api('GET', `/farmers/${farmer.id}/plots`)).body.data).toEqual([plot.body.data]);
      expect((await api('GET', `/plots/${plot.body.data.id}`, undefined, other.apiKey)).status).toBe(404);
    });

    it("pages a farmer's plots and herds oldest first, in the list envelope, refusing bad paging", async () => {
      const farmer = (await api('POST', '/farmers', farmerBody())).body.data;
      const plots: string[] = [];
      const herds: string[] = [];
      for (const name of ['A', 'B', 'C']) {
        plots.push((await api('POST', '/plots', plotBody(farmer.id, { name }))).body.data.id);
        const herd = {
          farmerId: farmer.id,
          name,
          headCount: 5,
          estimatedValue: 100_000,
          latitude: 1,
          longitude: 36,
        };
        herds.push((await api('POST', '/herds', herd)).body.data.id);
      }
      for (const [kind, ids] of [
        ['plots', plots],
        ['herds', herds],
      ] as const) {
        const first = await api('GET', `/farmers/${farmer.id}/${kind}?limit=2`);
        const second = await api('GET', `/farmers/${farmer.id}/${kind}?limit=2&page=2`);
        expect(first.body.success).toBe(true);
        expect(first.body.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
        expect(second.body.pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
        const listed = [...first.body.data, ...second.body.data].map((x: { id: string }) => x.id);
        expect(listed).toEqual(ids);
        const all = await api('GET', `/farmers/${farmer.id}/${kind}`);
        expect(all.body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });
        const bad = await api('GET', `/farmers/${farmer.id}/${kind}?page=0&cropType=MAIZE`);
        expect([bad.status, bad.body.error.code, bad.body.error.message]).toEqual([
          400,
          'INVALID_INPUT',
          'Invalid query parameters',
        ]);
        expect(bad.body.error.details).toEqual(
          expect.arrayContaining([
            { field: 'page', message: 'must be at least 1' },
            { field: 'cropType', message: 'Unknown query parameter: this endpoint takes page, limit' },
          ]),
        );
        const theirs = await api('GET', `/farmers/${farmer.id}/${kind}`, undefined, other.apiKey);
        expect([theirs.status, theirs.body.error.code]).toEqual([404, 'NOT_FOUND']);
      }
    });

    it("refuses a plot or herd for another organization's farmer with 404, creating nothing", async () => {
      const foreignFarmer = (await api('POST', '/farmers', farmerBody(), other.apiKey)).body.data;
      const before = [await count('plots'), await count('herds')];
      expect((await api('POST', '/plots', plotBody(foreignFarmer.id))).status).toBe(404);
      const herd = {
        farmerId: foreignFarmer.id,
        name: 'Cattle',
        headCount: 12,
        estimatedValue: 480000,
        latitude: 0.5,
        longitude: 35.2,
      };
      expect((await api('POST', '/herds', herd)).status).toBe(404);
      expect([await count('plots'), await count('herds')]).toEqual(before);
    });

    it.each([
      ['an unknown crop', { cropType: 'TULIPS' }, 'cropType'],
      ['a zero area', { areaHectares: 0 }, 'areaHectares'],
      ['an area with 5 decimals', { areaHectares: 1.00001 }, 'areaHectares'],
      ['a latitude beyond 90', { latitude: 95 }, 'latitude'],
      ['a string longitude', { longitude: '36.1' }, 'longitude'],
    ])('rejects a plot with %s', async (_what, change, field) => {
      const farmer = (await api('POST', '/farmers', farmerBody())).body.data;
      const reply = await api('POST', '/plots', plotBody(farmer.id, change));
      expect(reply.status).toBe(400);
      expect(reply.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('registers a herd within the documented bounds and rejects values outside them', async () => {
      const farmer = (await api('POST', '/farmers', farmerBody())).body.data;
      const herd = {
        farmerId: farmer.id,
        name: 'Boran cattle',
        headCount: 25,
        estimatedValue: 1250000.5,
        latitude: 1.29,
        longitude: 36.82,
      };
      const created = await api('POST', '/herds', herd);
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ ...herd, id: expect.any(String) });
      expect((await api('GET', `/farmers/${farmer.id}/herds`)).body.data).toEqual([created.body.data]);
      for (const [change, field] of [
        [{ headCount: 0 }, 'headCount'],
        [{ headCount: 2.5 }, 'headCount'],
        [{ headCount: 100_001 }, 'headCount'],
        [{ estimatedValue: 0 }, 'estimatedValue'],
        [{ estimatedValue: 10.001 }, 'estimatedValue'],
        [{ latitude: 50 }, 'latitude'],
      ] as const) {
        const reply = await api('POST', '/herds', { ...herd, ...change });
        expect(reply.status).toBe(400);
        expect(reply.body.error.details[0].field).toBe(field);
      }
    });
  });

  describe('POST /farmers/bulk-import', () => {
    it('creates the valid rows with their plots and reports each row; re-sending the same file creates nothing twice', async () => {
      const fresh = await p.gateway.register();
      const a = {
        ...farmerBody(),
        plots: [{ name: 'A1', latitude: 0.1, longitude: 35.1, areaHectares: 2, cropType: 'BEANS' }],
      };
      const b = farmerBody();
      const invalid = { ...farmerBody(), phoneNumber: '12' };
      const clashing = { ...farmerBody(), nationalId: b.nationalId };
      const file = { farmers: [a, b, invalid, clashing] };

      const first = await api('POST', '/farmers/bulk-import', file, fresh.apiKey);
      expect(first.status).toBe(200);
      expect(first.body.data.summary).toEqual({ created: 2, duplicate: 0, conflict: 1, invalid: 1 });
      const [ra, rb, ri, rc] = first.body.data.results;
      expect(ra).toMatchObject({
        index: 0,
        status: 'created',
        farmerId: expect.any(String),
        plotIds: [expect.any(String)],
      });
      expect(rb).toMatchObject({ index: 1, status: 'created' });
      expect(ri).toEqual({
        index: 2,
        status: 'invalid',
        errors: [{ field: 'phoneNumber', message: expect.any(String) }],
      });
      expect(rc).toEqual({
        index: 3,
        status: 'conflict',
        errors: [{ field: 'nationalId', message: expect.any(String) }],
      });
      expect(
        (await api('GET', `/farmers/${ra.farmerId}/plots`, undefined, fresh.apiKey)).body.data,
      ).toHaveLength(1);

      const farmersBefore = await count('farmers');
      const plotsBefore = await count('plots');
      const again = await api('POST', '/farmers/bulk-import', file, fresh.apiKey);
      expect(again.body.data.summary).toEqual({ created: 0, duplicate: 2, conflict: 1, invalid: 1 });
      expect(again.body.data.results[0]).toEqual({ index: 0, status: 'duplicate', farmerId: ra.farmerId });
      expect([await count('farmers'), await count('plots')]).toEqual([farmersBefore, plotsBefore]);
    });

    it('refuses a file over 500 rows, or an empty one, with 400 and creates nothing', async () => {
      const before = await count('farmers');
      const big = { farmers: Array.from({ length: 501 }, () => farmerBody()) };
      const reply = await api('POST', '/farmers/bulk-import', big);
      expect(reply.status).toBe(400);
      expect(reply.body.error.details[0]).toEqual({
        field: 'farmers',
        message: 'at most 500 farmers per request',
      });
      expect((await api('POST', '/farmers/bulk-import', { farmers: [] })).status).toBe(400);
      expect(await count('farmers')).toBe(before);
    });
  });
});
