import { z } from 'zod';
import { errorCodesOf, type RouteContract } from '../../src/contract';

const bare: RouteContract = {
  operationId: 'getThing',
  method: 'get',
  path: '/thing',
  summary: 'A route without input or caller',
  tags: ['test'],
  auth: 'none',
  responses: { 200: { description: 'ok', data: z.object({}) } },
  errors: [],
};

// Found by the bad-input sweep (test/contract/bad-input-sweep.test.ts): GET /openapi.json with a
// malformed JSON body answered 400, GET /.well-known/jwks.json past the anonymous limit 429,
// and neither status was in the document.
it('every route documents 400 (bodies and queries are read for every route)', () => {
  expect(errorCodesOf(bare)).toContain('INVALID_INPUT');
  expect(errorCodesOf({ ...bare, auth: 'opsBearer' })).toContain('INVALID_INPUT');
});

it('routes without a caller document 429 (the anonymous limit per client address)', () => {
  expect(errorCodesOf(bare)).toContain('RATE_LIMIT_EXCEEDED');
  expect(errorCodesOf({ ...bare, auth: 'opsBearer' })).not.toContain('RATE_LIMIT_EXCEEDED');
});
