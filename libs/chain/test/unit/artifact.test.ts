import { compilePolicyRegistry } from '../../src/compile';
import { policyRegistryAbi, policyRegistryBytecode } from '../../src/generated/policy-registry';
import { canonicalJson, termsHashOf } from '../../src/registry-client';

describe('PolicyRegistry artifact', () => {
  it('matches a fresh compile of contracts/PolicyRegistry.sol (run scripts/compile.ts if not)', () => {
    const fresh = compilePolicyRegistry();
    expect(policyRegistryAbi).toEqual(fresh.abi);
    expect(policyRegistryBytecode).toBe(fresh.bytecode);
  });
});

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(termsHashOf({ x: 1, y: 2 })).toBe(termsHashOf({ y: 2, x: 1 }));
    expect(termsHashOf({ x: 1, y: 2 })).not.toBe(termsHashOf({ x: 1, y: 3 }));
  });
});
