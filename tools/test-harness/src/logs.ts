/** A pino destination that keeps every line, for tests that assert on what was logged. */
export function captureLogs() {
  const chunks: string[] = [];
  const destination = {
    write(chunk: string) {
      chunks.push(chunk);
    },
  };
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter((line) => line.length > 0);
  const records = () => lines().map((line) => JSON.parse(line) as Record<string, unknown>);
  return { destination, text, lines, records };
}
