import { loadConfig, logLevel, mongoDbName } from '@parametric/config';
import { createLogger, type Logger } from '@parametric/logger';
import {
  connectMongo,
  describeIndex,
  type IndexedModel,
  type IndexReport,
  migrateIndexes,
} from '@parametric/mongo';
import type { Connection } from 'mongoose';
import { z } from 'zod';

/** What a service's `migrate` command needs of it: its name (its database by default) and its models. */
export interface MigrationDeclaration {
  name: string;
  models(connection: Connection): readonly IndexedModel[];
}

/**
 * The migrate command's configuration: only where the service's database is. It runs as a Job
 * with the platform's shared Secret (MONGO_URL) and the service's MONGO_DB, none of the service's
 * own secrets.
 */
export function migrationConfigSchema(database: string) {
  return z.object({
    MONGO_URL: z.string().min(1, 'must be set'),
    MONGO_DB: mongoDbName(database),
    LOG_LEVEL: logLevel,
  });
}
export type MigrationConfig = z.infer<ReturnType<typeof migrationConfigSchema>>;

/**
 * Creates the service's declared indexes in its database and logs what it created, what was
 * already there, what is in the way (conflicts) and what no schema declares (never dropped).
 */
export async function migrate(
  declaration: MigrationDeclaration,
  config: Pick<MigrationConfig, 'MONGO_URL' | 'MONGO_DB'>,
  logger: Logger,
): Promise<IndexReport> {
  // autoIndex off: the indexes are built below, one at a time, and reported.
  const connection = await connectMongo({
    url: config.MONGO_URL,
    dbName: config.MONGO_DB,
    logger,
    autoIndex: false,
  });
  try {
    const report = await migrateIndexes(connection, declaration.models(connection));
    for (const index of report.created) logger.info({ index: describeIndex(index) }, 'index created');
    for (const index of report.present) logger.info({ index: describeIndex(index) }, 'index verified');
    for (const { index, reason } of report.conflicts)
      logger.error({ index: describeIndex(index), reason }, 'index conflict: left as it is');
    for (const index of report.undeclared)
      logger.warn({ index: `${index.collection}.${index.name}` }, 'index not declared: left in place');
    logger.info(
      {
        database: config.MONGO_DB,
        created: report.created.length,
        verified: report.present.length,
        conflicts: report.conflicts.length,
        undeclared: report.undeclared.length,
      },
      report.conflicts.length === 0 ? 'migrate: done' : 'migrate: conflicts left for an operator',
    );
    return report;
  } finally {
    await connection.close();
  }
}

/**
 * Entry point of `services/<name>/src/migrate.ts` (`npm run migrate -w services/<name>`, and the
 * container command of the `<name>-migrate` Job): config once, migrate, exit 0 — or 1 on a
 * conflict or any failure, so the Job fails and the rollout waits for an operator.
 */
export function runMigration(declaration: MigrationDeclaration): void {
  let logger: Logger | undefined;
  (async () => {
    const config = loadConfig(migrationConfigSchema(declaration.name));
    logger = createLogger({ name: `${declaration.name}-migrate`, level: config.LOG_LEVEL });
    const report = await migrate(declaration, config, logger);
    return report.conflicts.length === 0 ? 0 : 1;
  })().then(
    (code) => process.exit(code),
    (err) => {
      if (logger) logger.error({ err }, 'migrate failed');
      else console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
