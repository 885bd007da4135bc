import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, RateLimitError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError } from '../config';
import type { Model } from './port';

/** ApplicationFailure types the model activity fails with; retry policies can name them. */
export const MODEL_FAILURE = {
  rateLimited: 'ModelRateLimited',
  overloaded: 'ModelOverloaded',
  unavailable: 'ModelUnavailable',
  connectionFailed: 'ModelConnectionFailed',
  timedOut: 'ModelTimedOut',
  requestRejected: 'ModelRequestRejected',
} as const;

/** The Anthropic adapter was built without an API key; set ANTHROPIC_API_KEY or use the offline investigator. */
export class MissingApiKeyError extends ConfigError {
  override name = 'MissingApiKeyError';
  constructor() {
    super('ANTHROPIC_API_KEY is empty: set it to call the Anthropic API, or leave it unset to run the offline investigator');
  }
}

// The same statuses the SDK itself would retry; 529 (overloaded) is covered by >= 500.
const TRANSIENT_STATUSES = new Set([408, 409, 429]);

/**
 * Maps an error thrown by a model call to what Temporal should do with it: rate limits,
 * overload, 5xx and connection problems become retryable ApplicationFailures (honouring
 * retry-after); other 4xx become non-retryable `ModelRequestRejected` failures carrying the
 * API's own message, since sending the same request again cannot succeed. Anything that is
 * not an SDK API error (including an aborted request) is returned unchanged.
 */
export function toActivityFailure(error: unknown): Error {
  if (!(error instanceof APIError) || error instanceof APIUserAbortError) {
    return error instanceof Error ? error : new Error(String(error));
  }
  // `instanceof` fills APIError's type parameters with `any`; these are the SDK's own defaults.
  return apiFailure(error as APIError);
}

function apiFailure(error: APIError): Error {
  const message = describe(error);
  const details = [{ status: error.status ?? null, request_id: error.requestID ?? null, error_code: error.errorCode }];
  if (error instanceof APIConnectionTimeoutError) {
    return ApplicationFailure.create({ message, type: MODEL_FAILURE.timedOut, details, cause: error });
  }
  if (error instanceof APIConnectionError) {
    return ApplicationFailure.create({ message, type: MODEL_FAILURE.connectionFailed, details, cause: error });
  }
  const status = error.status ?? 0;
  if (status >= 500 || TRANSIENT_STATUSES.has(status)) {
    const type = error instanceof RateLimitError ? MODEL_FAILURE.rateLimited : status === 529 ? MODEL_FAILURE.overloaded : MODEL_FAILURE.unavailable;
    const nextRetryDelay = retryAfterMs(error.headers);
    return ApplicationFailure.create({ message, type, details, cause: error, ...(nextRetryDelay ? { nextRetryDelay } : {}) });
  }
  return ApplicationFailure.create({
    message,
    type: MODEL_FAILURE.requestRejected,
    nonRetryable: true,
    details,
    cause: error,
  });
}

/**
 * The model port with its errors already mapped for Temporal (see toActivityFailure). Applied
 * once, where activities are built, so every activity that calls the model fails alike.
 */
export function withModelFailures(model: Model): Model {
  return {
    label: model.label,
    offline: model.offline,
    async create(request) {
      try {
        return await model.create(request);
      } catch (error) {
        throw toActivityFailure(error);
      }
    },
  };
}

/** "invalid_request_error: messages: ..." when the API said so, else the SDK's own message. */
function describe(error: APIError): string {
  return error.type && error.apiMessage ? `${error.type}: ${error.apiMessage}` : error.message;
}

/** The wait the API asked for, in ms: retry-after-ms, else retry-after as seconds or an HTTP date. */
export function retryAfterMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  const ms = parseFloat(headers?.get('retry-after-ms') ?? '');
  if (ms > 0) return Math.ceil(ms);
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  const wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  return wait > 0 ? Math.ceil(wait) : undefined;
}
