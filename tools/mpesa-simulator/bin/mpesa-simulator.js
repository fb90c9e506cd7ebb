#!/usr/bin/env node
// Runs the TypeScript CLI directly: the workspace ships sources, and tsx compiles them on load.
require('tsx/cjs/api').register();
require('../src/cli.ts');
