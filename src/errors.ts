import { ApplicationFailure } from '@temporalio/common';

// casework's one error backbone. Every named error says what kind of failure it is, and the
// kind alone decides the CLI's exit code, the HTTP status and whether Temporal retries it, so
// the three mappings are written once, here (docs/architecture.md, "Errors").

/** What went wrong, as the caller can act on it. */
export type ErrorKind =
  /** The request was wrong: a field, a value, a command line. Retrying the same request fails again. */
  | 'bad_input'
  /** What the request names does not exist (an investigation, a note, an order). */
  | 'not_found'
  /** The request contradicts what is already recorded (another customer's ticket, a reused event id). */
  | 'conflict'
  /** A rule refused it (an approver's limit, a decision already taken). */
  | 'refused'
  /** The state it needs is not reached yet (a decision before the request is pending): retry shortly. */
  | 'not_yet'
  /** A dependency (Temporal, Postgres, the model, a desk) is unreachable: retry later. */
  | 'unavailable';

/** The base of every error casework raises on purpose. `kind` says how callers should treat it. */
export class CaseworkError extends Error {
  /** How callers should treat this error. */
  readonly kind: ErrorKind;
  /** Seconds after which a retry may succeed, for `unavailable` and `not_yet`. */
  readonly retryAfterSeconds?: number;

  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    this.name = new.target.name;
  }
}

/** A request with a wrong field or value; the message names it. */
export class BadInputError extends CaseworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad_input', message, options);
  }
}

/** Something the request names does not exist. */
export class NotFoundError extends CaseworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('not_found', message, options);
  }
}

/** The request contradicts what is recorded. */
export class ConflictError extends CaseworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('conflict', message, options);
  }
}

/** A rule refused the request; the message is the rule's own words. */
export class RefusedError extends CaseworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('refused', message, options);
  }
}

/** The request came too early; the same request succeeds once the state is reached. */
export class NotYetError extends CaseworkError {
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super('not_yet', message, { retryAfterSeconds: 1, ...options });
  }
}

/** A dependency is unreachable; retry later. The message names the dependency, never its credentials. */
export class UnavailableError extends CaseworkError {
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super('unavailable', message, { retryAfterSeconds: 5, ...options });
  }
}

/** The kind of any thrown value: casework's own errors say it; anything else is unknown. */
export function kindOf(error: unknown): ErrorKind | undefined {
  return error instanceof CaseworkError ? error.kind : undefined;
}

/** True when retrying the same request later may succeed. */
export function isTransient(error: unknown): boolean {
  const kind = kindOf(error);
  return kind === 'unavailable' || kind === 'not_yet';
}

/** The CLI's exit code: 2 the request was wrong or refused, 1 casework could not do it (now). */
export function exitCodeOf(error: unknown): 1 | 2 {
  const kind = kindOf(error);
  return kind === undefined || kind === 'unavailable' || kind === 'not_yet' ? 1 : 2;
}

const HTTP_STATUS: Record<ErrorKind, number> = {
  bad_input: 400,
  not_found: 404,
  conflict: 409,
  refused: 422,
  not_yet: 503,
  unavailable: 503,
};

/** The HTTP status for an error; 500 for anything casework did not raise on purpose. */
export function httpStatusOf(error: unknown): number {
  const kind = kindOf(error);
  return kind === undefined ? 500 : HTTP_STATUS[kind];
}

/** Seconds for a `Retry-After` header, when the error is transient. */
export function retryAfterOf(error: unknown): number | undefined {
  return error instanceof CaseworkError && isTransient(error) ? (error.retryAfterSeconds ?? 5) : undefined;
}

/**
 * The error as an activity failure Temporal understands: transient kinds retry under the
 * activity's policy, every other kind fails at once (retrying a wrong request cannot help).
 * Unknown errors are returned unchanged, so Temporal retries them as it always does.
 */
export function toApplicationFailure(error: unknown): unknown {
  if (!(error instanceof CaseworkError)) return error;
  return ApplicationFailure.create({
    type: error.name,
    message: error.message,
    nonRetryable: !isTransient(error),
    details: [{ kind: error.kind }],
    cause: error.cause instanceof Error ? error.cause : undefined,
  });
}
