import { loadConfig, logLevel, nodeEnv, port, secret } from '@parametric/config';
import { z } from 'zod';

export const policyConfigSchema = z.object({
  NODE_ENV: nodeEnv,
  LOG_LEVEL: logLevel,
  POLICY_HOST: z.string().default('0.0.0.0'),
  POLICY_PORT: port(3000),
  MONGO_URL: z.string().min(1, 'must be set'),
  MONGO_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/)
    .default('policy'),
  INTERNAL_SIGNING_SECRET: secret(),
});

export type PolicyConfig = z.infer<typeof policyConfigSchema>;

export function loadPolicyConfig(env: NodeJS.ProcessEnv = process.env): PolicyConfig {
  return loadConfig(policyConfigSchema, env);
}
