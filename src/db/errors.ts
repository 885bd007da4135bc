import { ConflictError, UnavailableError } from '../errors';

export { NotFoundError } from '../errors';

/** A database that could not be reached in time; says where it was looked for. */
export class DatabaseUnavailableError extends UnavailableError {}

/** A write that broke a uniqueness or check rule the caller can fix. */
export class ConstraintError extends ConflictError {
  constructor(
    message: string,
    readonly sqlstate: string,
  ) {
    super(message);
  }
}

const CONSTRAINT_CODES = new Set(['23505', '23503', '23514', '23502', '22P02', '22001']);
const UNAVAILABLE_CODES = new Set(['57P01', '57P03', '08000', '08001', '08003', '08006', '53300']);

/** Maps a pg error to casework's typed errors by SQLSTATE; returns other errors unchanged. */
export function mapPgError(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  // pg's own connection failures carry no code: a pool that waited out connectionTimeoutMillis,
  // or a server that went away mid-query. Both mean "Postgres is not there now".
  if (typeof code !== 'string' && error instanceof Error && /timeout exceeded when trying to connect|Connection terminated/i.test(error.message)) {
    return new DatabaseUnavailableError(`Postgres is unreachable (${/timeout/i.test(error.message) ? 'connect timeout' : 'connection lost'}); retry shortly`, { cause: error });
  }
  if (typeof code !== 'string') return error;
  if (CONSTRAINT_CODES.has(code)) return new ConstraintError((error as Error).message, code);
  if (UNAVAILABLE_CODES.has(code) || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND'].includes(code)) {
    // The code, not pg's message: that names the host and port, which callers must never see (the cause keeps it for logs).
    return new DatabaseUnavailableError(`Postgres is unreachable (${code}); retry shortly`, { cause: error });
  }
  return error;
}
