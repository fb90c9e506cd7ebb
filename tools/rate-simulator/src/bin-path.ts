import path from 'node:path';

/** Absolute path of the `rate-simulator` executable, for spawning it without `npx`. */
export const RATE_SIMULATOR_BIN = path.join(__dirname, '..', 'bin', 'rate-simulator.js');
