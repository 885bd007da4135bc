import { ApplicationFailure } from '@temporalio/common';
import { BadInputError, CaseworkError, NotFoundError, RefusedError, UnavailableError, isTransient } from '../errors';
import type { DeskName } from './types';

// How a desk's HTTP answer becomes one of casework's error kinds, so postToDesk fails the way
// Temporal and the workflow can act on: rate limits and outages retry (a 429 after the delay
// the desk asked for), a rejected credential or a missing ticket fails at once with a message
// an operator can act on, and the workflow turns that into needs_human.

/** The desk asked casework to slow down (429); retry after `retryAfterSeconds`, not sooner. */
export class DeskRateLimitedError extends UnavailableError {}

/** The desk did not answer, or answered 5xx; the post may have been applied, so the retry checks first. */
export class DeskUnavailableError extends UnavailableError {}

/** The desk refused casework's credentials (401) or their permissions (403). Retrying cannot help. */
export class DeskAuthError extends RefusedError {}

/** The desk has no such ticket or conversation (404). */
export class DeskNotFoundError extends NotFoundError {}

/** The desk refused the request's shape or content (400, 422). */
export class DeskRequestError extends BadInputError {}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  const at = Date.parse(trimmed);
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - now) / 1000)) : undefined;
}

/** The headers a desk says when to come back in: Retry-After (Zendesk, Freshdesk) and X-RateLimit-Reset (Intercom, a unix time in seconds). */
export interface RateLimitHeaders {
  retryAfter: string | null;
  rateLimitReset: string | null;
}

/** The longest wait casework takes from a desk's header; a value past it (a clock far off, a typo) is capped. */
export const MAX_RATE_LIMIT_WAIT_SECONDS = 3_600;
/** The wait when a 429 names none. */
export const DEFAULT_RATE_LIMIT_WAIT_SECONDS = 30;

/**
 * Seconds until a rate-limited desk takes calls again: Retry-After when sent, else
 * X-RateLimit-Reset (Intercom documents only this one), else the default; at least 1, at most
 * MAX_RATE_LIMIT_WAIT_SECONDS.
 */
export function rateLimitDelaySeconds(headers: RateLimitHeaders, now = Date.now()): number {
  let seconds = parseRetryAfter(headers.retryAfter, now);
  if (seconds === undefined && headers.rateLimitReset && /^\d{1,12}$/.test(headers.rateLimitReset.trim())) {
    seconds = Math.ceil(Number(headers.rateLimitReset.trim()) - now / 1000);
  }
  return Math.min(MAX_RATE_LIMIT_WAIT_SECONDS, Math.max(1, seconds ?? DEFAULT_RATE_LIMIT_WAIT_SECONDS));
}

const CREDENTIALS: Record<DeskName, string> = {
  zendesk: 'CASEWORK_ZENDESK_EMAIL / CASEWORK_ZENDESK_API_TOKEN',
  intercom: 'CASEWORK_INTERCOM_ACCESS_TOKEN',
  freshdesk: 'CASEWORK_FRESHDESK_API_KEY',
  webhook: 'CASEWORK_DESK_WEBHOOK_SECRET and the receiver',
};

/**
 * The error for a desk's non-2xx answer. `what` says what casework was doing ("posting reply 2
 * to ticket 5158"); `detail` is the desk's own error text, already stripped of anything secret.
 */
export function deskHttpError(desk: DeskName, status: number, what: string, limit: RateLimitHeaders, detail = ''): CaseworkError {
  const said = detail ? `: ${detail.slice(0, 300)}` : '';
  const retryAfter = limit.retryAfter;
  if (status === 429) {
    const seconds = rateLimitDelaySeconds(limit);
    return new DeskRateLimitedError(`${desk} rate-limited casework while ${what} (HTTP 429); retrying after ${seconds} s`, { retryAfterSeconds: seconds });
  }
  if (status === 401 || status === 403) {
    return new DeskAuthError(`${desk} refused casework's credentials while ${what} (HTTP ${status}); check ${CREDENTIALS[desk]}${said}`);
  }
  if (status === 404) return new DeskNotFoundError(`${desk} found nothing while ${what} (HTTP 404): the ticket or conversation may be deleted or merged${said}`);
  if (status >= 500 || status === 408 || status === 409) {
    return new DeskUnavailableError(`${desk} failed while ${what} (HTTP ${status}); will check and retry${said}`, { retryAfterSeconds: parseRetryAfter(retryAfter) });
  }
  return new DeskRequestError(`${desk} refused the request while ${what} (HTTP ${status})${said}`);
}

/**
 * A desk error as the activity failure Temporal acts on: transient kinds retry (a rate limit
 * after exactly the delay the desk asked for, others under the activity's backoff), every other
 * kind is non-retryable and carries its kind, so the workflow can move the case to needs_human.
 */
export function toDeskFailure(error: unknown): unknown {
  if (!(error instanceof CaseworkError)) return error;
  return ApplicationFailure.create({
    type: error.name,
    message: error.message,
    nonRetryable: !isTransient(error),
    details: [{ kind: error.kind }],
    ...(error instanceof DeskRateLimitedError && error.retryAfterSeconds !== undefined ? { nextRetryDelay: `${error.retryAfterSeconds}s` } : {}),
  });
}
