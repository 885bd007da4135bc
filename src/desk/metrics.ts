import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DESK_METRICS } from './inbound';
import type { PostToDeskObserver } from './post';
import type { WebhookRouteDeps } from './route';

/** Metric names of the outbound side beyond DESK_METRICS. */
export const DESK_OUTBOUND_METRICS = {
  /** Counter, labels {desk, handling: waited (inside the post) | deferred (to Temporal's retry)}. */
  rateLimited: 'casework_desk_rate_limited_total',
  /** Counter, labels {desk}: the seconds desks asked casework to wait, in all. */
  rateLimitSeconds: 'casework_desk_rate_limit_seconds_total',
} as const;

/** The desk metrics, registered on casework's registry, as the hooks the route and postToDesk call. */
export interface DeskMetrics {
  route: Pick<WebhookRouteDeps, 'received' | 'rejected' | 'delivered' | 'acceptSeconds'>;
  observer: PostToDeskObserver;
  /** Makes the parked-deliveries gauge read `count` (Postgres, so every replica reports the same) at each scrape. */
  watchParked(count: () => Promise<number>): void;
}

/** Registers the desk metrics (names in DESK_METRICS) on `registry`. Call once per registry. */
export function createDeskMetrics(registry: Registry): DeskMetrics {
  const received = new Counter({
    name: DESK_METRICS.webhooksReceived,
    help: 'Desk webhook deliveries, by desk and what the adapter made of them: accepted, unmapped (no customer mapped by configuration), ignored (a topic casework does not handle) or rejected.',
    labelNames: ['desk', 'outcome'] as const,
    registers: [registry],
  });
  const rejected = new Counter({
    name: DESK_METRICS.webhooksRejected,
    help: 'Desk webhook deliveries refused, by desk and reason: bad_signature, stale_timestamp (not from the desk: 401), malformed (from the desk, unreadable: 202).',
    labelNames: ['desk', 'reason'] as const,
    registers: [registry],
  });
  const delivered = new Counter({
    name: DESK_METRICS.deliveries,
    help: 'Desk webhook deliveries by desk and what the desk was answered: accepted (handed to an investigation), duplicate (seen before), parked (waits for a person), ignored, refused, failed (503: retried by the desk).',
    labelNames: ['desk', 'outcome'] as const,
    registers: [registry],
  });
  let countParked: (() => Promise<number>) | undefined;
  new Gauge({
    name: DESK_METRICS.parkedDeliveries,
    help: 'Desk deliveries parked for a person (requester not mapped to a customer, or refused by the ticket gate), read from Postgres at each scrape.',
    registers: [registry],
    async collect() {
      if (!countParked) return;
      // A scrape while Postgres is away keeps the last value rather than failing the whole endpoint.
      const n = await countParked().catch(() => undefined);
      if (n !== undefined) this.set(n);
    },
  });
  const acceptSeconds = new Histogram({
    name: DESK_METRICS.webhookAcceptSeconds,
    help: 'Time to verify and map one desk webhook, in seconds, by desk (the Temporal hand-off is not included).',
    labelNames: ['desk'] as const,
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01],
    registers: [registry],
  });
  const posted = new Counter({
    name: DESK_METRICS.repliesPosted,
    help: 'Replies and notes put on desk tickets, by desk, kind (reply, note) and outcome (posted, already_posted: found from an earlier attempt).',
    labelNames: ['desk', 'kind', 'outcome'] as const,
    registers: [registry],
  });
  const failed = new Counter({
    name: DESK_METRICS.repliesFailed,
    help: 'Failed attempts to post to a desk, by desk, kind and error (DeskRateLimitedError and DeskUnavailableError retry; DeskAuthError, DeskNotFoundError, DeskRequestError do not).',
    labelNames: ['desk', 'kind', 'error'] as const,
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: DESK_OUTBOUND_METRICS.rateLimited,
    help: "Desk answers of 429, by desk and handling: waited (out inside the post, within CASEWORK_DESK_RATE_LIMIT_WAIT_SECONDS) or deferred (Temporal retries after the desk's delay).",
    labelNames: ['desk', 'handling'] as const,
    registers: [registry],
  });
  const rateLimitSeconds = new Counter({
    name: DESK_OUTBOUND_METRICS.rateLimitSeconds,
    help: 'Seconds desks asked casework to wait (Retry-After, or Intercom X-RateLimit-Reset), in all, by desk.',
    labelNames: ['desk'] as const,
    registers: [registry],
  });
  return {
    route: {
      received: (desk, outcome) => received.inc({ desk, outcome }),
      rejected: (desk, reason) => rejected.inc({ desk, reason }),
      delivered: (desk, outcome) => delivered.inc({ desk, outcome }),
      acceptSeconds: (desk, seconds) => acceptSeconds.observe({ desk }, seconds),
    },
    observer: {
      posted: (desk, kind, outcome) => posted.inc({ desk, kind, outcome }),
      failed: (desk, kind, error) => failed.inc({ desk, kind, error }),
      rateLimited: (desk, seconds, handling) => {
        rateLimited.inc({ desk, handling });
        rateLimitSeconds.inc({ desk }, seconds);
      },
    },
    watchParked(count) {
      countParked = count;
    },
  };
}
