/**
 * The SDK cannot drift from the API: its generated files are regenerated from the committed
 * partner document and must be what is committed (`npm run sdk:generate` writes them).
 */
import { readFileSync } from 'node:fs';
import { generateIdempotent, generateSchema, IDEMPOTENT, readDocument, SCHEMA } from '../../scripts/generate';

const STALE = 'is stale: run `npm run sdk:generate` after the partner document changes';

describe('the generated SDK files', () => {
  it(`schema.d.ts is openapi-typescript of docs/openapi/partner.json (else it ${STALE})`, async () => {
    const expected = await generateSchema(readDocument());
    expect(readFileSync(SCHEMA, 'utf8') === expected).toBe(true);
  });

  it(`idempotent.ts lists the operations that take an Idempotency-Key (else it ${STALE})`, () => {
    expect(readFileSync(IDEMPOTENT, 'utf8')).toBe(generateIdempotent(readDocument()));
  });

  it('finds the purchase among them, the one keyed write the API has today', () => {
    expect(generateIdempotent(readDocument())).toContain("'POST /policies/purchase'");
  });
});
