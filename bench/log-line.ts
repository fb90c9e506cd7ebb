/**
 * What one request's completion line costs the process that writes it: this process's CPU per
 * line for the platform's logger (libs/logger: secrets hidden by one walk of the object,
 * redact.ts), against pino with no redaction at all (the baseline) and pino with the redaction
 * paths the logger had before (83 of them, a secret field at four depths and seven header paths).
 * The line is a policy read's as the policy service wrote it before its headers were a named few
 * (libs/http/src/request-log.ts): an internal hop's headers, signed context included. Lines go to
 * a destination that only counts their bytes, so the figure is building and serializing the
 * line, not writing it. The loggers take turns in rounds, each round starting with the next, the
 * first round not counted (warm-up); each figure is the median of the others.
 *
 *   npm run bench:log
 *   BENCH_LINES=20000 npm run bench:log
 */
import { CENSOR, createLogger, SECRET_FIELDS } from '@parametric/logger';
import pino from 'pino';
import { type BenchFigure, median, report } from './support/run';

const LINES = Number(process.env.BENCH_LINES ?? 50_000);
const ROUNDS = 7;

const PATHS_BEFORE = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-internal-signature"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers["x-api-key"]',
  'headers.authorization',
  ...[...SECRET_FIELDS].flatMap((f) => [f, `*.${f}`, `*.*.${f}`, `*.*.*.${f}`]),
];

const id = '3f1c2b9e-8d4a-4e1b-9c7d-2a6b5e4f3d21';
const line = {
  reqId: id,
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  req: {
    id,
    method: 'GET',
    url: '/api/policies/0c9e6d4b-2f0a-4b1e-9d35-2b3e6a7f8c91',
    headers: {
      host: '127.0.0.1:3001',
      connection: 'keep-alive',
      accept: 'application/json',
      'x-request-id': id,
      'x-internal-context': Buffer.from(
        JSON.stringify({
          organizationId: '0c9e6d4b-2f0a-4b1e-9d35-2b3e6a7f8c91',
          role: 'ORG_ADMIN',
          requestId: id,
          issuedAt: 1764445555555,
          organization: { countryCode: 'KE', kybStatus: 'APPROVED', serviceTier: 'TIER_1', isActive: true },
        }),
      ).toString('base64url'),
      'x-internal-signature': 'a'.repeat(64),
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    },
    remoteAddress: '127.0.0.1',
    remotePort: 51234,
  },
  res: {
    statusCode: 200,
    headers: {
      'x-request-id': id,
      'content-type': 'application/json; charset=utf-8',
      'content-length': '812',
    },
  },
  responseTime: 1,
};

let bytes = 0;
const counting = {
  write(chunk: string) {
    bytes += chunk.length;
  },
} as unknown as pino.DestinationStream;

const NO_REDACTION = 'no redaction';
const PLATFORM = 'the platform (one walk)';
const PATHS = "pino's redact, the paths before";
const loggers: Record<string, pino.Logger> = {
  [NO_REDACTION]: pino({ base: { service: 'policy' }, timestamp: pino.stdTimeFunctions.isoTime }, counting),
  [PLATFORM]: createLogger({ name: 'policy', destination: counting }),
  [PATHS]: pino(
    {
      base: { service: 'policy' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: PATHS_BEFORE, censor: CENSOR },
    },
    counting,
  ),
};

function cpuPerLine(logger: pino.Logger): number {
  const before = process.cpuUsage();
  for (let i = 0; i < LINES; i++) logger.info(line, 'request completed');
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / LINES;
}

function main(): void {
  const names = Object.keys(loggers);
  const samples = new Map<string, number[]>(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length] as string;
      const cpu = cpuPerLine(loggers[name] as pino.Logger);
      if (round > 0) samples.get(name)?.push(cpu);
    }
  }
  if (bytes === 0) throw new Error('no line was written');
  const medians = new Map(names.map((name) => [name, median(samples.get(name) ?? [])]));
  console.log(
    `\nOne completion line (a policy read's, headers included), ${LINES.toLocaleString('en')} a round, median of ${ROUNDS - 1} rounds:`,
  );
  for (const [name, cpu] of medians) console.log(`  ${name.padEnd(34)} ${cpu.toFixed(2)} µs of CPU a line`);
  const bare = medians.get(NO_REDACTION) as number;
  const ours = medians.get(PLATFORM) as number;
  const before = medians.get(PATHS) as number;
  const figures: BenchFigure[] = [
    {
      benchmark: 'log',
      figure:
        "one request's completion line: the platform's logger (secrets hidden by one walk) vs pino with no redaction",
      value: ours,
      unit: 'µs/line',
      baseline: bare,
      ratio: ours / bare,
    },
    {
      benchmark: 'log',
      figure:
        "one request's completion line: pino's redact with the paths the logger had before vs pino with no redaction",
      value: before,
      unit: 'µs/line',
      baseline: bare,
      ratio: before / bare,
    },
  ];
  report(figures);
}

main();
