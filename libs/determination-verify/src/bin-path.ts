import path from 'node:path';

/** Absolute path of the `determination-verify` executable, for spawning it without `npx`. */
export const DETERMINATION_VERIFY_BIN = path.join(__dirname, '..', 'bin', 'determination-verify.js');
