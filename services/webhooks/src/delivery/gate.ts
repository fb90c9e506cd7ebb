/**
 * Delivery slots of one worker process: at most `total` requests to partners in flight, at
 * most `perOrganization` of them to one organization. A caller over either limit waits in
 * its organization's line; freed slots go round-robin over the organizations waiting, so a
 * busy partner cannot starve a quiet one.
 *
 * A request still without an answer after `slowMs` is parked: it keeps its partner's slot but
 * gives its process slot back (at most `total` requests are parked; beyond that they keep
 * theirs), so a partner that never answers holds sockets, not the other partners' capacity.
 *
 * A slow partner (every one of its slots taken, none freed for `slowMs`) does not keep
 * callers waiting in memory: they are told to step aside ("offload") for about as long as
 * its oldest request may still take, and go through the delayed queue instead. Healthy
 * partners never wait longer than their own backlog takes.
 */
export type Grant = { kind: 'go'; release: () => void } | { kind: 'offload'; delayMs: number };

interface Waiter {
  resolve(grant: Grant): void;
}

interface Running {
  org: OrgSlots;
  startedAt: number;
  parked: boolean;
}

interface OrgSlots {
  /** Requests in flight, parked ones included. */
  active: number;
  running: Set<Running>;
  lastDoneAt: number;
  waiters: Waiter[];
}

export interface DeliveryGate {
  /** A slot now, or null when the caller must wait (then call `acquire`). */
  tryAcquire(organizationId: string): (() => void) | null;
  /** A slot once one is free, or an offload when the organization is slow. */
  acquire(organizationId: string): Promise<Grant>;
  /** Requests in flight to this organization, parked ones included (tests, diagnostics). */
  inFlight(organizationId: string): number;
  close(): void;
}

export function createDeliveryGate(options: {
  total: number;
  perOrganization: number;
  /** A request without an answer for this long is parked; a saturated partner with nothing finished for this long is slow. */
  slowMs: number;
  /** The request timeout: how long a slow organization's oldest request may still hold its slot. */
  timeoutMs: number;
  now?: () => number;
}): DeliveryGate {
  const now = options.now ?? Date.now;
  const orgs = new Map<string, OrgSlots>();
  /** Organizations with waiters, in round-robin order. */
  const waiting = new Set<string>();
  /** Requests holding a process slot, oldest first. */
  const unparked = new Set<Running>();
  let parked = 0;
  let waiters = 0;
  let sweeper: NodeJS.Timeout | undefined;

  const slotsOf = (id: string): OrgSlots => {
    let org = orgs.get(id);
    if (!org) {
      org = { active: 0, running: new Set(), lastDoneAt: 0, waiters: [] };
      orgs.set(id, org);
    }
    return org;
  };

  const take = (id: string, org: OrgSlots): (() => void) => {
    const request: Running = { org, startedAt: now(), parked: false };
    org.active++;
    org.running.add(request);
    unparked.add(request);
    armSweeper();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      org.active--;
      org.running.delete(request);
      if (request.parked) parked--;
      else unparked.delete(request);
      org.lastDoneAt = now();
      pump();
      if (org.active === 0 && org.waiters.length === 0) orgs.delete(id);
    };
  };

  /** Parks requests running longer than slowMs (oldest first); true when a process slot came free. */
  const park = (at: number): boolean => {
    let freed = false;
    for (const request of unparked) {
      if (parked >= options.total || at - request.startedAt <= options.slowMs) break;
      unparked.delete(request);
      request.parked = true;
      parked++;
      freed = true;
    }
    return freed;
  };

  const oldestStart = (org: OrgSlots): number => {
    let oldest = Number.POSITIVE_INFINITY;
    for (const r of org.running) oldest = Math.min(oldest, r.startedAt);
    return oldest;
  };

  const isSlow = (org: OrgSlots, at: number): boolean => {
    if (org.active < options.perOrganization || org.running.size === 0) return false;
    return at - Math.max(oldestStart(org), org.lastDoneAt) > options.slowMs;
  };

  const offloadDelay = (org: OrgSlots, at: number): number => {
    const oldest = org.running.size > 0 ? oldestStart(org) : at;
    const untilFree = oldest + options.timeoutMs - at;
    const base = Math.min(options.timeoutMs, Math.max(options.slowMs, untilFree));
    return base + Math.floor(Math.random() * options.slowMs);
  };

  const hasProcessSlot = (): boolean => unparked.size < options.total || park(now());

  function pump(): void {
    while (waiting.size > 0 && hasProcessSlot()) {
      let granted = false;
      for (const id of waiting) {
        const org = orgs.get(id);
        if (!org || org.waiters.length === 0) {
          waiting.delete(id);
          continue;
        }
        if (org.active >= options.perOrganization) continue;
        const waiter = org.waiters.shift() as Waiter;
        waiters--;
        // To the back of the line: the next free slot goes to another organization first.
        waiting.delete(id);
        if (org.waiters.length > 0) waiting.add(id);
        waiter.resolve({ kind: 'go', release: take(id, org) });
        granted = true;
        break;
      }
      if (!granted) return;
    }
  }

  function sweep(): void {
    const at = now();
    park(at);
    for (const id of waiting) {
      const org = orgs.get(id);
      if (!org || !isSlow(org, at)) continue;
      const delayMs = offloadDelay(org, at);
      const out = org.waiters.splice(0);
      waiters -= out.length;
      waiting.delete(id);
      for (const w of out) w.resolve({ kind: 'offload', delayMs });
    }
    pump();
    if (waiters === 0 && unparked.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  function armSweeper(): void {
    if (sweeper) return;
    sweeper = setInterval(sweep, Math.max(10, Math.floor(options.slowMs / 2)));
    sweeper.unref();
  }

  function tryAcquire(id: string): (() => void) | null {
    // With a process slot free, every organization still waiting is at its own limit (pump
    // would have served it), so only this organization's own line can come first.
    if (!hasProcessSlot()) return null;
    const org = orgs.get(id);
    if (org && (org.active >= options.perOrganization || org.waiters.length > 0)) return null;
    return take(id, org ?? slotsOf(id));
  }

  return {
    tryAcquire,
    acquire(id) {
      const release = tryAcquire(id);
      if (release) return Promise.resolve({ kind: 'go', release });
      const org = slotsOf(id);
      const at = now();
      if (isSlow(org, at)) return Promise.resolve({ kind: 'offload', delayMs: offloadDelay(org, at) });
      return new Promise<Grant>((resolve) => {
        org.waiters.push({ resolve });
        waiters++;
        waiting.add(id);
        armSweeper();
        pump();
      });
    },
    inFlight: (id) => orgs.get(id)?.active ?? 0,
    close() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
    },
  };
}
