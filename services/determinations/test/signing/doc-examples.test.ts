import { spawnSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SIGNED_FIELDS, verifyDetermination, verifyEvidence } from '@parametric/determination-verify';
import { applyBasisPoints, exponentOf, formatMinor, parseMinor } from '@parametric/money';
import {
  canonicalDeterminationBytes,
  evidenceHash,
  generateSigningKeyPem,
  loadSigningKeys,
  publishedKeySet,
  type SignedDeterminationPayload,
  type SigningKeys,
  signDetermination,
} from '../../src/signing';

/**
 * docs/determinations.md shows partners how to verify a determination with nothing but the
 * JWKS, in Node.js, Python and OpenSSL. These tests run those very code blocks against records
 * the service signs, genuine and tampered, and verify the doc's own example record, so the
 * docs cannot drift from what the service does.
 */
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const DOC = readFileSync(path.join(REPO_ROOT, 'docs', 'determinations.md'), 'utf8');

function blocks(language: string): string[] {
  return [...DOC.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)]
    .filter((m) => m[1] === language)
    .map((m) => m[2] as string);
}
function only<T>(found: T[], what: string): T {
  if (found.length !== 1)
    throw new Error(`docs/determinations.md should have exactly one ${what} (has ${found.length})`);
  return found[0] as T;
}

const NODE = only(blocks('js'), 'js block');
const PYTHON = only(blocks('python'), 'python block');
const OPENSSL = only(
  blocks('bash').filter((b) => b.includes('openssl pkeyutl')),
  'bash block with openssl pkeyutl',
);
const json = blocks('json').map((b) => JSON.parse(b) as Record<string, unknown>);
const EXAMPLE_RECORD = only(
  json.filter((b) => typeof (b.data as { canonicalPayload?: unknown })?.canonicalPayload === 'string'),
  'example record',
);
const EXAMPLE_JWKS = only(
  json.filter((b) => Array.isArray(b.keys)),
  'example JWKS',
);
const EXAMPLE_EVIDENCE = only(
  json.filter((b) => typeof (b.data as { evidence?: unknown })?.evidence === 'object'),
  'example evidence',
);

/** The string literals of the signed-field list in a code block. */
function listedFields(code: string, start: RegExp): string[] {
  const from = code.search(start);
  const list = code.slice(from, code.indexOf(']', from));
  return [...list.matchAll(/["']([A-Za-z]+)["']/g)].map((m) => m[1] as string);
}

describe('docs/determinations.md', () => {
  it('lists exactly the signed fields, in each example and in the signed-fields table', () => {
    expect(listedFields(NODE, /const SIGNED_FIELDS = \[/)).toEqual([...SIGNED_FIELDS]);
    expect(listedFields(PYTHON, /SIGNED_FIELDS = \[/)).toEqual([...SIGNED_FIELDS]);
    expect(listedFields(OPENSSL, /\| \["determinationId"/)).toEqual([...SIGNED_FIELDS]);
    const table = DOC.slice(DOC.indexOf('### Signed fields'), DOC.indexOf('### Read-only fields'));
    expect([...table.matchAll(/^\| `([A-Za-z]+)`/gm)].map((m) => m[1])).toEqual([...SIGNED_FIELDS]);
  });

  it('has an example record that verifies against its example JWKS, and evidence that matches it', () => {
    const kid = (EXAMPLE_RECORD.data as { kid: string }).kid;
    expect(verifyDetermination(EXAMPLE_RECORD, EXAMPLE_JWKS)).toEqual({ valid: true, kid, sandbox: false });
    const evidence = (EXAMPLE_EVIDENCE.data as { evidence: object }).evidence;
    expect(verifyEvidence(evidence, EXAMPLE_RECORD)).toMatchObject({ valid: true });
    expect(DOC).toContain(`# valid: signed by ${kid}`);
  });

  it('has an example the service canonicalises to the same bytes (it follows the signing rules)', () => {
    const data = EXAMPLE_RECORD.data as Record<string, unknown>;
    const payload = Object.fromEntries(
      SIGNED_FIELDS.filter((f) => f in data).map((f) => [f, data[f]]),
    ) as SignedDeterminationPayload;
    expect(Buffer.from(canonicalDeterminationBytes(payload)).toString('utf8')).toBe(data.canonicalPayload);
  });

  it('computes the amounts of its table as the platform does: sumInsured × bp / 10000, truncated', () => {
    const rows = [
      ...DOC.matchAll(/^ *\| ([A-Z]{3}) ([\d,.]+) *\| (\d+) bp *\|[^|]*\| `"(\d+)"` *\| `"([\d.]+)"` *\|$/gm),
    ];
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const [, currency, sumInsured, bp, amountMinor, amount] of rows) {
      const exponent = exponentOf(currency as string) as number;
      const owed = applyBasisPoints(
        parseMinor((sumInsured as string).replace(/,/g, ''), exponent),
        Number(bp),
        'TRUNCATE',
      );
      expect([owed.toString(), formatMinor(owed, exponent)]).toEqual([amountMinor, amount]);
    }
  });
});

describe('the verification examples of docs/determinations.md, run', () => {
  let dir: string;
  let retiredKeys: SigningKeys;
  let keys: SigningKeys;
  let evidence: Record<string, unknown>;
  const files: Record<string, string> = {};

  const tier1 = (): SignedDeterminationPayload => ({
    determinationId: '3c9a6b1e-5d2f-4e8a-9b7c-1d2e3f4a5b6c',
    policyId: '8e7d6c5b-4a39-4281-9f0e-d1c2b3a49586',
    policyNumber: 'POL-GH-2026-004242',
    kind: 'CROP_DAMAGE',
    methodologyVersion: 'emodis-ndvi-anomaly/3.0.1',
    triggered: true,
    damagePercentBp: 7250,
    assessedAt: '2026-11-21T06:30:00.000Z',
    settlementMode: 'DETERMINATION',
    settledByMicrocrop: false,
    amountOwed: {
      amountMinor: '89506',
      amount: '895.06',
      currency: 'GHS',
      exponent: 2,
      damagePercentBp: 7250,
      basis: 'sumInsured × damagePercentBp / 10000, truncated to the minor unit',
    },
    evidenceHash: evidenceHash(evidence),
  });
  const tier2 = (): SignedDeterminationPayload => ({
    ...tier1(),
    kind: 'LIVESTOCK_MORTALITY_INDEX',
    settlementMode: 'DETERMINATION_AND_SETTLEMENT',
    settledByMicrocrop: true,
    amountOwed: null,
    amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
  });

  /** A response of GET /api/determinations/{id}, written to a file. */
  function writeRecord(name: string, payload: SignedDeterminationPayload, signer: SigningKeys, edit = {}) {
    const data = {
      ...payload,
      ...signDetermination(payload, signer),
      issuedAt: '2026-11-21T06:30:01.000Z',
      partnerSettlementStatus: 'PENDING',
      dueAt: '2026-12-21T06:30:01.000Z',
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
      links: { self: `/api/determinations/${payload.determinationId}` },
      ...edit,
    };
    files[name] = path.join(dir, `${name}.json`);
    writeFileSync(files[name] as string, JSON.stringify({ success: true, data }, null, 2));
    return data;
  }

  function writeJson(name: string, value: unknown) {
    files[name] = path.join(dir, `${name}.json`);
    writeFileSync(files[name] as string, JSON.stringify(value));
  }

  beforeAll(() => {
    // Under the repository, so that the Node example resolves jose and canonicalize.
    mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
    dir = mkdtempSync(path.join(REPO_ROOT, '.tmp', 'determination-doc-examples-'));
    writeFileSync(path.join(dir, 'verify.mjs'), NODE);
    writeFileSync(path.join(dir, 'verify.py'), PYTHON);
    writeFileSync(path.join(dir, 'verify.sh'), OPENSSL);

    const retiredPem = generateSigningKeyPem();
    const activePem = generateSigningKeyPem();
    retiredKeys = loadSigningKeys(retiredPem);
    // The retired key published as its public half, as after a rotation.
    const retiredPublic = createPublicKey(retiredPem).export({ format: 'pem', type: 'spki' }) as string;
    keys = loadSigningKeys(`${activePem}${retiredPublic}`);
    writeJson('jwks', keys.jwks);

    evidence = {
      indexName: 'NDVI anomaly',
      indexValue: -0.318,
      triggerThreshold: -0.1,
      exitThreshold: -0.4,
      dataSource: 'eMODIS NDVI',
      dataSourceVersion: 'C6',
      periodStart: '2026-09-01T00:00:00Z',
      periodEnd: '2026-11-10T23:59:59Z',
      inputDataHashes: [{ name: 'emodis-2026-d25-d31.tif', sha256: 'e'.repeat(64) }],
      notes: 'Ɔfankor district, “late rains”',
    };
    writeJson('evidence', { success: true, data: { determinationId: tier1().determinationId, evidence } });
    writeJson('other-evidence', {
      success: true,
      data: { determinationId: tier1().determinationId, evidence: { ...evidence, indexValue: -0.319 } },
    });

    writeRecord('tier1', tier1(), keys);
    writeRecord('tier2', tier2(), keys);
    writeRecord('by-retired-key', tier1(), retiredKeys);
    writeRecord('damage-tampered', tier1(), keys, { damagePercentBp: 10000 });
    writeRecord('amount-tampered', tier1(), keys, {
      amountOwed: { ...tier1().amountOwed, amountMinor: '895060', amount: '8950.60' },
    });
    writeRecord('reason-added', tier1(), keys, {
      amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
    });
    writeRecord('settled-flag-tampered', tier2(), keys, { settledByMicrocrop: false });
    const genuine = signDetermination(tier1(), keys);
    const signature = Buffer.from(genuine.signature, 'base64url');
    signature[0] = (signature[0] as number) ^ 0x01;
    writeRecord('signature-tampered', tier1(), keys, { signature: signature.toString('base64url') });
    writeRecord('hash-tampered', tier1(), keys, { canonicalHash: 'f'.repeat(64) });

    const unknown = loadSigningKeys(generateSigningKeyPem());
    writeRecord('unknown-kid', tier1(), unknown);
    // A JWKS where someone listed their own key under our kid, with a record they signed.
    writeRecord('impostor', tier1(), unknown, { kid: keys.activeKid });
    writeJson('impostor-jwks', { keys: [{ ...unknown.jwks.keys[0], kid: keys.activeKid }] });
    // A sandbox organization's test determination, and the set with the sandbox key, marked.
    const sandbox = loadSigningKeys(generateSigningKeyPem(), 'sandbox');
    writeRecord('sandbox', tier1(), sandbox);
    writeJson('sandbox-jwks', publishedKeySet(keys, sandbox));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const examples: Array<[string, (record: string, jwks: string, evidence?: string) => string[]]> = [
    ['Node.js', (r, j, e) => [process.execPath, path.join(dir, 'verify.mjs'), r, j, ...(e ? [e] : [])]],
    ['Python', (r, j) => ['python3', path.join(dir, 'verify.py'), r, j]],
    ['OpenSSL', (r, j) => ['bash', path.join(dir, 'verify.sh'), r, j]],
  ];

  function run(command: string[]) {
    const out = spawnSync(command[0] as string, command.slice(1), { cwd: dir, encoding: 'utf8' });
    if (out.error) throw new Error(`cannot run ${command[0]}: ${out.error.message}`);
    return { code: out.status, stdout: out.stdout, stderr: out.stderr };
  }

  describe.each(examples)('%s', (_name, command) => {
    it.each([
      ['a Tier 1 record', 'tier1'],
      ['a Tier 2 record', 'tier2'],
    ])('accepts %s signed by the active key', (_what, name) => {
      expect(run(command(files[name] as string, files.jwks as string))).toEqual({
        code: 0,
        stdout: `valid: signed by ${keys.activeKid}\n`,
        stderr: '',
      });
    });

    it('accepts a record signed by a retired key that the JWKS still lists', () => {
      expect(run(command(files['by-retired-key'] as string, files.jwks as string))).toEqual({
        code: 0,
        stdout: `valid: signed by ${retiredKeys.activeKid}\n`,
        stderr: '',
      });
    });

    it.each([
      ['a damagePercentBp changed in the record', 'damage-tampered', 'jwks', /damagePercentBp|field differs/],
      ['an amountOwed changed in the record', 'amount-tampered', 'jwks', /amountOwed|field differs/],
      [
        'an unsigned amountOwedUnavailableReason added',
        'reason-added',
        'jwks',
        /amountOwedUnavailableReason|field differs/,
      ],
      [
        'a Tier 2 settledByMicrocrop changed',
        'settled-flag-tampered',
        'jwks',
        /settledByMicrocrop|field differs/,
      ],
      ['a signature with one bit flipped', 'signature-tampered', 'jwks', /bad signature/],
      ['a changed canonicalHash', 'hash-tampered', 'jwks', /canonicalHash/],
      ['a kid the JWKS does not list', 'unknown-kid', 'jwks', /no Ed25519 key/],
      ['a sandbox test determination', 'sandbox', 'sandbox-jwks', /is a sandbox key/],
      [
        'a JWKS entry whose kid is not its thumbprint',
        'impostor',
        'impostor-jwks',
        /not the one its kid names/,
      ],
    ])('rejects %s', (_what, record, jwks, reason) => {
      const out = run(command(files[record] as string, files[jwks] as string));
      expect(out.code).toBe(1);
      expect(out.stdout).toMatch(/^invalid: /);
      expect(out.stdout).toMatch(reason);
    });
  });

  it('Node.js also checks the evidence against the signed evidenceHash', () => {
    const node = examples[0]?.[1] as (r: string, j: string, e?: string) => string[];
    expect(run(node(files.tier1 as string, files.jwks as string, files.evidence)).stdout).toBe(
      `valid: signed by ${keys.activeKid}\n`,
    );
    const other = run(node(files.tier1 as string, files.jwks as string, files['other-evidence']));
    expect(other.code).toBe(1);
    expect(other.stdout).toBe('invalid: the evidence is not the evidence that was signed\n');
  });
});
