/**
 * The policy read's duty floor (bench/support/floor-duties.ts) must do the hop's duty, or the
 * floor flatters the platform it is measured against (docs/performance.md, "The policy read's
 * duty floor"): its service takes the caller's organization only from a hop its gateway signed,
 * unchanged and fresh, as the platform's services take theirs (libs/http/src/internal-context.ts).
 */
import { signHop, verifyHop } from '../../bench/support/floor-duties';

const SECRET = 'a'.repeat(64);
const ORG = '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b';
const CONTEXT = { traceId: '0'.repeat(32), spanId: '1'.repeat(16), reqId: 'req-1' };

describe('the duty floor hop', () => {
  it('gives the signed organization, and carries the request id and trace', () => {
    const headers = signHop(SECRET, ORG, CONTEXT);
    expect(verifyHop(SECRET, headers)).toBe(ORG);
    expect(headers['x-request-id']).toBe('req-1');
    expect(headers.traceparent).toBe(`00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`);
  });

  it('refuses a hop signed with another secret, changed, unsigned or with a malformed signature', () => {
    const headers = signHop(SECRET, ORG, CONTEXT);
    expect(verifyHop('b'.repeat(64), headers)).toBeUndefined();
    const other = '00000000-0000-4000-8000-000000000000';
    expect(
      verifyHop(SECRET, { ...headers, 'x-hop': (headers['x-hop'] as string).replace(ORG, other) }),
    ).toBeUndefined();
    expect(verifyHop(SECRET, { 'x-hop': headers['x-hop'] })).toBeUndefined();
    expect(verifyHop(SECRET, { ...headers, 'x-hop-signature': 'zz' })).toBeUndefined();
  });

  it('refuses a hop older than a minute', () => {
    const realNow = Date.now;
    try {
      Date.now = () => realNow() - 61_000;
      const stale = signHop(SECRET, ORG, CONTEXT);
      Date.now = realNow;
      expect(verifyHop(SECRET, stale)).toBeUndefined();
    } finally {
      Date.now = realNow;
    }
  });
});
