import { stopAll } from './handles';

export default async function globalTeardown(): Promise<void> {
  await stopAll();
}
