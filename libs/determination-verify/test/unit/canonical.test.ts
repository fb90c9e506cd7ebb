import { createHash } from 'node:crypto';
import { CanonicalizationError, canonicalBytes, canonicalJson, evidenceHash, jwkThumbprint } from '../../src';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts members by UTF-16 code units (RFC 8785 section 3.2.3)', () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
        '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    const keys = [...canonicalJson(input).matchAll(/"([^"]*)":/g)].map((m) => m[1]);
    expect(keys).toEqual(['\\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
  });

  it('serialises numbers, strings and literals as RFC 8785 section 3.2.2 does', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('gives the UTF-8 bytes of that text', () => {
    expect(Buffer.from(canonicalBytes({ b: 'é', a: -0 })).toString('hex')).toBe(
      Buffer.from('{"a":0,"b":"é"}', 'utf8').toString('hex'),
    );
  });

  it.each([
    ['NaN', { damagePercentBp: Number.NaN }, '$.damagePercentBp', 'finite'],
    ['Infinity', { a: [1, Number.POSITIVE_INFINITY] }, '$.a[1]', 'finite'],
    ['a lone surrogate in a value', { policyNumber: 'POL-\ud800' }, '$.policyNumber', 'lone surrogate'],
    ['a lone surrogate in a name', { '\udc00x': 1 }, '"\\udc00x"', 'lone surrogate'],
    ['undefined', { a: { b: undefined } }, '$.a.b', 'undefined'],
    ['a bigint', { amountMinor: 12n }, '$.amountMinor', 'bigint'],
    ['a function', { f: () => 1 }, '$.f', 'function'],
    ['a Date', { at: new Date(0) }, '$.at', 'Date'],
    ['a sparse array', { a: Object.assign(new Array<number>(3), { 0: 1, 2: 3 }) }, '$.a[1]', 'hole'],
  ])('refuses %s, saying where', (_name, value, path, problem) => {
    let error: unknown;
    try {
      canonicalJson(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CanonicalizationError);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain(problem);
  });

  it('refuses a cycle', () => {
    const a: Record<string, unknown> = {};
    a.self = { a };
    expect(() => canonicalJson(a)).toThrow(/\$\.self\.a.*cycle/);
  });

  it('accepts the same object twice when it is not its own ancestor', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('accepts objects without a prototype (as some parsers build them)', () => {
    const bare = Object.assign(Object.create(null), { b: 1, a: 2 });
    expect(canonicalJson(bare)).toBe('{"a":2,"b":1}');
  });
});

describe('evidenceHash', () => {
  it('is the lowercase hex SHA-256 of the canonical JSON, whatever the member order', () => {
    const hash = evidenceHash({ b: [true, null], a: 1 });
    expect(hash).toBe(createHash('sha256').update('{"a":1,"b":[true,null]}').digest('hex'));
    expect(hash).toBe(evidenceHash({ a: 1, b: [true, null] }));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses an array or null as evidence', () => {
    expect(() => evidenceHash([] as object)).toThrow(CanonicalizationError);
    expect(() => evidenceHash(null as unknown as object)).toThrow(CanonicalizationError);
  });
});

describe('jwkThumbprint (RFC 7638)', () => {
  it('gives the RFC 8037 appendix A.3 thumbprint of its Ed25519 example key', () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };
    expect(jwkThumbprint(jwk)).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  it('ignores members outside the required set (kid, use, alg)', () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };
    expect(jwkThumbprint({ ...jwk, kid: 'whatever', use: 'sig', alg: 'Ed25519' })).toBe(jwkThumbprint(jwk));
  });

  it('refuses an unknown key type or a missing member', () => {
    expect(() => jwkThumbprint({ kty: 'XYZ' })).toThrow(/kty/);
    expect(() => jwkThumbprint({ kty: 'OKP', crv: 'Ed25519' })).toThrow(/"x"/);
  });
});
