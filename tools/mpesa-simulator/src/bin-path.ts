import path from 'node:path';

/** Absolute path of the `mpesa-simulator` executable, for spawning it without `npx`. */
export const MPESA_SIMULATOR_BIN = path.join(__dirname, '..', 'bin', 'mpesa-simulator.js');
