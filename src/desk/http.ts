import { deskHttpError, DeskUnavailableError, type RateLimitHeaders } from './errors';
import type { DeskName } from './types';

/** One JSON call to a desk's API. */
export interface DeskRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  /** Authorization and any desk-specific headers. Never logged, never put in an error. */
  headers: Record<string, string>;
  body?: unknown;
  /** What casework was doing, for error messages: "posting reply 2 to ticket 5158". */
  what: string;
  timeoutMs: number;
  /** Non-2xx statuses the caller handles itself (deskCall returns them instead of throwing). */
  accept?: number[];
}

/**
 * Makes the call and returns the parsed JSON answer. A timeout or a dropped connection is a
 * DeskUnavailableError (the desk may have applied it: callers check before retrying a write);
 * a non-2xx answer is the kind deskHttpError gives it.
 */
export async function deskFetch(desk: DeskName, request: DeskRequest, fetchImpl: typeof fetch = fetch): Promise<unknown> {
  return (await deskCall(desk, request, fetchImpl)).json;
}

/** The same call, answering the status too (for statuses in `request.accept`). */
export async function deskCall(desk: DeskName, request: DeskRequest, fetchImpl: typeof fetch = fetch): Promise<{ status: number; json: unknown }> {
  let response: Response;
  try {
    response = await fetchImpl(request.url, {
      method: request.method,
      headers: { accept: 'application/json', ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers },
      body: request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : JSON.stringify(request.body),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
    const why = timedOut ? `did not answer within ${request.timeoutMs} ms` : `could not be reached (${(error as Error).message})`;
    throw new DeskUnavailableError(`${desk} ${why} while ${request.what}; the retry checks whether it was applied before posting again`, { cause: error });
  }
  const text = await response.text().catch(() => '');
  if (request.accept?.includes(response.status)) return { status: response.status, json: undefined };
  if (!response.ok) throw deskHttpError(desk, response.status, request.what, rateLimitHeaders(response.headers), errorText(text));
  if (!text) return { status: response.status, json: undefined };
  try {
    return { status: response.status, json: JSON.parse(text) };
  } catch {
    throw new DeskUnavailableError(`${desk} answered HTTP ${response.status} with a body that is not JSON while ${request.what}`);
  }
}

/** The rate-limit headers of an answer. */
function rateLimitHeaders(headers: Headers): RateLimitHeaders {
  return { retryAfter: headers.get('retry-after'), rateLimitReset: headers.get('x-ratelimit-reset') };
}

/** The desk's own error words from a JSON error body, one line. */
function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const parts = [parsed.error, parsed.description, parsed.message, (parsed.errors as unknown[] | undefined)?.map((e) => JSON.stringify(e)).join(', ')];
    return parts.filter((p) => typeof p === 'string' && p).join(' - ');
  } catch {
    return text.replace(/\s+/g, ' ').slice(0, 200);
  }
}

/** An HTTP Basic header value. */
export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
