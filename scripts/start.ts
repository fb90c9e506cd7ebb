/**
 * `npm start`: the whole platform locally on embedded defaults. So far the platform is its
 * database: MongoDB from MONGO_URL, a real mongod when one is installed, or the embedded
 * MongoDB-wire server otherwise. Ctrl-C or SIGTERM stops everything it started.
 */
import { startLocalMongo } from '@parametric/embedded-mongo';

async function main(): Promise<void> {
  const mongo = await startLocalMongo();
  console.log(`MongoDB: ${mongo.description}`);
  console.log(`MONGO_URL=${mongo.url}`);
  console.log('Press Ctrl-C to stop.');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping…`);
    await mongo.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
