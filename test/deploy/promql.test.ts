import { exportedNames, metricNames } from './promql';

describe('metricNames: the metric names a PromQL expression selects', () => {
  test.each([
    ['up == 0', ['up']],
    ['up{service=~"gateway|policy"} == 0', ['up']],
    ['absent(queue_jobs{service="gateway"})', ['queue_jobs']],
    [
      'sum by (service, route) (rate(http_request_duration_seconds_count{status=~"5.."}[5m])) / sum by (service, route) (rate(http_request_duration_seconds_count[5m])) > 0.05',
      ['http_request_duration_seconds_count'],
    ],
    [
      'histogram_quantile(0.95, sum by (service, le) (rate(chain_activation_duration_seconds_bucket{service=~"$service"}[$__rate_interval])))',
      ['chain_activation_duration_seconds_bucket'],
    ],
    [
      'max by (service, breaker) (circuit_breaker_state{breaker=~"chain|mpesa"}) == 2\nand\nmax by (service, breaker) (min_over_time(circuit_breaker_state[5m])) >= 1',
      ['circuit_breaker_state'],
    ],
    ['sum(rate(payouts_total[1h] offset 1d)) > 3 * sum(payouts_total)', ['payouts_total']],
    ['a_total / on (queue) group_left (state) b_gauge', ['a_total', 'b_gauge']],
    ['sum(x) without (instance) unless y', ['x', 'y']],
    ['topk(15, sum by (service) (rate(foo_total[5m])) > 0)', ['foo_total']],
    ['label_replace(up, "dst", "$1", "src", "(.*)")', ['up']],
  ])('%s', (expr, names) => {
    expect(metricNames(expr)).toEqual(names);
  });

  test('refuses an unknown function (a typo is not a metric name)', () => {
    expect(() => metricNames('rte(foo_total[5m])')).toThrow(/unknown PromQL function rte/);
    expect(() => metricNames('{__name__="foo"}')).toThrow(/__name__/);
  });
});

describe('exportedNames: the series names a scrape declares', () => {
  test('histograms as _bucket, _sum and _count; counters and gauges as themselves', () => {
    const text = [
      '# HELP http_request_duration_seconds x',
      '# TYPE http_request_duration_seconds histogram',
      'http_request_duration_seconds_bucket{le="0.1",service="gateway"} 1',
      '# TYPE auth_failures_total counter',
      '# TYPE queue_jobs gauge',
      '# TYPE rpc_seconds summary',
    ].join('\n');
    expect(exportedNames(text)).toEqual([
      'auth_failures_total',
      'http_request_duration_seconds_bucket',
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_sum',
      'queue_jobs',
      'rpc_seconds',
      'rpc_seconds_count',
      'rpc_seconds_sum',
    ]);
  });
});
