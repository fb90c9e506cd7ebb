import { randomUUID } from 'node:crypto';
import type { OpsDetermination } from '@parametric/determinations-client';
import { AppError } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import type { OpsFarmer, OpsPolicy } from '@parametric/policy-client';
import type { AttemptDeps, PayoutProvider, PayoutSettings } from '../../src/payouts/attempt';
import type { PayoutCallbackDeps } from '../../src/payouts/callbacks';
import type { OriginateDeps } from '../../src/payouts/originate';
import { type Accepted, type B2cInput, DarajaError, type TransactionStatusInput } from '../../src/provider';
import { convertKesToUsdc, formatUsdc } from '../../src/quotes/conversion';
import { MemoryPayoutStore } from './payout-store';

/** What the in-memory Daraja does with the next B2C request. */
export type B2cAnswer = 'accept' | 'duplicate' | 'reject' | 'unavailable';

/**
 * Daraja for the domain tests, behind the `PayoutProvider` interface the state machine uses: it
 * answers B2C requests as scripted (accepted by default), refuses a reused OriginatorConversationID
 * as Daraja does, and acknowledges Transaction Status queries with ids of their own. What the
 * payments actually did is decided by the test, through the callbacks it delivers.
 */
export class MemoryDaraja implements PayoutProvider {
  readonly b2cRequests: B2cInput[] = [];
  readonly statusRequests: (TransactionStatusInput & { queryOcid: string })[] = [];
  readonly answers: B2cAnswer[] = [];
  statusFails = false;
  private readonly taken = new Set<string>();

  async b2c(input: B2cInput): Promise<Accepted> {
    this.b2cRequests.push(input);
    const answer = this.answers.shift() ?? 'accept';
    if (answer === 'unavailable') throw new DarajaError('UNAVAILABLE', 'Daraja did not answer');
    if (answer === 'reject') {
      throw new DarajaError('REJECTED', 'B2C: Daraja answered ResponseCode 1', { errorCode: '1' });
    }
    if (answer === 'duplicate' || this.taken.has(input.originatorConversationId)) {
      throw new DarajaError('DUPLICATE', 'Duplicate OriginatorConversationID.', {
        errorCode: '500.002.1001',
      });
    }
    this.taken.add(input.originatorConversationId);
    return { conversationId: `AG_${randomUUID()}`, originatorConversationId: input.originatorConversationId };
  }

  async transactionStatus(input: TransactionStatusInput): Promise<Accepted> {
    if (this.statusFails) throw new DarajaError('UNAVAILABLE', 'Daraja did not answer');
    const queryOcid = `status-${randomUUID()}`;
    this.statusRequests.push({ ...input, queryOcid });
    return { conversationId: `AG_${randomUUID()}`, originatorConversationId: queryOcid };
  }

  /** The B2C requests for one payout (its OriginatorConversationIDs start with its id). */
  b2cOf(payoutId: string) {
    return this.b2cRequests.filter((r) => r.originatorConversationId.startsWith(payoutId));
  }
}

export const SETTINGS: PayoutSettings = {
  resultUrl: 'https://cb.example/b2c/result',
  queueTimeoutUrl: 'https://cb.example/b2c/timeout',
  statusResultUrl: 'https://cb.example/status/result',
  statusTimeoutUrl: 'https://cb.example/status/timeout',
  retryBaseMs: 60_000,
  maxAttempts: 3,
  statusPollMs: 2_000,
  statusAnswerWaitMs: 120_000,
  transportRetryMs: 1_000,
  resultWaitMs: 900_000,
};

/** The rate the in-memory quotes use: KES per USDC. */
export const KES_PER_USDC = '129.5';

export interface DeterminationSpec {
  owedMinor?: string;
  currency?: string;
  settlementMode?: 'DETERMINATION' | 'DETERMINATION_AND_SETTLEMENT';
  triggered?: boolean;
  status?: 'ISSUED' | 'UNATTRIBUTED';
  /** The policy's organization's environment (live unless told). */
  environment?: 'live' | 'sandbox';
  phoneNumber?: string;
}

/** One payouts world: the store, Daraja, the determinations, policies and farmers it reads, a clock. */
export class PayoutWorld {
  nowMs = Date.parse('2026-11-27T08:00:00.000Z');
  readonly store = new MemoryPayoutStore(() => this.now());
  readonly daraja = new MemoryDaraja();
  /** Sandbox organizations' Daraja: sandbox payouts must reach it, never `daraja`. */
  readonly sandboxDaraja = new MemoryDaraja();
  readonly determinations = new Map<string, OpsDetermination>();
  readonly policies = new Map<string, OpsPolicy>();
  readonly farmers = new Map<string, OpsFarmer>();
  readonly organizationId = randomUUID();
  readonly logger = createLogger({ name: 'payout-domain-test', level: 'silent' });
  quotes = 0;
  rateDown = false;

  now = () => new Date(this.nowMs);

  advance(ms: number) {
    this.nowMs += ms;
  }

  /** A determination owing `owedMinor` on a Tier 2 KES policy of a farmer with a phone. */
  determination(spec: DeterminationSpec = {}): string {
    const determinationId = randomUUID();
    const policyId = randomUUID();
    const farmerId = randomUUID();
    const settlementMode = spec.settlementMode ?? 'DETERMINATION_AND_SETTLEMENT';
    const currency = spec.currency ?? 'KES';
    this.farmers.set(farmerId, {
      id: farmerId,
      organizationId: this.organizationId,
      phoneNumber: spec.phoneNumber ?? '+254711000001',
    } as OpsFarmer);
    this.policies.set(policyId, {
      id: policyId,
      organizationId: this.organizationId,
      farmerId,
      settlementMode,
      currency,
      environment: spec.environment ?? 'live',
    } as OpsPolicy);
    const status = spec.status ?? 'ISSUED';
    this.determinations.set(determinationId, {
      determinationId,
      status,
      organizationId: status === 'ISSUED' ? this.organizationId : null,
      policyId: status === 'ISSUED' ? policyId : null,
      settlementMode,
      triggered: spec.triggered ?? true,
      owed: status === 'ISSUED' ? { amountMinor: spec.owedMinor ?? '500000', currency, exponent: 2 } : null,
      issuedAt: this.now().toISOString(),
    } as OpsDetermination);
    return determinationId;
  }

  originateDeps(limits = { minAmount: 10, maxAmount: 250_000 }): OriginateDeps {
    return {
      store: this.store,
      quote: async (_organizationId, amountKes) => {
        if (this.rateDown)
          throw new AppError('PAYMENT_ERROR', 'No current KES→USDC exchange rate is available');
        this.quotes++;
        return {
          quoteId: randomUUID(),
          convertedAmount: formatUsdc(convertKesToUsdc(BigInt(amountKes) * 100n, KES_PER_USDC)),
        };
      },
      findDetermination: async (id) => this.determinations.get(id) ?? null,
      findPolicy: async (ref) => ('policyId' in ref ? (this.policies.get(ref.policyId) ?? null) : null),
      findFarmer: async (id) => this.farmers.get(id) ?? null,
      maxAttempts: SETTINGS.maxAttempts,
      limits,
      sandboxDaraja: true,
      now: this.now,
    };
  }

  attemptDeps(): AttemptDeps {
    return {
      store: this.store,
      ledger: this.store,
      providers: { live: this.daraja, sandbox: this.sandboxDaraja },
      settings: SETTINGS,
      now: this.now,
      logger: this.logger,
    };
  }

  callbackDeps(): PayoutCallbackDeps {
    return {
      store: this.store,
      ledger: this.store,
      settings: SETTINGS,
      now: this.now(),
      logger: this.logger,
    };
  }
}
