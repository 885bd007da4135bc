import { TemporalUnavailableError } from '../temporal/connection';

// gRPC status codes that mean "Temporal did not take the call; the same call later may succeed".
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
const RESOURCE_EXHAUSTED = 8;
const RETRYABLE_CODES = new Set([UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * True when an error (or one of its causes) says Temporal could not be reached or did not
 * answer in time. The endpoint answers these with 503 and Retry-After: the caller resends the
 * same event, and the workflow drops a repeated eventId, so nothing is lost or doubled.
 */
export function isTemporalUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 8; depth++) {
    if (current instanceof TemporalUnavailableError) return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'number' && RETRYABLE_CODES.has(code)) return true;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
