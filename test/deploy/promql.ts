/**
 * Just enough PromQL for the deployment tests: the metric names an expression selects, so the
 * alerts and the dashboard can be checked against what the services export. Not a parser: it
 * knows the shapes this repo writes (selectors with matchers and ranges, aggregations with
 * `by`/`without`, binary operators with `on`/`ignoring`/`group_*`, `offset`, Grafana's `$vars`)
 * and refuses a call of a function it does not know, so a typo cannot pass as a metric name.
 */

/** PromQL functions and aggregation operators (a name followed by `(`). */
const FUNCTIONS = new Set([
  // Aggregations.
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
  // Functions.
  'abs',
  'absent',
  'absent_over_time',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'days_in_month',
  'delta',
  'deriv',
  'exp',
  'floor',
  'histogram_avg',
  'histogram_count',
  'histogram_fraction',
  'histogram_quantile',
  'histogram_sum',
  'holt_winters',
  'hour',
  'idelta',
  'increase',
  'irate',
  'label_join',
  'label_replace',
  'ln',
  'log2',
  'log10',
  'minute',
  'month',
  'predict_linear',
  'rate',
  'resets',
  'round',
  'scalar',
  'sgn',
  'sort',
  'sort_desc',
  'sqrt',
  'time',
  'timestamp',
  'vector',
  'year',
  'avg_over_time',
  'min_over_time',
  'max_over_time',
  'sum_over_time',
  'count_over_time',
  'quantile_over_time',
  'stddev_over_time',
  'stdvar_over_time',
  'last_over_time',
  'present_over_time',
]);

/** Keywords that stand alone (not metric names). */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'atan2',
  'inf',
  'nan',
]);

/** The metric names an expression selects, sorted, each once. Throws on an unknown function. */
export function metricNames(expr: string): string[] {
  if (/__name__/.test(expr)) throw new Error(`${expr}: selecting by __name__ is not supported here`);
  const stripped = expr
    // Strings (matcher values, label_replace arguments), then matchers, ranges and label lists.
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1()')
    .replace(/#[^\n]*/g, '');
  const tokens = stripped.match(/\$\{?\w+\}?|[a-zA-Z_:][\w:]*|\d[\w.]*|\S/g) ?? [];
  const names = new Set<string>();
  tokens.forEach((token, i) => {
    if (!/^[a-zA-Z_:]/.test(token) || KEYWORDS.has(token)) return;
    // A call, or an aggregation with its grouping first: `sum by (service) (…)`.
    const next = tokens[i + 1];
    if (next === '(' || ((next === 'by' || next === 'without') && tokens[i + 2] === '(')) {
      if (!FUNCTIONS.has(token)) throw new Error(`${expr}: unknown PromQL function ${token}`);
      return;
    }
    names.add(token);
  });
  return [...names].sort();
}

/**
 * Series names a scrape's `# TYPE` lines declare: a histogram as its `_bucket`, `_sum` and
 * `_count` series, a summary as itself, `_sum` and `_count`, anything else as itself.
 */
export function exportedNames(exposition: string): string[] {
  const names = new Set<string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
  }
  return [...names].sort();
}
