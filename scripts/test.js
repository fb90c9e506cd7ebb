#!/usr/bin/env node
// `npm test`: the checks, then each jest project in turn, timing each (README, "Tests"):
//
//   node scripts/test.js                          lockfile typecheck lint openapi unit platform conformance faults
//   node scripts/test.js unit platform            only these steps, in this order
//   node scripts/test.js --skip conformance       all but these (comma-separated or repeated)
//   node scripts/test.js <test file…> [jest options]   jest on these files only (`npm test -- <file…>`)
//
// Each step is an npm script (below), so `npm run test:unit` and the rest run the same thing alone.
// Stops at the first step that fails, and prints every step's wall time either way (CI reads them
// in its log). `npm test` runs it through scripts/node24.js, so every step runs under Node 24.
const { spawn } = require('node:child_process');

const STEPS = {
  lockfile: 'check:lockfile',
  typecheck: 'typecheck',
  lint: 'lint',
  openapi: 'lint:openapi',
  unit: 'test:unit',
  platform: 'test:platform',
  conformance: 'test:conformance',
  faults: 'test:faults',
};

function usage(message) {
  console.error(`[test] ${message}`);
  console.error(
    `[test] usage: node scripts/test.js [step…] [--skip step[,step…]] | <test file…>; steps: ${Object.keys(STEPS).join(' ')}`,
  );
  process.exit(2);
}

function parse(args) {
  const chosen = [];
  const skipped = new Set();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--skip' || arg.startsWith('--skip=')) {
      const value = arg === '--skip' ? args[++i] : arg.slice('--skip='.length);
      if (!value) usage('--skip needs a step');
      for (const step of value.split(',').filter(Boolean)) skipped.add(step);
    } else if (arg.startsWith('-')) {
      usage(`unknown option ${arg}`);
    } else {
      chosen.push(arg);
    }
  }
  for (const step of [...chosen, ...skipped]) if (!(step in STEPS)) usage(`unknown step ${step}`);
  return (chosen.length > 0 ? chosen : Object.keys(STEPS)).filter((step) => !skipped.has(step));
}

/** npm itself, run by the node that runs this (so that under Node 24 every step is Node 24 too). */
function npm(args) {
  const cli = process.env.npm_execpath;
  return cli && /\.c?js$/.test(cli) ? [process.execPath, [cli, ...args]] : ['npm', args];
}

let current;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => current?.kill(signal));

function run(script) {
  const [command, args] = npm(['run', script]);
  return new Promise((resolve) => {
    current = spawn(command, args, { stdio: 'inherit' });
    current.on('error', (err) => {
      console.error(`[test] ${script}: ${err.message}`);
      resolve(1);
    });
    current.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function summary(results, totalMs) {
  console.log('\n[test] step         wall time   result');
  for (const { step, ms, code } of results) {
    console.log(`[test] ${step.padEnd(12)} ${seconds(ms).padStart(9)}   ${code === 0 ? 'passed' : 'FAILED'}`);
  }
  console.log(`[test] ${'total'.padEnd(12)} ${seconds(totalMs).padStart(9)}`);
}

/** `npm test -- <file…>`: arguments that start with neither a step nor an option are jest's. */
function jestArgs(args) {
  return args.length > 0 && !args[0].startsWith('-') && !(args[0] in STEPS) ? args : undefined;
}

function runJest(args) {
  current = spawn(process.execPath, [require.resolve('jest/bin/jest'), ...args], { stdio: 'inherit' });
  current.on('error', (err) => {
    console.error(`[test] jest: ${err.message}`);
    process.exit(1);
  });
  current.on('exit', (code, signal) => process.exit(code === null ? (signal ? 1 : 0) : code));
}

async function main() {
  const files = jestArgs(process.argv.slice(2));
  if (files) return runJest(files);
  const steps = parse(process.argv.slice(2));
  const started = Date.now();
  const results = [];
  for (const step of steps) {
    console.log(`\n[test] ${step}: npm run ${STEPS[step]}`);
    const t0 = Date.now();
    const code = await run(STEPS[step]);
    results.push({ step, ms: Date.now() - t0, code });
    console.log(`[test] ${step}: ${code === 0 ? 'passed' : 'FAILED'} in ${seconds(Date.now() - t0)}`);
    if (code !== 0) break;
  }
  summary(results, Date.now() - started);
  const failed = results.find((r) => r.code !== 0);
  process.exit(failed ? failed.code : 0);
}

main();
