// Regenerates src/generated/policy-registry.ts from contracts/PolicyRegistry.sol.
// Run: npx tsx libs/chain/scripts/compile.ts (then commit the generated file).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACT_PATH, renderArtifact } from '../src/compile';

fs.mkdirSync(path.dirname(ARTIFACT_PATH), { recursive: true });
fs.writeFileSync(ARTIFACT_PATH, renderArtifact());
// Format as the repo's linter would, so regenerating an unchanged contract gives no diff.
const biome = spawnSync('npx', ['biome', 'format', '--write', ARTIFACT_PATH], { stdio: 'inherit' });
if (biome.status !== 0) process.exitCode = 1;
console.log(`wrote ${ARTIFACT_PATH}`);
