import { takeContractViolations } from './contract-check';

// Every partner or ops response a test received must match the generated OpenAPI document.
afterEach(() => {
  const found = takeContractViolations();
  if (found.length > 0) {
    throw new Error(`responses that do not match the OpenAPI document:\n${[...new Set(found)].join('\n')}`);
  }
});
