/**
 * The Dockerfile read as the builder reads it (continuations joined, comments dropped), split
 * into stages: what test/deploy/dockerfile.test.ts and test/deploy/image-config.test.ts check.
 */

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Splits a Dockerfile into stages of instructions. */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line)) continue; // comments (also inside continuations) are dropped
    if (/\\\s*$/.test(line)) {
      pending += `${line.replace(/\\\s*$/, '')} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (full) logical.push(full);
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/s.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: args.trim() };
    if (instruction.keyword === 'FROM') {
      const [, from = '', name] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args) ?? [];
      stages.push({ from, name, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)?.instructions.push(instruction);
    } else if (instruction.keyword !== 'ARG') {
      throw new Error(`${instruction.keyword} before the first FROM`);
    }
  }
  return stages;
}

/** A stage and the stages it is built FROM, outermost last. */
export function lineageIn(stages: readonly Stage[], stage: Stage): Stage[] {
  const parent = stages.find((s) => s.name === stage.from);
  return parent && parent !== stage ? [stage, ...lineageIn(stages, parent)] : [stage];
}
