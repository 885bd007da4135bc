import { AfterShip, AftershipError, AfterShipErrorCodes } from '@aftership/tracking-sdk';
import type { Tracking } from '@aftership/tracking-sdk/dist/model/Tracking';
import { RefusedError, UnavailableError } from '../../errors';
import type { ShopOrder, ShopTrackingEvent, TrackingSource } from '../shop';
import type { AftershipSettings } from './settings';
import { eventCodeOf, trackingEventOf, type AftershipCheckpoint } from './translate';

const timeOf = (c: AftershipCheckpoint) => Date.parse(c.checkpoint_time ?? c.created_at ?? '') || 0;

// Courier scans from AfterShip's Tracking API through its official SDK (@aftership/tracking-sdk,
// API 2026-07). An order's trackings are found by the tracking numbers of its shipments when the
// order source knows them (Shopify's fulfillments), else by the order id AfterShip holds for them
// (the order_id a shop's AfterShip integration writes). Rate limits as AfterShip documents them:
// a 429 carries X-RateLimit-Reset (when the window reopens, in Unix seconds); a short wait is
// taken inside the call, a long one fails it as unavailable so the case goes to a person.

/** AfterShip refused the key or the request: configuration, which retrying cannot fix. */
export class AftershipRefusedError extends RefusedError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** AfterShip is rate limiting or unreachable: retried later. */
export class AftershipUnavailableError extends UnavailableError {}

/** Where the tracking source finds an order's tracking numbers, when something (the Shopify order source) knows them. */
export type TrackingNumbersOf = (customerId: string, orderId: string) => Promise<string[]>;

/** Tries of a rate-limited call inside one attempt. */
const MAX_RATE_LIMITED_TRIES = 3;
/** Trackings asked for per page (AfterShip's maximum is 200). */
const PAGE_SIZE = 100;

/** Milliseconds until AfterShip's rate-limit window reopens, from its 429's headers; undefined when it gave none. */
export function rateLimitWaitMs(headers: Record<string, string | undefined> | null | undefined, nowMs: number): number | undefined {
  const retryAfter = Number(headers?.['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter >= 0 && headers?.['retry-after'] !== undefined) return retryAfter * 1000;
  const reset = Number(headers?.['x-ratelimit-reset']);
  if (!Number.isFinite(reset) || headers?.['x-ratelimit-reset'] === undefined) return undefined;
  return Math.max(0, reset * 1000 - nowMs);
}

function mapError(error: unknown): unknown {
  if (!(error instanceof AftershipError)) return error;
  const status = Number(error.status_code);
  if (error.code === AfterShipErrorCodes.TIMED_OUT || status >= 500 || !status)
    return new AftershipUnavailableError(`AfterShip did not answer (${status ? `HTTP ${status}` : error.message}); retry shortly`);
  return new AftershipRefusedError(`AfterShip refused the request (HTTP ${status}, ${error.code ?? 'error'}): ${error.message}`, String(error.code ?? status));
}

/**
 * The tracking source. `trackingNumbers` (the Shopify order source's) is how an order's
 * trackings are found when given; without it, by the order id AfterShip holds.
 */
export function createAftershipTrackingSource(
  settings: AftershipSettings,
  options: { trackingNumbers?: TrackingNumbersOf; sleep?: (ms: number) => Promise<void>; now?: () => number } = {},
): TrackingSource {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const aftership = new AfterShip({
    api_key: settings.apiKey,
    domain: settings.apiBase ?? 'https://api.aftership.com',
    timeout: settings.timeoutMs,
    // The SDK's own retries of 5xx wait seconds each; reads are retried by the activity instead.
    max_retry: 0,
    user_agent: 'casework',
  });

  async function call<T>(fn: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await fn();
      } catch (error) {
        const limited = error instanceof AftershipError && (error.code === AfterShipErrorCodes.TOO_MANY_REQUEST || Number(error.status_code) === 429);
        if (!limited) throw mapError(error);
        const wait = rateLimitWaitMs(error.response_headers as Record<string, string> | null, now()) ?? 1_000;
        if (wait > settings.maxRateLimitWaitMs || tries >= MAX_RATE_LIMITED_TRIES) {
          const seconds = Math.max(1, Math.ceil(wait / 1000));
          throw new AftershipUnavailableError(`AfterShip is rate limiting casework (about ${seconds} s until it answers again)`, { retryAfterSeconds: seconds });
        }
        await sleep(wait);
      }
    }
  }

  async function trackingsOf(customerId: string, order: ShopOrder): Promise<Tracking[]> {
    const numbers = options.trackingNumbers ? await options.trackingNumbers(customerId, order.orderId) : undefined;
    if (numbers && numbers.length === 0) return [];
    const query = numbers ? { tracking_numbers: numbers.join(',') } : { order_id: order.orderId };
    const trackings: Tracking[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(() => aftership.tracking.getTrackings({ ...query, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }));
      trackings.push(...(page.data.trackings ?? []));
      cursor = page.data.pagination?.has_next_page ? page.data.pagination.next_cursor : undefined;
    } while (cursor);
    // A tracking number is the carrier's, not the shop's: with the order id lookup, only trackings AfterShip holds for this order.
    return numbers ? trackings : trackings.filter((t) => t.order_id === order.orderId);
  }

  return {
    name: 'aftership',
    async events(customerId, order, page) {
      const trackings = await trackingsOf(customerId, order);
      const events: ShopTrackingEvent[] = trackings.flatMap((tracking) => {
        const checkpoints = tracking.checkpoints ?? [];
        // Proof of delivery is on the tracking: it belongs to its latest delivery scan only.
        const latestDelivery = checkpoints.filter((c) => eventCodeOf(c) === 'DLV').sort((a, b) => timeOf(b) - timeOf(a))[0];
        return checkpoints.map((checkpoint) => trackingEventOf(checkpoint, checkpoint === latestDelivery ? tracking : null));
      });
      events.sort((a, b) => b.occurredAt.localeCompare(a.occurredAt));
      return { total: events.length, items: events.slice(page.offset, page.offset + page.limit) };
    },
  };
}
