import {
  type CallbackSink,
  darajaTimestamp,
  type MpesaSimulator,
  type MpesaSimulatorOptions,
  type ReceivedCallback,
  startCallbackSink,
  startMpesaSimulator,
  stkPassword,
} from '../src';

export const CONFIG = {
  consumerKey: 'test-consumer-key',
  consumerSecret: 'test-consumer-secret',
  shortcode: '174379',
  passkey: 'test-passkey-bfb279f9aa9bdbcf158e97dd71a467cd',
  b2cShortcode: '600000',
} as const;

/** A clock the test moves by hand (token expiry, spike arrest, Timestamp checks). */
export function manualClock(start = new Date('2026-03-01T09:00:00Z')) {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
  };
}

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test answers are inspected field by field
  body: any;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body };
}

export const basic = (key: string, secret: string) =>
  `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;

export async function getToken(sim: MpesaSimulator): Promise<string> {
  const answer = await call(sim.url, 'GET', '/oauth/v1/generate?grant_type=client_credentials', {
    headers: { authorization: basic(CONFIG.consumerKey, CONFIG.consumerSecret) },
  });
  if (answer.status !== 200) throw new Error(`token: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.access_token as string;
}

/** A valid STK push body (Timestamp in EAT) for the clock's time. */
export function stkBody(now: Date, callbackUrl: string, overrides: Record<string, unknown> = {}) {
  const timestamp = darajaTimestamp(now, 'EAT');
  return {
    BusinessShortCode: CONFIG.shortcode,
    Password: stkPassword(CONFIG.shortcode, CONFIG.passkey, timestamp),
    Timestamp: timestamp,
    TransactionType: 'CustomerPayBillOnline',
    Amount: 1,
    PartyA: '254711000001',
    PartyB: CONFIG.shortcode,
    PhoneNumber: '254711000001',
    CallBackURL: callbackUrl,
    AccountReference: 'POL-00001',
    TransactionDesc: 'Premium',
    ...overrides,
  };
}

export function stkQueryBody(now: Date, checkoutRequestId: string) {
  const timestamp = darajaTimestamp(now, 'EAT');
  return {
    BusinessShortCode: CONFIG.shortcode,
    Password: stkPassword(CONFIG.shortcode, CONFIG.passkey, timestamp),
    Timestamp: timestamp,
    CheckoutRequestID: checkoutRequestId,
  };
}

let ocidCounter = 0;

export function b2cBody(sinkUrl: string, overrides: Record<string, unknown> = {}) {
  return {
    OriginatorConversationID: `payout-${process.pid}-${++ocidCounter}`,
    InitiatorName: 'testapi',
    SecurityCredential: 'encrypted-credential==',
    CommandID: 'BusinessPayment',
    Amount: 150,
    PartyA: CONFIG.b2cShortcode,
    PartyB: '254722000001',
    Remarks: 'Claim payout',
    QueueTimeOutURL: `${sinkUrl}/b2c/timeout`,
    ResultURL: `${sinkUrl}/b2c/result`,
    Occassion: 'det_1',
    ...overrides,
  };
}

export function statusBody(sinkUrl: string, overrides: Record<string, unknown> = {}) {
  return {
    Initiator: 'testapi',
    SecurityCredential: 'encrypted-credential==',
    CommandID: 'TransactionStatusQuery',
    PartyA: CONFIG.b2cShortcode,
    IdentifierType: '4',
    ResultURL: `${sinkUrl}/status/result`,
    QueueTimeOutURL: `${sinkUrl}/status/timeout`,
    Remarks: 'Reconcile',
    Occasion: 'check',
    ...overrides,
  };
}

/** A simulator and a callback sink for one test; `close()` stops both. */
export async function setup(options: Partial<MpesaSimulatorOptions> = {}) {
  const clock = manualClock();
  const sim = await startMpesaSimulator({ ...CONFIG, callbackDelayMs: 20, now: clock.now, ...options });
  const sink: CallbackSink = await startCallbackSink();
  let token: string | undefined;
  const bearer = async () => {
    token ??= await getToken(sim);
    return { authorization: `Bearer ${token}` };
  };
  return {
    sim,
    sink,
    clock,
    async post(path: string, body: unknown) {
      return call(sim.url, 'POST', path, { body, headers: await bearer() });
    },
    async close() {
      await sim.close();
      await sink.close();
    },
  };
}

export type Setup = Awaited<ReturnType<typeof setup>>;

// biome-ignore lint/suspicious/noExplicitAny: callback bodies are inspected field by field
export const stkOf = (c: ReceivedCallback): any => (c.body as any)?.Body?.stkCallback;
// biome-ignore lint/suspicious/noExplicitAny: callback bodies are inspected field by field
export const resultOf = (c: ReceivedCallback): any => (c.body as any)?.Result;
