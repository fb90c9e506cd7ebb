/**
 * The drought day's design floor (bench/support/floor-day.ts) started as the platform is: its
 * four roles each a process (or two, as the replicas mode runs the platform) on their own
 * MongoDB and Redis, the partners' API keys and webhook endpoints written in first (the floor has
 * no registration: that is not the day's work), and the same surface bench/support/drought.ts
 * drives (`api`, `ops`, `opsAuth`, `policyDb`, `cpuNow`, `storeCommandsNow`), so the very same
 * round runs against it.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { startWebhookReceiver } from '@parametric/webhook-receiver';
import mongoose from 'mongoose';
import type { DroughtPlatform } from './drought';
import { type Partner, storeCommands } from './platform';
import { pidListeningOn, processCpuMicros, startProcess, stopProcesses, waitReady } from './run';
import { type ServiceFront, startServiceFront } from './service-front';

export interface FloorDay extends DroughtPlatform {
  partners: Partner[];
  stop(): Promise<void>;
}

/**
 * `replicas` (1 or 2): how many processes of each role but the gateway, the roles the platform's
 * replicas mode doubles (target 4's floor: what the same doubling costs the design itself).
 */
export async function startFloorDay(organizations: number, { replicas = 1 } = {}): Promise<FloorDay> {
  const [mongo, redis] = await Promise.all([startLocalMongo(), startLocalRedis()]);
  const children: ChildProcess[] = [];
  const partners: Partner[] = [];
  const policyDb = mongoose.createConnection(mongo.url, { dbName: 'policy' });
  const fronts: ServiceFront[] = [];
  const stop = async () => {
    await Promise.all(partners.map((p) => p.receiver.close()));
    await policyDb.close().catch(() => undefined);
    await stopProcesses(children);
    await Promise.all(fronts.map((f) => f.close()));
    await Promise.all([mongo.stop(), redis.stop()]);
  };
  try {
    await policyDb.asPromise();
    const keys: Array<{ _id: string; organizationId: string }> = [];
    const endpoints: Array<{ _id: string; url: string; secret: string }> = [];
    for (let i = 0; i < organizations; i++) {
      const secret = randomBytes(32).toString('hex');
      const receiver = await startWebhookReceiver({ secret });
      const partner = { id: randomUUID(), apiKey: `pk_floor_${randomBytes(24).toString('hex')}`, receiver };
      partners.push(partner);
      keys.push({
        _id: createHash('sha256').update(partner.apiKey).digest('hex'),
        organizationId: partner.id,
      });
      endpoints.push({ _id: partner.id, url: receiver.url, secret });
    }
    await policyDb
      .getClient()
      .db('gateway')
      .collection('api_keys')
      .insertMany(keys as never[]);
    await policyDb
      .getClient()
      .db('webhooks')
      .collection('webhook_endpoints')
      .insertMany(endpoints as never[]);

    // Ports asked for together: the gateway's, then each replica's policy, webhooks and determinations.
    const [gatewayPort, ...rolePorts] = await Promise.all(
      Array.from({ length: 1 + 3 * replicas }, () => freePort()),
    );
    const portsOf = (k: number) => Array.from({ length: replicas }, (_, r) => rolePorts[3 * r + k] as number);
    const [policyPorts, webhooksPorts, determinationsPorts] = [portsOf(0), portsOf(1), portsOf(2)];
    const url = (port: number | undefined) => `http://127.0.0.1:${port}`;
    const opsToken = randomBytes(24).toString('hex');
    const signingKey = generateKeyPairSync('ed25519').privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const shared = { ...process.env, MONGO_URL: mongo.url, REDIS_URL: redis.url };
    const names: string[] = [];
    /** One process of `role`, named `name` in the CPU figures. */
    const start = (role: string, name: string, port: number | undefined, env: Record<string, string>) => {
      children.push(
        startProcess('bench/support/floor-day.ts', {
          ...shared,
          FLOOR_ROLE: role,
          PORT: String(port),
          ...env,
        }),
      );
      names.push(name);
    };
    // As the platform's replicas mode starts its services (bench/support/platform.ts): replica
    // `r` named `role#r+1` when there are two, each determinations replica calling the policy
    // replica of its own rank, and the gateway reaching the determinations replicas through a front.
    for (let r = 0; r < replicas; r++) {
      const nameOf = (role: string) => (replicas > 1 ? `${role}#${r + 1}` : role);
      start('policy', nameOf('policy'), policyPorts[r], {});
      start('webhooks', nameOf('webhooks'), webhooksPorts[r], {});
      start('determinations', nameOf('determinations'), determinationsPorts[r], {
        FLOOR_POLICY_URL: url(policyPorts[r]),
        FLOOR_SIGNING_KEY: signingKey,
      });
    }
    // As in front of the platform's replicas: a Service's spread over the determinations replicas.
    const front = replicas > 1 ? await startServiceFront(determinationsPorts) : undefined;
    if (front) fronts.push(front);
    start('gateway', 'gateway', gatewayPort, {
      FLOOR_DETERMINATIONS_URL: url(front?.port ?? determinationsPorts[0]),
      FLOOR_OPS_TOKEN: opsToken,
    });
    await waitReady([gatewayPort, ...rolePorts] as number[]);
    const pids: Record<string, number | undefined> = {
      ...Object.fromEntries(names.map((name, i) => [name, children[i]?.pid])),
      mongo: pidListeningOn(Number(new URL(mongo.url).port)),
      redis: pidListeningOn(Number(new URL(redis.url).port)),
    };
    return {
      api: `${url(gatewayPort)}/api`,
      ops: `${url(gatewayPort)}/ops`,
      opsAuth: { authorization: `Bearer ${opsToken}` },
      policyDb,
      cpuNow: () =>
        Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuMicros(pid)])),
      storeCommandsNow: () => storeCommands(policyDb, redis.url),
      partners,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
