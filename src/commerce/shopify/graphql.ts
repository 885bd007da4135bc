import { createAdminApiClient } from '@shopify/admin-api-client';
import { RefusedError, UnavailableError } from '../../errors';
import { IdempotencyMismatchError } from '../payment-provider';
import type { ShopifySettings } from './settings';

// One GraphQL Admin API call through Shopify's official client, with Shopify's cost throttling
// handled as its documentation describes (shopify.dev, "GraphQL Admin API rate limits"): every
// response carries extensions.cost.throttleStatus (maximumAvailable, currentlyAvailable,
// restoreRate); a query whose requested cost is more than is available is answered with a
// THROTTLED error and no data. The wait until enough is restored is computed from those figures:
// a short wait is taken inside the call, a long one fails the call as unavailable (the activity's
// retry policy, then a person, take over), never with Shopify's words reaching a customer.

/** The cost figures Shopify returns on every response. */
export interface ShopifyCost {
  requestedQueryCost: number;
  actualQueryCost: number | null;
  throttleStatus: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
}

/** A GraphQL error as Shopify sends it. */
interface ShopifyGraphqlError {
  message: string;
  extensions?: { code?: string; [key: string]: unknown };
}

/** Shopify refused the request for a reason retrying cannot fix (the token, a scope, a query it does not accept). */
export class ShopifyRefusedError extends RefusedError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Shopify is throttling or unreachable: retried later, and past the retries a person takes the case. */
export class ShopifyUnavailableError extends UnavailableError {}

/**
 * Milliseconds until a throttled query can run: the points it needs beyond those available,
 * restored at restoreRate per second. Infinity when it can never run (needs more than the bucket holds).
 */
export function throttleWaitMs(cost: ShopifyCost): number {
  const { maximumAvailable, currentlyAvailable, restoreRate } = cost.throttleStatus;
  if (cost.requestedQueryCost > maximumAvailable || restoreRate <= 0) return Infinity;
  const missing = Math.max(0, cost.requestedQueryCost - currentlyAvailable);
  return Math.ceil((missing / restoreRate) * 1000);
}

/** How a call runs: one GraphQL operation and its variables, its data returned. */
export type ShopifyGraphql = <T>(operation: string, variables: Record<string, unknown>) => Promise<T>;

/** Throttled retries taken inside one call before it is reported unavailable. */
const MAX_THROTTLED_TRIES = 4;
/** An in-flight request with the same idempotency key: Shopify asks to try again shortly. */
const CONCURRENT_RETRY_MS = [250, 500, 1_000];

/** The GraphQL caller for one shop. `sleep` is a seam for tests of the waits' lengths. */
export function createShopifyGraphql(settings: ShopifySettings, options: { sleep?: (ms: number) => Promise<void> } = {}): ShopifyGraphql {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const base = settings.apiBase;
  const client = createAdminApiClient({
    storeDomain: settings.storeDomain,
    apiVersion: settings.apiVersion,
    accessToken: settings.accessToken,
    // A request abandoned on the way (a lost connection) is sent again with the same body: the
    // same query, or the same mutation under the same @idempotent key, so it is made once.
    retries: 2,
    userAgentPrefix: 'casework',
    customFetchApi: (url, init) => fetch(base ? url.replace(/^https:\/\/[^/]+/, base) : url, { ...init, signal: AbortSignal.timeout(settings.timeoutMs) }),
    // The client warns on the console about versions; casework pins its own and says so in its docs.
    logger: () => undefined,
  });

  return async <T>(operation: string, variables: Record<string, unknown>): Promise<T> => {
    let concurrentTries = 0;
    for (let tries = 1; ; tries++) {
      const response = await client.request<T>(operation, { variables });
      const errors = response.errors;
      if (!errors) return response.data as T;
      const graphQLErrors = (errors.graphQLErrors ?? []) as ShopifyGraphqlError[];
      const codes = graphQLErrors.map((e) => e.extensions?.code ?? '');
      if (codes.includes('THROTTLED')) {
        const cost = (response.extensions as { cost?: ShopifyCost } | undefined)?.cost;
        const wait = cost ? throttleWaitMs(cost) : Infinity;
        if (wait > settings.maxThrottleWaitMs || tries >= MAX_THROTTLED_TRIES) {
          const seconds = Number.isFinite(wait) ? Math.max(1, Math.ceil(wait / 1000)) : 60;
          throw new ShopifyUnavailableError(`Shopify is throttling this app (query cost ${cost?.requestedQueryCost ?? '?'}, about ${seconds} s until it can run)`, {
            retryAfterSeconds: seconds,
          });
        }
        await sleep(wait);
        continue;
      }
      if (codes.includes('IDEMPOTENCY_CONCURRENT_REQUEST') && concurrentTries < CONCURRENT_RETRY_MS.length) {
        await sleep(CONCURRENT_RETRY_MS[concurrentTries++]!);
        continue;
      }
      throw errorOf(errors.networkStatusCode, errors.message ?? '', graphQLErrors);
    }
  };
}

/** Shopify's answer as casework's error: throttling and outages retry, everything else is refused with Shopify's reason. */
function errorOf(status: number | undefined, message: string, graphQLErrors: ShopifyGraphqlError[]): Error {
  const code = graphQLErrors.find((e) => e.extensions?.code)?.extensions?.code;
  const detail = graphQLErrors.map((e) => e.message).join('; ') || message;
  if (code === 'IDEMPOTENCY_KEY_PARAMETER_MISMATCH') return new IdempotencyMismatchError(`Shopify refused the idempotency key: ${detail}`);
  if (code === 'IDEMPOTENCY_CONCURRENT_REQUEST') return new ShopifyUnavailableError('Shopify is still making the same request; retry shortly', { retryAfterSeconds: 2 });
  if (code === 'INTERNAL_SERVER_ERROR') return new ShopifyUnavailableError(`Shopify failed the request (${detail}); retry shortly`);
  if (status === 401 || status === 403) return new ShopifyRefusedError(`Shopify refused the access token or a scope it needs (HTTP ${status})`, `http_${status}`);
  if (status === undefined || status === 429 || status >= 500) {
    return new ShopifyUnavailableError(`Shopify did not answer (${status ? `HTTP ${status}` : message.replace(/^Admin API Client: /, '') || 'no response'}); retry shortly`);
  }
  return new ShopifyRefusedError(`Shopify refused the request${code ? ` (${code})` : ''}: ${detail}`, code ?? `http_${status}`);
}
