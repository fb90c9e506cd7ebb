/**
 * The classifier of OpenAPI changes (scripts/openapi-changes.ts) on hand-made pairs of
 * documents: what a client sends may only widen, what it receives may only narrow.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type ApiChange, classifyChanges, judgeSnapshot, type Severity } from '../../scripts/openapi-changes';

type Schema = Record<string, unknown>;
type ObjectSchema = Schema & { properties: Record<string, Schema> };

const farmerOut: ObjectSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    kycStatus: { type: 'string', enum: ['PENDING', 'APPROVED'] },
    region: { type: 'string' },
  },
  required: ['id', 'name', 'kycStatus'],
  additionalProperties: false,
};

const farmerIn: ObjectSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 100 },
    age: { type: 'integer', minimum: 18 },
    crop: { type: 'string', enum: ['MAIZE', 'SORGHUM'] },
  },
  required: ['name'],
  additionalProperties: false,
};

const errorOut: Schema = {
  type: 'object',
  properties: {
    success: { type: 'boolean', const: false },
    error: {
      type: 'object',
      properties: { code: { type: 'string', enum: ['NOT_FOUND'] } },
      required: ['code'],
    },
  },
  required: ['success', 'error'],
};

const json = (schema: Schema) => ({ 'application/json': { schema } });

/** A small partner-like document: edit a deep copy of it to make the "after" side. */
function base() {
  return structuredClone({
    openapi: '3.1.0',
    info: { title: 'test', version: '1.0.0' },
    servers: [{ url: '/api' }],
    paths: {
      '/farmers': {
        post: {
          security: [{ apiKey: [] }],
          requestBody: { required: true, content: json({ $ref: '#/components/schemas/FarmerRequest' }) },
          responses: {
            '201': { description: 'created', content: json({ $ref: '#/components/schemas/Farmer' }) },
          },
        },
        get: {
          security: [{ apiKey: [] }],
          parameters: [
            { in: 'query', name: 'page', required: false, schema: { type: 'integer', minimum: 1 } },
          ],
          responses: {
            '200': {
              description: 'list',
              content: json({ type: 'array', items: { $ref: '#/components/schemas/Farmer' } }),
            },
          },
        },
      },
      '/farmers/{id}': {
        get: {
          security: [{ apiKey: [] }],
          parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'one',
              headers: { 'X-RateLimit-Limit': { required: true, schema: { type: 'string' } } },
              content: json({ $ref: '#/components/schemas/Farmer' }),
            },
            '404': { description: 'unknown', content: json(errorOut) },
          },
        },
      },
    },
    webhooks: {
      'farmer.created': {
        post: { requestBody: { required: true, content: json({ $ref: '#/components/schemas/Farmer' }) } },
      },
    },
    components: {
      schemas: {
        Farmer: farmerOut,
        FarmerRequest: farmerIn,
        // A recursive schema: comparing it must end.
        Region: {
          type: 'object',
          properties: { name: { type: 'string' }, parent: { $ref: '#/components/schemas/Region' } },
        },
      },
    },
  });
}

type Doc = ReturnType<typeof base>;

/** The changes from the base document to a copy `edit` changes. */
function changesAfter(edit: (doc: Doc) => void): ApiChange[] {
  const after = base();
  edit(after);
  return classifyChanges(base(), after);
}

const only = (changes: ApiChange[]) => changes.map((c) => [c.severity, c.where, c.what]);
const schemas = (doc: Doc) => doc.components.schemas as unknown as Record<string, ObjectSchema>;
const field = (doc: Doc, schema: string, name: string) => schemas(doc)[schema]?.properties[name] as Schema;

describe('classifyChanges', () => {
  it('finds nothing between a document and itself, including through recursive references', () => {
    const doc = base();
    doc.paths['/farmers/{id}'].get.responses['200'].content = json({ $ref: '#/components/schemas/Region' });
    expect(classifyChanges(doc, structuredClone(doc))).toEqual([]);
  });

  it('paths and operations: removed ones break clients, added ones do not', () => {
    expect(only(changesAfter((d) => delete (d.paths as Record<string, unknown>)['/farmers/{id}']))).toEqual([
      ['breaking', 'GET /farmers/{id}', 'removed'],
    ]);
    expect(only(changesAfter((d) => delete (d.paths['/farmers'] as Record<string, unknown>).get))).toEqual([
      ['breaking', 'GET /farmers', 'removed'],
    ]);
    expect(
      only(
        changesAfter((d) => {
          (d.paths as Record<string, unknown>)['/plots'] = { post: { responses: {} } };
        }),
      ),
    ).toEqual([['non-breaking', 'POST /plots', 'added']]);
  });

  describe('responses (what a client receives may only narrow)', () => {
    it.each<[string, (doc: Doc) => void, Severity, string, string]>([
      [
        'a removed field',
        (d) => delete schemas(d).Farmer?.properties.region,
        'breaking',
        'GET /farmers/{id} 200 response.region',
        'field removed',
      ],
      [
        'a field that may now be absent',
        (d) => {
          schemas(d).Farmer = { ...farmerOut, required: ['id', 'kycStatus'] };
        },
        'breaking',
        'GET /farmers/{id} 200 response.name',
        'now optional',
      ],
      [
        'a new field',
        (d) => {
          schemas(d).Farmer = {
            ...farmerOut,
            properties: { ...farmerOut.properties, village: { type: 'string' } },
          };
        },
        'non-breaking',
        'GET /farmers/{id} 200 response.village',
        'new field',
      ],
      [
        'a new enum value',
        (d) => {
          field(d, 'Farmer', 'kycStatus').enum = ['PENDING', 'APPROVED', 'REJECTED'];
        },
        'breaking',
        'GET /farmers/{id} 200 response.kycStatus',
        'value "REJECTED" added',
      ],
      [
        'a removed enum value (fewer values than promised)',
        (d) => {
          field(d, 'Farmer', 'kycStatus').enum = ['APPROVED'];
        },
        'non-breaking',
        'GET /farmers/{id} 200 response.kycStatus',
        'value "PENDING" removed',
      ],
      [
        'a changed type',
        (d) => {
          field(d, 'Farmer', 'name').type = 'integer';
        },
        'breaking',
        'GET /farmers/{id} 200 response.name',
        'type changed from string to integer',
      ],
      [
        'a type that may now be null',
        (d) => {
          field(d, 'Farmer', 'region').type = ['string', 'null'];
        },
        'breaking',
        'GET /farmers/{id} 200 response.region',
        'may now be of type null',
      ],
    ])('%s', (_name, edit, severity, where, what) => {
      // The Farmer schema is used by three operations and a webhook: each reports it.
      const changes = changesAfter(edit);
      expect(changes).toContainEqual({ severity, where, what });
      expect(changes).toContainEqual({
        severity,
        where: where.replace('GET /farmers/{id} 200', 'POST /farmers 201'),
        what,
      });
      expect(changes).toContainEqual({
        severity,
        where: where.replace('GET /farmers/{id} 200 response', 'GET /farmers 200 response[]'),
        what,
      });
      expect(changes).toContainEqual({
        severity,
        where: where.replace('GET /farmers/{id} 200 response', 'webhook farmer.created (POST) payload'),
        what,
      });
      expect(new Set(changes.map((c) => c.severity))).toEqual(new Set([severity]));
    });

    it('a new error code, or a new error status, is allowed within a major version; a removed success status is not', () => {
      const codes = changesAfter((d) => {
        const envelope = d.paths['/farmers/{id}'].get.responses['404'].content['application/json']
          .schema as Schema;
        ((envelope.properties as Schema).error as { properties: { code: Schema } }).properties.code.enum = [
          'NOT_FOUND',
          'GONE',
        ];
      });
      expect(only(codes)).toEqual([
        ['non-breaking', 'GET /farmers/{id} 404 response.error.code', 'new error value "GONE"'],
      ]);
      expect(
        only(
          changesAfter((d) => {
            (d.paths['/farmers'].get.responses as Record<string, unknown>)['503'] = {
              description: 'down',
              content: json(errorOut),
            };
          }),
        ),
      ).toEqual([['non-breaking', 'GET /farmers 503 response', 'new response']]);
      expect(
        only(
          changesAfter((d) => delete (d.paths['/farmers'].post.responses as Record<string, unknown>)['201']),
        ),
      ).toEqual([['breaking', 'POST /farmers 201 response', 'no longer returned']]);
      expect(
        only(
          changesAfter(
            (d) => delete (d.paths['/farmers/{id}'].get.responses as Record<string, unknown>)['404'],
          ),
        ),
      ).toEqual([['non-breaking', 'GET /farmers/{id} 404 response', 'no longer returned']]);
    });

    it('a removed response header breaks clients that read it', () => {
      expect(
        only(
          changesAfter(
            (d) =>
              delete (d.paths['/farmers/{id}'].get.responses['200'].headers as Schema)['X-RateLimit-Limit'],
          ),
        ),
      ).toEqual([['breaking', 'GET /farmers/{id} 200 response header X-RateLimit-Limit', 'removed']]);
    });
  });

  describe('requests (what a client sends may only widen)', () => {
    it.each<[string, (doc: Doc) => void, Severity, string, string]>([
      [
        'a new required input',
        (d) => {
          schemas(d).FarmerRequest = {
            ...farmerIn,
            properties: { ...farmerIn.properties, region: { type: 'string' } },
            required: ['name', 'region'],
          };
        },
        'breaking',
        'POST /farmers request body.region',
        'new required input',
      ],
      [
        'a new optional input',
        (d) => {
          schemas(d).FarmerRequest = {
            ...farmerIn,
            properties: { ...farmerIn.properties, region: { type: 'string' } },
          };
        },
        'non-breaking',
        'POST /farmers request body.region',
        'new optional input',
      ],
      [
        'an optional input made required',
        (d) => {
          schemas(d).FarmerRequest = { ...farmerIn, required: ['name', 'age'] };
        },
        'breaking',
        'POST /farmers request body.age',
        'now required',
      ],
      [
        'a required input made optional',
        (d) => {
          schemas(d).FarmerRequest = { ...farmerIn, required: [] };
        },
        'non-breaking',
        'POST /farmers request body.name',
        'now optional',
      ],
      [
        'a removed input of a closed object (now refused as unknown)',
        (d) => delete schemas(d).FarmerRequest?.properties.crop,
        'breaking',
        'POST /farmers request body.crop',
        'input removed',
      ],
      [
        'a removed enum value',
        (d) => {
          field(d, 'FarmerRequest', 'crop').enum = ['MAIZE'];
        },
        'breaking',
        'POST /farmers request body.crop',
        'value "SORGHUM" removed',
      ],
      [
        'a new enum value',
        (d) => {
          field(d, 'FarmerRequest', 'crop').enum = ['MAIZE', 'SORGHUM', 'BEANS'];
        },
        'non-breaking',
        'POST /farmers request body.crop',
        'value "BEANS" added',
      ],
      [
        'a lower maximum length',
        (d) => {
          field(d, 'FarmerRequest', 'name').maxLength = 50;
        },
        'breaking',
        'POST /farmers request body.name',
        'maxLength 100 → 50',
      ],
      [
        'a higher maximum length',
        (d) => {
          field(d, 'FarmerRequest', 'name').maxLength = 200;
        },
        'non-breaking',
        'POST /farmers request body.name',
        'maxLength 100 → 200',
      ],
      [
        'a new pattern',
        (d) => {
          field(d, 'FarmerRequest', 'name').pattern = '^[A-Z]';
        },
        'breaking',
        'POST /farmers request body.name',
        'pattern "^[A-Z]" added',
      ],
    ])('%s', (_name, edit, severity, where, what) => {
      expect(only(changesAfter(edit))).toEqual([[severity, where, what]]);
    });

    it('a type narrowed from number to integer breaks senders of decimals; widened back it does not', () => {
      const decimal = base();
      field(decimal, 'FarmerRequest', 'age').type = 'number';
      const integer = base();
      expect(only(classifyChanges(decimal, integer))).toEqual([
        ['breaking', 'POST /farmers request body.age', 'no longer of type number'],
      ]);
      expect(only(classifyChanges(integer, decimal))).toEqual([
        ['non-breaking', 'POST /farmers request body.age', 'may now be of type number'],
      ]);
    });

    it('query parameters: a new required one or a removed one breaks senders, a new optional one does not', () => {
      const parameters = (d: Doc) => d.paths['/farmers'].get.parameters as Schema[];
      expect(
        only(
          changesAfter((d) =>
            parameters(d).push({ in: 'query', name: 'region', required: true, schema: {} }),
          ),
        ),
      ).toEqual([['breaking', 'GET /farmers query region parameter', 'new required input']]);
      expect(
        only(changesAfter((d) => parameters(d).push({ in: 'query', name: 'region', schema: {} }))),
      ).toEqual([['non-breaking', 'GET /farmers query region parameter', 'new optional input']]);
      // Undeclared query parameters are refused with 400 (docs/api.md).
      expect(only(changesAfter((d) => parameters(d).pop()))).toEqual([
        ['breaking', 'GET /farmers query page parameter', 'removed'],
      ]);
      expect(
        only(
          changesAfter((d) => {
            (parameters(d)[0]?.schema as Schema).minimum = 2;
          }),
        ),
      ).toEqual([['breaking', 'GET /farmers query page parameter', 'minimum 1 → 2']]);
    });

    it('a request body that becomes required, or credentials an operation now needs, break senders', () => {
      const optionalBody = base();
      optionalBody.paths['/farmers'].post.requestBody.required = false;
      expect(only(classifyChanges(optionalBody, base()))).toEqual([
        ['breaking', 'POST /farmers request body', 'now required'],
      ]);
      const open = base();
      open.paths['/farmers/{id}'].get.security = [];
      expect(only(classifyChanges(open, base()))).toEqual([
        ['breaking', 'GET /farmers/{id}', 'now needs credentials'],
      ]);
      expect(only(classifyChanges(base(), open))).toEqual([
        ['non-breaking', 'GET /farmers/{id}', 'no longer needs credentials'],
      ]);
    });
  });

  it('webhooks: a removed event breaks partners, a new one does not (the event set is extensible)', () => {
    expect(
      only(changesAfter((d) => delete (d.webhooks as Record<string, unknown>)['farmer.created'])),
    ).toEqual([['breaking', 'webhook farmer.created (POST)', 'removed']]);
    expect(
      only(
        changesAfter((d) => {
          (d.webhooks as Record<string, unknown>)['farmer.deleted'] = d.webhooks['farmer.created'];
        }),
      ),
    ).toEqual([['non-breaking', 'webhook farmer.deleted (POST)', 'added']]);
  });

  it('finds a removed response field in the real partner document, wherever the schema is used', () => {
    const snapshot = JSON.parse(
      readFileSync(path.join(__dirname, '../../docs/openapi/partner.json'), 'utf8'),
    );
    expect(classifyChanges(snapshot, snapshot)).toEqual([]);
    const after = structuredClone(snapshot);
    const farmerGet = after.paths['/farmers/{id}'].get.responses['200'].content['application/json'].schema;
    delete farmerGet.properties.success;
    expect(only(classifyChanges(snapshot, after))).toEqual([
      ['breaking', 'GET /farmers/{id} 200 response.success', 'field removed'],
    ]);
  });
});

describe('judgeSnapshot', () => {
  const changelog = (...versions: string[]) =>
    ['# Changelog', '## [Unreleased]', ...versions.map((v) => `## [${v}] - 2026-11-28`)].join('\n\n');
  const removed = () => {
    const after = structuredClone(base());
    delete (after.paths as Record<string, unknown>)['/farmers/{id}'];
    return after;
  };

  it('refuses a breaking change while the major version stays, naming the version to set', () => {
    const after = removed();
    after.info.version = '1.1.0';
    const verdict = judgeSnapshot('partner', base(), after, changelog('1.1.0', '1.0.0'));
    expect(verdict.breaking).toHaveLength(1);
    expect(verdict.problems).toEqual([
      expect.stringContaining('set API_VERSION in libs/contracts/src/documents.ts to 2.0.0'),
    ]);
  });

  it('accepts a breaking change with a new major version that has its CHANGELOG.md entry', () => {
    const after = removed();
    after.info.version = '2.0.0';
    expect(judgeSnapshot('partner', base(), after, changelog('2.0.0', '1.0.0')).problems).toEqual([]);
    expect(judgeSnapshot('partner', base(), after, changelog('1.0.0')).problems).toEqual([
      'partner: CHANGELOG.md has no "## [2.0.0]" entry for the current version (info.version).',
    ]);
  });

  it('accepts an additive change within the major version', () => {
    const after = structuredClone(base());
    (after.paths as Record<string, unknown>)['/plots'] = { post: { responses: {} } };
    expect(judgeSnapshot('partner', base(), after, changelog('1.0.0'))).toEqual({
      changes: [{ severity: 'non-breaking', where: 'POST /plots', what: 'added' }],
      breaking: [],
      problems: [],
    });
  });
});
