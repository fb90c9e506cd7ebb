import type { Readable } from 'node:stream';
import pinoPretty from 'pino-pretty';

/**
 * How `npm start` shows its services' logs: through pino-pretty, one readable line each, when its
 * output is a terminal (or LOG_FORMAT=pretty); the JSON lines as the services write them
 * otherwise (LOG_FORMAT=json, or output to a file or a pipe), as in containers, which never run
 * this script.
 */
export function logFormat(env: NodeJS.ProcessEnv, isTty: boolean): 'pretty' | 'json' {
  if (env.LOG_FORMAT === 'pretty' || env.LOG_FORMAT === 'json') return env.LOG_FORMAT;
  if (env.LOG_FORMAT) throw new Error(`LOG_FORMAT must be pretty or json, not ${env.LOG_FORMAT}`);
  return isTty ? 'pretty' : 'json';
}

interface LogLine {
  service?: string;
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/** `gateway GET /api/policies/… 201 12 ms`, or `policy <message>`. */
function message(log: Record<string, unknown>): string {
  const line = log as LogLine;
  const who = line.service ?? '';
  if (line.req?.method && line.res?.statusCode !== undefined) {
    return `${who} ${line.req.method} ${line.req.url ?? ''} ${line.res.statusCode} ${line.responseTime ?? '?'} ms (${line.msg ?? ''})`;
  }
  return `${who} ${line.msg ?? ''}`;
}

/** Pipes a service's output to ours, one readable line per log line (other lines as they are). */
export function prettyInto(output: Readable, colorize: boolean): void {
  const pretty = pinoPretty({
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,name,req,res,responseTime',
    messageFormat: (log) => message(log),
    destination: 1,
    sync: true,
  });
  output.pipe(pretty);
}
