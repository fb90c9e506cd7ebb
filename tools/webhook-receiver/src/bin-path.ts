import path from 'node:path';

/** Absolute path of the `webhook-receiver` executable, for spawning it without `npx`. */
export const WEBHOOK_RECEIVER_BIN = path.join(__dirname, '..', 'bin', 'webhook-receiver.js');
