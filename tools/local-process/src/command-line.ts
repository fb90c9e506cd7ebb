import { type ParseArgsConfig, parseArgs } from 'node:util';

type StringOptions<F extends string> = Record<F, { type: 'string' }>;

export interface CommandLine {
  /** Prints `<name>: <message>` and the usage to stderr, exits 2 (a usage error). */
  fail(message: string): never;
  /**
   * Parses `argv` strictly with string options `flags` and `-h/--help`; `--help` prints the
   * usage and exits 0, an unknown option, a missing value or an empty one (`--port ''`) fails.
   * `onError` may word a parse error its own way (it fails) before the common wording applies.
   */
  parse<F extends string>(
    argv: string[],
    flags: readonly F[],
    onError?: (error: Error) => void,
  ): Partial<Record<F, string>>;
  /** A port, 0 (any free one) to 65535. */
  port(raw: string): number;
  /** Starts the server or exits 1 with the address it could not listen on. */
  listen<T>(address: { host: string; port: number }, start: () => Promise<T>): Promise<T>;
  /** Closes the server once on SIGINT or SIGTERM, then exits 0. */
  closeOnSignal(close: () => Promise<unknown>): void;
}

/**
 * What every local stand-in's command line does alike (tools/*-simulator, tools/webhook-receiver):
 * the same wording for the same mistakes, the same exit codes, the same stop.
 */
export function commandLine(name: string, usage: string): CommandLine {
  const fail = (message: string): never => {
    process.stderr.write(`${name}: ${message}\n${usage}\n`);
    process.exit(2);
  };

  /** parseArgs' errors, worded as these commands word them. */
  const parseError = (error: unknown): never => {
    const { code, message } = error as NodeJS.ErrnoException;
    const quoted = /'([^' ,]*)/.exec(message)?.[1];
    switch (code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        return fail(`unknown option ${quoted}`);
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
        // Also `--port -1`: parseArgs takes a value starting with '-' for a forgotten one.
        return fail(
          `${quoted} needs a value${/ambiguous/.test(message) ? ` (one starting with '-' goes as ${quoted}=VALUE)` : ''}`,
        );
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        return fail(`unexpected argument ${quoted}`);
    }
    throw error;
  };

  return {
    fail,
    parse<F extends string>(argv: string[], flags: readonly F[], onError?: (error: Error) => void) {
      const options = Object.fromEntries(flags.map((flag) => [flag, { type: 'string' }])) as StringOptions<F>;
      const config = {
        args: argv,
        strict: true,
        allowPositionals: false,
        options: { ...options, help: { type: 'boolean', short: 'h' } },
      } satisfies ParseArgsConfig;
      let values: Partial<Record<F, string>> & { help?: boolean };
      try {
        ({ values } = parseArgs(config) as { values: Partial<Record<F, string>> & { help?: boolean } });
      } catch (error) {
        onError?.(error as Error);
        return parseError(error);
      }
      if (values.help) {
        process.stdout.write(`${usage}\n`);
        process.exit(0);
      }
      for (const flag of flags) if (values[flag] === '') fail(`--${flag} needs a value`);
      return values;
    },
    port(raw: string): number {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n > 65535) fail(`invalid port ${raw}`);
      return n;
    },
    listen(address, start) {
      return start().catch((error: Error) => {
        process.stderr.write(`${name}: cannot listen on ${address.host}:${address.port}: ${error.message}\n`);
        process.exit(1);
      });
    },
    closeOnSignal(close) {
      let stopping = false;
      const shutdown = () => {
        if (stopping) return;
        stopping = true;
        void close().then(() => process.exit(0));
      };
      process.on('SIGINT', shutdown);
      process.on('SIGTERM', shutdown);
    },
  };
}
