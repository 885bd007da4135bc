import { acceptFreshdeskWebhook } from './freshdesk-inbound';
import { acceptIntercomWebhook } from './intercom-inbound';
import type { DeskSettings } from './settings';
import type { InboundDeskName, WebhookDelivery, WebhookResult } from './types';
import { acceptZendeskWebhook } from './zendesk-inbound';

/** Metric names the server records for webhooks and the activity for posts (labels in the TSDoc). */
export const DESK_METRICS = {
  /** Counter, labels {desk, outcome: accepted | ignored | rejected}. */
  webhooksReceived: 'casework_desk_webhooks_received_total',
  /** Counter, labels {desk, reason: bad_signature | stale_timestamp | malformed | unmapped_requester}. */
  webhooksRejected: 'casework_desk_webhooks_rejected_total',
  /** Histogram (seconds), labels {desk}: verify + map, the part of the answer casework controls. */
  webhookAcceptSeconds: 'casework_desk_webhook_accept_seconds',
  /** Counter, labels {desk, kind: reply | note, outcome: posted | already_posted}. */
  repliesPosted: 'casework_desk_posts_total',
  /** Counter, labels {desk, kind, error: the error class, e.g. DeskAuthError, DeskRateLimitedError}. */
  repliesFailed: 'casework_desk_post_failures_total',
} as const;

/**
 * Runs the adapter for `desk` on one delivery. A desk that is not configured for webhooks
 * answers undefined: the route should be 404, as if it did not exist.
 */
export function acceptWebhook(settings: Pick<DeskSettings, 'inbound'>, desk: InboundDeskName, delivery: WebhookDelivery, now: Date): WebhookResult | undefined {
  if (desk === 'zendesk') return settings.inbound.zendesk && acceptZendeskWebhook(delivery, settings.inbound.zendesk, now);
  if (desk === 'intercom') return settings.inbound.intercom && acceptIntercomWebhook(delivery, settings.inbound.intercom, now);
  return settings.inbound.freshdesk && acceptFreshdeskWebhook(delivery, settings.inbound.freshdesk, now);
}

/**
 * Remembers the event ids of the last `capacity` deliveries that reached Temporal, so the server
 * can answer a redelivery at once without a Temporal call. Remember an id only after the signal
 * succeeded (a failed one must be retried). Only an optimisation: the workflow drops a repeated
 * eventId anyway, which is what makes redeliveries safe across restarts and replicas.
 */
export function createRecentDeliveries(capacity = 10_000): { has(eventId: string): boolean; remember(eventId: string): void } {
  const ids = new Set<string>();
  return {
    has: (eventId) => ids.has(eventId),
    remember(eventId) {
      ids.delete(eventId);
      ids.add(eventId);
      if (ids.size > capacity) ids.delete(ids.values().next().value as string);
    },
  };
}
