import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { verifyDetermination } from './verify';

/**
 * `determination-verify <file|url> --jwks <file|url> [--json]`: verifies one signed
 * determination against the platform's JWKS. Exit 0 valid, 1 invalid, 2 usage or read error.
 */
const USAGE = `Usage: determination-verify <record file|url|-> --jwks <file|url> [--json] [--sandbox] [--timeout S]
Verifies a signed determination (the response of GET /api/determinations/{id}, or its data)
against the platform's public keys (GET /api/.well-known/jwks.json).
  --jwks F|URL   the JWKS, a file or an http(s) URL (required)
  --json         print the result as JSON: {"valid":true,"kid":...} or {"valid":false,"code":...,"reason":...}
  --sandbox      also accept a sandbox organization's test determination (a key the JWKS marks
                 "environment": "sandbox"); refused otherwise, as live code should
  --timeout S    seconds to wait for each URL (default 10)
A record of "-" is read from standard input. When PARTNER_API_KEY is set it is sent as
x-api-key with the record URL only (never with the JWKS URL).
Exit status: 0 valid, 1 invalid, 2 usage or read error.`;

const MAX_BYTES = 10 * 1024 * 1024;

interface CliOptions {
  record: string;
  jwks: string;
  json: boolean;
  sandbox: boolean;
  timeoutMs: number;
}

class ReadError extends Error {}

function usageError(message: string): never {
  process.stderr.write(`determination-verify: ${message}\n${USAGE}\n`);
  process.exit(2);
}

const API_KEY_REFUSED =
  'the API key is read from the environment (PARTNER_API_KEY), never from the command line';

/** parseArgs' errors, worded as this command words them. */
function parseError(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const option = /'(-[^' ,]*)/.exec(message)?.[1];
  if (option === '--api-key') return API_KEY_REFUSED;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(message)) return `${option} takes no value`;
      // Also `--timeout -5`: parseArgs takes a value starting with '-' for a forgotten one.
      return `${option} needs a value${/ambiguous/.test(message) ? ` (one starting with '-' goes as ${option}=VALUE)` : ''}`;
    default:
      throw error;
  }
}

function parse(argv: string[]): CliOptions {
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    usageError(parseError(error));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  // Declared only to be refused: a key on the command line ends up in shell history and `ps`.
  if (values['api-key'] !== undefined) usageError(API_KEY_REFUSED);
  for (const flag of ['jwks', 'timeout'] as const) {
    if (values[flag] === '') usageError(`--${flag} needs a value`);
  }
  let timeoutMs = 10_000;
  if (values.timeout !== undefined) {
    const raw = values.timeout;
    const seconds = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw) || seconds <= 0 || seconds > 600) {
      usageError(`invalid --timeout ${raw} (seconds, more than 0 and at most 600)`);
    }
    timeoutMs = Math.round(seconds * 1000);
  }
  if (positionals.length === 0) usageError('which determination? Give a file or URL');
  if (positionals.length > 1) usageError(`one determination at a time (got ${positionals.length})`);
  if (!values.jwks) usageError('--jwks is required');
  return {
    record: positionals[0] as string,
    jwks: values.jwks,
    json: values.json === true,
    sandbox: values.sandbox === true,
    timeoutMs,
  };
}

function parseCommandLine(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      jwks: { type: 'string' },
      json: { type: 'boolean' },
      sandbox: { type: 'boolean' },
      timeout: { type: 'string' },
      'api-key': { type: 'string' },
    },
  });
}

const isUrl = (source: string) => /^https?:\/\//i.test(source);

async function readBody(response: Response, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_BYTES) throw new ReadError(`${what} is larger than ${MAX_BYTES} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      size += chunk.byteLength;
      if (size > MAX_BYTES) throw new ReadError(`${what} is larger than ${MAX_BYTES} bytes`);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** "401 UNAUTHORIZED: Invalid API key" from the API's error envelope, when there is one. */
function errorSummary(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = parsed.error ?? {};
    if (typeof code === 'string') return typeof message === 'string' ? ` ${code}: ${message}` : ` ${code}`;
  } catch {}
  return '';
}

async function fetchText(
  url: string,
  what: string,
  apiKey: string | undefined,
  timeoutMs: number,
  cancel: AbortSignal,
) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (apiKey) headers['x-api-key'] = apiKey;
  try {
    // With a key attached, redirects are not followed: fetch would carry x-api-key to wherever
    // the redirect points.
    const response = await fetch(url, {
      headers,
      redirect: apiKey ? 'manual' : 'follow',
      signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), cancel]),
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const location = response.headers.get('location') ?? '(no location)';
      throw new ReadError(
        `${what} ${url} redirects to ${location}; not following it with PARTNER_API_KEY (give the final URL)`,
      );
    }
    const body = await readBody(response, `${what} ${url}`);
    if (!response.ok) {
      const hint = response.status === 401 && !apiKey ? ' (set PARTNER_API_KEY)' : '';
      throw new ReadError(`${what} ${url} answered ${response.status}${errorSummary(body)}${hint}`);
    }
    return body;
  } catch (error) {
    if (error instanceof ReadError) throw error;
    const e = error as Error & { cause?: { code?: string; message?: string } };
    if (cancel.aborted) throw new ReadError(`${what} ${url}: cancelled`);
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      throw new ReadError(`${what} ${url} did not answer within ${timeoutMs / 1000} s`);
    }
    throw new ReadError(`cannot fetch ${what} ${url}: ${e.cause?.code ?? e.cause?.message ?? e.message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

interface ReadOptions {
  apiKey: string | undefined;
  timeoutMs: number;
  /** Aborted when the other read failed: nothing left to wait for. */
  cancel: AbortSignal;
}

async function readJson(source: string, what: string, { apiKey, timeoutMs, cancel }: ReadOptions) {
  let text: string;
  if (isUrl(source)) {
    text = await fetchText(source, what, apiKey, timeoutMs, cancel);
  } else if (source === '-') {
    text = await readStdin();
  } else {
    try {
      text = await readFile(source, 'utf8');
    } catch (error) {
      throw new ReadError(`cannot read ${what} ${source}: ${(error as NodeJS.ErrnoException).code ?? error}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ReadError(`${what} ${source === '-' ? 'on standard input' : source} is not JSON`);
  }
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const apiKey = process.env.PARTNER_API_KEY || undefined;
  const cancel = new AbortController();
  const read = (source: string, what: string, key: string | undefined) =>
    readJson(source, what, { apiKey: key, timeoutMs: options.timeoutMs, cancel: cancel.signal }).catch(
      (error: unknown) => {
        cancel.abort();
        throw error;
      },
    );
  let record: unknown;
  let jwks: unknown;
  try {
    // The JWKS is public: the key goes with the record request only.
    [record, jwks] = await Promise.all([
      read(options.record, 'record', apiKey),
      read(options.jwks, 'JWKS', undefined),
    ]);
  } catch (error) {
    if (!(error instanceof ReadError)) throw error;
    process.stderr.write(`determination-verify: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
  const result = verifyDetermination(record, jwks, { acceptSandbox: options.sandbox });
  if (options.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    process.stdout.write(
      result.valid
        ? `valid: signed by ${result.kid}${result.sandbox ? ' (a sandbox key: a test determination)' : ''}\n`
        : `invalid: ${result.reason}\n`,
    );
  }
  process.exitCode = result.valid ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`determination-verify: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 2;
});
