// Deploys PolicyRegistry for an environment, idempotently. Run from the repo root (or /app in
// the service images):
//
//   CHAIN_RPC_URL=https://... CHAIN_PRIVATE_KEY=0x... [CHAIN_REGISTRY_ADDRESS=0x...] \
//     node --import tsx libs/chain/scripts/deploy-registry.ts
//
// CHAIN_PRIVATE_KEY's account becomes the registry's owner (immutable: the only account that can
// ever register policies), so it must be the key the policy service is given. With
// CHAIN_REGISTRY_ADDRESS set: a PolicyRegistry already there, owned by that account, is kept
// (exit 0, nothing sent); otherwise the script deploys only if the deployment lands at exactly
// that address (a fresh dev chain: anvil's account 0 at nonce 0 gives 0x5FbDB231...), and fails
// (exit 1) before sending anything when it would not. It waits up to CHAIN_WAIT_MS (60 s) for the
// RPC to answer. The address alone goes to stdout, everything else to stderr; neither the key nor
// the RPC URL's path or credentials (hosted providers put API keys there) are ever printed.
import { createPublicClient, getAddress, getContractAddress, type Hex, http, isAddressEqual } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import { deployRegistry, inspectRegistry, localDevPrivateKey } from '../src';

// The rules of the policy service's config (services/policy/src/config.ts) for these variables.
const envSchema = z.object({
  NODE_ENV: z.string().optional(),
  CHAIN_RPC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  CHAIN_PRIVATE_KEY: z
    .string({ error: 'must be set' })
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key')
    .transform((v) => v as Hex),
  CHAIN_REGISTRY_ADDRESS: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
      .transform((v) => v as Hex)
      .optional(),
  ),
  CHAIN_WAIT_MS: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int().positive().default(60_000),
  ),
});

type Env = z.infer<typeof envSchema>;

class Refused extends Error {}

const info = (message: string) => process.stderr.write(`deploy-registry: ${message}\n`);

function parseEnv(env: NodeJS.ProcessEnv): Env {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    // Issue messages only: zod's issues do not carry the rejected value, so a key is never echoed.
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`);
    throw new Refused(`invalid environment: ${problems.join('; ')}`);
  }
  const devKeys = Array.from({ length: 10 }, (_, i) => localDevPrivateKey(i).toLowerCase());
  if (
    parsed.data.NODE_ENV === 'production' &&
    devKeys.includes(parsed.data.CHAIN_PRIVATE_KEY.toLowerCase())
  ) {
    throw new Refused(
      'CHAIN_PRIVATE_KEY is a public anvil development key; it must not own a production registry',
    );
  }
  return parsed.data;
}

/** Scheme and host only: hosted RPC URLs carry API keys in the path or userinfo. */
function redactUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname.length > 1 || u.search ? '/***' : ''}`;
}

/** A failure's short reason with the RPC URL (and the key, should it appear) blotted out. */
function safeReason(err: unknown, env: Env): string {
  const e = err as { shortMessage?: unknown; message?: unknown };
  const raw = String(typeof e?.shortMessage === 'string' ? e.shortMessage : (e?.message ?? err));
  return raw
    .split(env.CHAIN_RPC_URL)
    .join(redactUrl(env.CHAIN_RPC_URL))
    .split(env.CHAIN_PRIVATE_KEY)
    .join('0x***')
    .split(env.CHAIN_PRIVATE_KEY.slice(2))
    .join('***');
}

async function waitForChain(
  reader: ReturnType<typeof createPublicClient>,
  env: Env,
  where: string,
): Promise<number> {
  const deadline = Date.now() + env.CHAIN_WAIT_MS;
  let lastReason = 'no answer';
  for (;;) {
    try {
      return await reader.getChainId();
    } catch (err) {
      lastReason = safeReason(err, env);
    }
    if (Date.now() >= deadline) {
      throw new Refused(
        `the RPC at ${where} did not answer eth_chainId within ${env.CHAIN_WAIT_MS} ms (${lastReason})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function main(): Promise<string> {
  const env = parseEnv(process.env);
  const where = redactUrl(env.CHAIN_RPC_URL);
  const account = privateKeyToAccount(env.CHAIN_PRIVATE_KEY);
  const expected = env.CHAIN_REGISTRY_ADDRESS;
  const reader = createPublicClient({
    transport: http(env.CHAIN_RPC_URL, { timeout: 5_000, retryCount: 0 }),
  });

  const chainId = await waitForChain(reader, env, where);
  info(`chain ${chainId} at ${where}, deployer (registry owner) ${account.address}`);

  if (expected) {
    const { found, owner } = await inspectRegistry(reader, expected, account.address);
    if (found === 'not-a-registry') {
      throw new Refused(`${expected} holds a contract that is not a PolicyRegistry (no owner())`);
    }
    if (found === 'other-owner') {
      throw new Refused(
        `the PolicyRegistry at ${expected} is owned by ${owner}, not by CHAIN_PRIVATE_KEY's account ${account.address}: the policy service could not register with this key`,
      );
    }
    if (found === 'ok') {
      info(`PolicyRegistry already deployed at ${expected}, owned by ${account.address}; nothing sent`);
      return getAddress(expected);
    }
  }

  // A contract's address follows from its deployer and nonce: with an expected address, refuse
  // before spending gas on a registry nobody is configured to use.
  const nonce = await reader.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const predicted = getContractAddress({ from: account.address, nonce: BigInt(nonce) });
  if (expected && !isAddressEqual(predicted, expected)) {
    throw new Refused(
      `no contract at CHAIN_REGISTRY_ADDRESS ${expected}, and a deployment from ${account.address} (nonce ${nonce}) would create ${predicted}; nothing sent. Unset CHAIN_REGISTRY_ADDRESS to deploy a new registry, then configure its address`,
    );
  }

  // The deployment lands in a later block than this one: a safe CHAIN_REGISTRY_FROM_BLOCK.
  const before = await reader.getBlockNumber();
  let address: Hex;
  try {
    // Checksummed, as printed everywhere (the receipt gives it in lower case).
    address = getAddress(await deployRegistry(env.CHAIN_RPC_URL, env.CHAIN_PRIVATE_KEY));
  } catch (err) {
    throw new Refused(
      `deployment failed (${safeReason(err, env)}). If its transaction was sent it may still land at ${predicted}: re-run with CHAIN_REGISTRY_ADDRESS=${predicted} (nothing is sent again once it is there)`,
    );
  }
  if (expected && !isAddressEqual(address, expected)) {
    throw new Refused(
      `PolicyRegistry was deployed at ${address}, not at CHAIN_REGISTRY_ADDRESS ${expected} (another transaction from ${account.address} came first); configure ${address} or redeploy`,
    );
  }
  info(`PolicyRegistry deployed at ${address}, owned by ${account.address}`);
  info(`policy service settings: CHAIN_REGISTRY_ADDRESS=${address} CHAIN_REGISTRY_FROM_BLOCK=${before + 1n}`);
  return address;
}

main().then(
  (address) => {
    process.stdout.write(`${address}\n`);
  },
  (err: unknown) => {
    // Past parseEnv, so the environment parses; the fallback only guards against a bug here.
    const env = envSchema.safeParse(process.env);
    let reason = 'unexpected error';
    if (err instanceof Refused) reason = err.message;
    else if (env.success) reason = safeReason(err, env.data);
    info(`FAILED: ${reason}`);
    process.exitCode = 1;
  },
);
