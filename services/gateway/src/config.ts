import { loadConfig, platformService, port, positiveInt, secret, serviceUrl } from '@parametric/config';
import { z } from 'zod';

export const gatewayConfigSchema = z.object({
  ...platformService('GATEWAY', 'gateway'),
  OPS_HOST: z.string().default('0.0.0.0'),
  OPS_PORT: port(3001),
  OPS_TOKEN: secret(),
  API_KEY_PEPPER: secret(),
  RATE_LIMIT_POINTS: positiveInt(100),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
  PAYMENTS_INITIATE_LIMIT_POINTS: positiveInt(10),
  PAYMENTS_INITIATE_WINDOW_SECONDS: positiveInt(3600),
  REGISTRATION_LIMIT_POINTS: positiveInt(10),
  REGISTRATION_WINDOW_SECONDS: positiveInt(3600),
  /** Per client IP, for requests without a valid key (including every 401). */
  ANONYMOUS_LIMIT_POINTS: positiveInt(100),
  /** express "trust proxy": how many proxy hops set X-Forwarded-For (0 = none, the default). */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  FORWARD_TIMEOUT_MS: positiveInt(30_000),
  OUTBOX_POLL_MS: positiveInt(1_000),
  POLICY_URL: serviceUrl(),
  PAYMENTS_URL: serviceUrl(),
  DETERMINATIONS_URL: serviceUrl(),
  WEBHOOKS_URL: serviceUrl(),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadConfig(gatewayConfigSchema, env);
}
