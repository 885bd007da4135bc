import { acceptFreshdeskWebhook } from './freshdesk-inbound';
import { acceptIntercomWebhook } from './intercom-inbound';
import type { DeskSettings } from './settings';
import type { InboundDeskName, WebhookDelivery, WebhookResult } from './types';
import { acceptZendeskWebhook } from './zendesk-inbound';

/** Metric names the server records for webhooks and the activity for posts (labels in the TSDoc). */
export const DESK_METRICS = {
  /** Counter, labels {desk, outcome: accepted | unmapped | ignored | rejected}: what the adapter made of a delivery. */
  webhooksReceived: 'casework_desk_webhooks_received_total',
  /** Counter, labels {desk, reason: bad_signature | stale_timestamp | malformed}. */
  webhooksRejected: 'casework_desk_webhooks_rejected_total',
  /** Counter, labels {desk, outcome: DeliveryOutcome}: what became of a delivery, as the desk was answered. */
  deliveries: 'casework_desk_deliveries_total',
  /** Gauge: deliveries parked for a person (unmapped requester, refused by the ticket gate), across every replica. */
  parkedDeliveries: 'casework_desk_parked_deliveries',
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
