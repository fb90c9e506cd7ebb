import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where partner webhooks may be delivered (SSRF guard).
 *
 * A partner-supplied webhook URL must never lead into our own network. The check runs twice:
 *
 * - `checkWebhookTarget` when the URL is configured: syntax, scheme, credentials, host name,
 *   and every address the host resolves to.
 * - At delivery, against the address actually dialled: `guardedLookup` is the `lookup` of
 *   the delivery Agent, so a name that re-resolves to a private address after configuration
 *   (DNS rebinding) is refused before any connection is made; and because Node's `net` does
 *   not call `lookup` for IP-literal hosts, the sender (`send.ts`) checks a literal host with
 *   `isBlockedAddress` itself before dialling.
 *
 * Delivery never follows redirects and never goes through a forward proxy (the lookup would
 * then judge the proxy, not the target).
 *
 * `allowInsecure` (local runs and tests only) relaxes exactly two things: `http:` URLs, and
 * addresses that really are this host's loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104) plus
 * the name `localhost`. Everything else stays blocked even then — private ranges, link-local,
 * cloud metadata, `0.0.0.0` (which Linux routes to this host, yet is not a loopback address) —
 * so a local setup cannot hide a rule that production depends on, and a misconfigured
 * `allowInsecure` in a deployed environment still cannot reach metadata or the cluster network.
 */

export interface TargetPolicy {
  allowInsecure: boolean;
  /** Resolves a DNS name to IP addresses. Defaults to `dns.lookup(host, { all: true, verbatim: true })`. */
  resolve?: (hostname: string) => Promise<string[]>;
}

export type TargetCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

const MAX_URL_LENGTH = 2048;

/** Error code of the connection failure raised by `guardedLookup`. */
const BLOCKED_CODE = 'EWEBHOOK_BLOCKED';

function subnets(type: 'ipv4' | 'ipv6', list: ReadonlyArray<readonly [string, number]>): BlockList {
  const blocks = new BlockList();
  for (const [network, prefix] of list) blocks.addSubnet(network, prefix, type);
  return blocks;
}

const LOOPBACK_V4 = subnets('ipv4', [['127.0.0.0', 8]]);

/** IPv4 ranges that are never a partner's public endpoint (IANA special-purpose registry and more). */
const BLOCKED_V4 = subnets('ipv4', [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 connects to this host on Linux
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (also holds Alibaba metadata 100.100.100.200)
  ['169.254.0.0', 16], // link-local (AWS/GCP/Azure/OCI metadata 169.254.169.254, ECS 169.254.170.2)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
]);

/**
 * Cloud metadata / host-agent endpoints. Most already fall in a range above; they are listed so
 * the rule survives any edit to the ranges. 168.63.129.16 is Azure's WireServer: a public
 * address that only means something from inside Azure, where it talks to the host.
 */
const METADATA_ADDRESSES = new BlockList();
for (const address of ['169.254.169.254', '169.254.170.2', '100.100.100.200', '168.63.129.16']) {
  METADATA_ADDRESSES.addAddress(address, 'ipv4');
}
METADATA_ADDRESSES.addAddress('fd00:ec2::254', 'ipv6'); // AWS IMDS over IPv6

/** Only global unicast IPv6 (2000::/3) can be a partner's endpoint; everything outside is refused. */
const GLOBAL_UNICAST_V6 = subnets('ipv6', [['2000::', 3]]);

/** Non-public ranges inside 2000::/3. (6to4, 2002::/16, is judged by its embedded IPv4.) */
const BLOCKED_V6 = subnets('ipv6', [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID, ...
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
]);

type AddressClass = 'public' | 'loopback' | 'blocked';

function parseIPv4(text: string): number[] | null {
  if (isIP(text) !== 4) return null;
  return text.split('.').map(Number);
}

/** The eight 16-bit groups of an address `isIP` accepts as IPv6 (zone already removed). */
function parseIPv6(text: string): number[] | null {
  if (isIP(text) !== 6) return null;
  let body = text;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIPv4(last);
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    tail.push((a << 8) | b, (c << 8) | d);
    body = text.slice(0, lastColon + 1);
    if (!body.endsWith('::')) body = body.slice(0, -1);
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string | undefined): number[] =>
    part ? part.split(':').map((group) => Number.parseInt(group, 16)) : [];
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words = [...head, ...new Array<number>(Math.max(missing, 0)).fill(0), ...rest, ...tail];
  return words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : null;
}

function ipv4FromWords(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

function classifyIPv4(address: string): AddressClass {
  if (METADATA_ADDRESSES.check(address, 'ipv4')) return 'blocked';
  if (LOOPBACK_V4.check(address, 'ipv4')) return 'loopback';
  if (BLOCKED_V4.check(address, 'ipv4')) return 'blocked';
  return 'public';
}

function classifyIPv6(address: string): AddressClass {
  const w = parseIPv6(address);
  if (!w) return 'blocked';
  const [w0, w1, w2, w3, w4, w5, w6 = 0, w7 = 0] = w;
  const zeroTo = (n: number) => w.slice(0, n).every((word) => word === 0);
  // IPv4-mapped ::ffff:a.b.c.d: the socket really talks IPv4 to a.b.c.d, loopback included.
  if (zeroTo(5) && w5 === 0xffff) return classifyIPv4(ipv4FromWords(w6, w7));
  // Forms that hand the embedded IPv4 to a translator or relay: judged by that IPv4, but an
  // embedded loopback is not *our* loopback, so allowInsecure does not relax it.
  let embedded: string | null = null;
  if (zeroTo(4) && w4 === 0xffff && w5 === 0) embedded = ipv4FromWords(w6, w7); // SIIT ::ffff:0:a.b.c.d
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) {
    embedded = ipv4FromWords(w6, w7); // NAT64 well-known prefix 64:ff9b::/96
  }
  if (w0 === 0x2002) embedded = ipv4FromWords(w1 ?? 0, w2 ?? 0); // 6to4 2002:aabb:ccdd::/48
  if (embedded !== null) return classifyIPv4(embedded) === 'public' ? 'public' : 'blocked';

  if (zeroTo(7) && w7 === 1) return 'loopback'; // ::1
  const canonical = w.map((word) => word.toString(16)).join(':');
  if (METADATA_ADDRESSES.check(canonical, 'ipv6')) return 'blocked';
  if (!GLOBAL_UNICAST_V6.check(canonical, 'ipv6')) return 'blocked';
  if (BLOCKED_V6.check(canonical, 'ipv6')) return 'blocked';
  return 'public';
}

function classify(address: string): AddressClass {
  // A zone index (fe80::1%eth0) only selects an interface; the address decides.
  const bare = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
  switch (isIP(bare)) {
    case 4:
      return classifyIPv4(bare);
    case 6:
      return classifyIPv6(bare);
    default:
      return 'blocked'; // not an IP address at all: fail closed
  }
}

/**
 * True when a webhook must not be delivered to `address`: loopback (unless `allowInsecure`),
 * private, link-local, carrier-grade NAT, unspecified, multicast/broadcast, reserved and
 * documentation ranges, non-global IPv6, cloud metadata, and anything that is not an IP address.
 * IPv4 embedded in IPv6 (mapped, SIIT, NAT64 64:ff9b::/96, 6to4) is judged by the IPv4.
 */
export function isBlockedAddress(address: string, policy: Pick<TargetPolicy, 'allowInsecure'>): boolean {
  const kind = classify(address);
  return kind === 'blocked' || (kind === 'loopback' && !policy.allowInsecure);
}

/** Host names that name the instance metadata service on AWS, GCP and friends. */
const METADATA_HOSTNAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

/**
 * Suffixes that are private by definition: `.internal` (reserved by ICANN for private use; GCP
 * metadata and AWS private DNS live there), `.local` (mDNS, Kubernetes `cluster.local`), `.svc`
 * (Kubernetes short service names), `.localdomain`, `.home.arpa` (RFC 8375).
 */
const PRIVATE_SUFFIXES = ['internal', 'local', 'svc', 'localdomain', 'home.arpa'];

/** Why a DNS name is refused before resolving it, or null when it may be resolved. */
function hostnameProblem(name: string, policy: Pick<TargetPolicy, 'allowInsecure'>): string | null {
  const host = name.toLowerCase().replace(/\.+$/, '');
  if (METADATA_HOSTNAMES.has(host)) return 'webhook URL host must not be a cloud metadata service';
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return policy.allowInsecure ? null : 'webhook URL host must not be localhost';
  }
  if (PRIVATE_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`))) {
    return 'webhook URL host must be a public DNS name';
  }
  // Single-label names only resolve through search domains, i.e. inside our own network.
  if (!host.includes('.')) return 'webhook URL host must be a fully qualified public DNS name';
  return null;
}

async function systemResolve(hostname: string): Promise<string[]> {
  const entries = await new Promise<LookupAddress[]>((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
  return entries.map((entry) => entry.address);
}

/**
 * Validates a partner's webhook URL: absolute `https:` (or `http:` with `allowInsecure`), at most
 * 2048 characters, no credentials, no fragment, no whitespace, a public host name or IP literal,
 * and every address the name resolves to allowed by `isBlockedAddress`. Returns the parsed
 * (normalised) URL and the addresses it resolved to, or a reason the partner can act on.
 */
export async function checkWebhookTarget(raw: string, policy: TargetPolicy): Promise<TargetCheck> {
  const refuse = (reason: string): TargetCheck => ({ ok: false, reason });
  if (typeof raw !== 'string' || raw.length === 0) return refuse('webhook URL is required');
  if (raw.length > MAX_URL_LENGTH) return refuse(`webhook URL must be at most ${MAX_URL_LENGTH} characters`);
  // The URL parser would silently drop these; refusing keeps stored and displayed URL identical.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  if (/[\u0000-\u0020\u007f]/.test(raw))
    return refuse('webhook URL must not contain whitespace or control characters');

  let url: URL;
  try {
    url = new URL(raw); // no base: relative references throw
  } catch {
    return refuse('webhook URL must be a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(policy.allowInsecure && url.protocol === 'http:')) {
    return refuse(policy.allowInsecure ? 'webhook URL must use https or http' : 'webhook URL must use https');
  }
  if (url.username !== '' || url.password !== '') return refuse('webhook URL must not contain credentials');
  // The fragment never reaches the partner's server, so a URL with one is not what it looks like.
  if (url.href.includes('#')) return refuse('webhook URL must not contain a fragment (#...)');
  if (url.href.length > MAX_URL_LENGTH) {
    return refuse(`webhook URL must be at most ${MAX_URL_LENGTH} characters`);
  }

  // WHATWG parsing already turned 2130706433, 0x7f.0.0.1, 0177.0.0.1 and 127.1 into 127.0.0.1.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') return refuse('webhook URL must have a host');
  if (isIP(host) !== 0) {
    if (isBlockedAddress(host, policy)) return refuse('webhook URL host is a private or reserved address');
    return { ok: true, url, addresses: [host] };
  }

  const nameProblem = hostnameProblem(host, policy);
  if (nameProblem) return refuse(nameProblem);

  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? systemResolve)(host);
  } catch {
    return refuse('webhook URL host could not be resolved');
  }
  if (!Array.isArray(addresses) || addresses.length === 0) {
    return refuse('webhook URL host could not be resolved');
  }
  if (addresses.some((address) => isBlockedAddress(address, policy))) {
    return refuse('webhook URL host resolves to a private or reserved address');
  }
  return { ok: true, url, addresses: [...addresses] };
}

function lookupError(message: string, code: string, hostname: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = code;
  Object.assign(error, { hostname });
  return error;
}

function requestedFamily(family: LookupOptions['family']): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

async function resolveForConnect(
  hostname: string,
  options: LookupOptions,
  policy: TargetPolicy,
): Promise<LookupAddress[]> {
  const family = requestedFamily(options.family);
  if (policy.resolve) {
    const addresses = await policy.resolve(hostname);
    return addresses.map((address) => ({ address, family: isIP(address.split('%')[0] ?? '') }));
  }
  return new Promise<LookupAddress[]>((resolve, reject) => {
    const { hints, order, verbatim } = options;
    dnsLookup(hostname, { family, hints, order, verbatim, all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
}

/**
 * A `dns.lookup`-compatible function for `http(s).request({ lookup })` or an Agent's options.
 * It resolves the name (with `policy.resolve`, else `dns.lookup`) and fails the connection with
 * an error whose code is `EWEBHOOK_BLOCKED` if the name is refused or ANY address it resolved to
 * is blocked — no connection is attempted. The error names the host, never the addresses (they
 * describe our network, and the message may reach the partner through delivery logs).
 * Honours `options.all` (Node's happy-eyeballs connect asks for all addresses) and
 * `options.family`, returning what `dns.lookup` would. Not called by Node for IP-literal hosts:
 * see the module comment.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    // The callback runs outside the promise chain, so whatever it throws is not swallowed.
    const finish = (error: NodeJS.ErrnoException | null, entries: LookupAddress[] = []): void => {
      process.nextTick(() => {
        if (error) return callback(error, options.all ? [] : '', undefined);
        const [first] = entries;
        if (options.all) return callback(null, entries);
        return callback(null, first?.address ?? '', first?.family);
      });
    };
    const blocked = () =>
      lookupError(`webhook delivery to ${hostname} refused: blocked destination`, BLOCKED_CODE, hostname);

    if (isIP(hostname) === 0 && hostnameProblem(hostname, policy) !== null) return finish(blocked());
    resolveForConnect(hostname, options, policy).then(
      (resolved) => {
        if (resolved.some((entry) => isBlockedAddress(entry.address, policy))) return finish(blocked());
        const family = requestedFamily(options.family);
        const usable = resolved.filter((entry) => family === 0 || entry.family === family);
        if (usable.length === 0) {
          return finish(lookupError(`getaddrinfo ENOTFOUND ${hostname}`, 'ENOTFOUND', hostname));
        }
        return finish(null, usable);
      },
      (error: unknown) =>
        finish(
          error instanceof Error
            ? error
            : lookupError(`getaddrinfo ENOTFOUND ${hostname}`, 'ENOTFOUND', hostname),
        ),
    );
  };
}
