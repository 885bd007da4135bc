import { Counter, Histogram, type Registry } from 'prom-client';
import { DESK_METRICS } from './inbound';
import type { PostToDeskObserver } from './post';
import type { WebhookRouteDeps } from './route';

/** The desk metrics, registered on casework's registry, as the hooks the route and postToDesk call. */
export interface DeskMetrics {
  route: Pick<WebhookRouteDeps, 'received' | 'rejected' | 'acceptSeconds'>;
  observer: PostToDeskObserver;
}

/** Registers the desk metrics (names in DESK_METRICS) on `registry`. Call once per registry. */
export function createDeskMetrics(registry: Registry): DeskMetrics {
  const received = new Counter({
    name: DESK_METRICS.webhooksReceived,
    help: 'Desk webhook deliveries, by desk and outcome: accepted, ignored (a topic casework does not handle) or rejected.',
    labelNames: ['desk', 'outcome'] as const,
    registers: [registry],
  });
  const rejected = new Counter({
    name: DESK_METRICS.webhooksRejected,
    help: 'Desk webhook deliveries refused, by desk and reason: bad_signature, stale_timestamp, malformed, unmapped_requester.',
    labelNames: ['desk', 'reason'] as const,
    registers: [registry],
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
  return {
    route: {
      received: (desk, outcome) => received.inc({ desk, outcome }),
      rejected: (desk, reason) => rejected.inc({ desk, reason }),
      acceptSeconds: (desk, seconds) => acceptSeconds.observe({ desk }, seconds),
    },
    observer: {
      posted: (desk, kind, outcome) => posted.inc({ desk, kind, outcome }),
      failed: (desk, kind, error) => failed.inc({ desk, kind, error }),
    },
  };
}
