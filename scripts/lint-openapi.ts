/**
 * Lints the generated OpenAPI documents (partner and ops) with Redocly's recommended rules and
 * fails on any error, so `npm test` never ships a document that tools cannot read.
 * Warnings are printed; errors fail.
 */
import { opsDocument, partnerDocument } from '@parametric/contracts';
import { createConfig, formatProblems, lintFromString } from '@redocly/openapi-core';

async function main(): Promise<void> {
  const config = await createConfig({ extends: ['recommended'] });
  let errors = 0;
  for (const [name, document] of [
    ['partner', partnerDocument()],
    ['ops', opsDocument()],
  ] as const) {
    const problems = await lintFromString({
      source: JSON.stringify(document, null, 2),
      absoluteRef: `${name}-openapi.json`,
      config,
    });
    const found = problems.filter((p) => p.severity === 'error').length;
    errors += found;
    if (problems.length > 0)
      formatProblems(problems, {
        format: 'codeframe',
        totals: { errors: found, warnings: problems.length - found, ignored: 0 },
        version: '',
      });
    console.log(
      `[openapi] ${name}: ${Object.keys(document.paths ?? {}).length} paths, ${found} errors, ${problems.length - found} warnings`,
    );
  }
  if (errors > 0) process.exit(1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
