import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { CaseworkError, httpStatusOf, retryAfterOf } from '../errors';
import { InvalidEventError, MAX_MESSAGE_CHARS } from '../schemas/event';
import { idProblem } from '../schemas/text';

// The HTTP server's small toolkit: read a JSON body within a limit, decode a path segment,
// answer with JSON, and turn any error into exactly one answer. Every route uses these.

/**
 * Largest request body accepted, in bytes. A message of MAX_MESSAGE_CHARS UTF-16 units can
 * take six bytes each when JSON-escaped ("\uXXXX"), plus the envelope; anything larger is
 * refused before it is read into memory.
 */
export const MAX_BODY_BYTES = 6 * MAX_MESSAGE_CHARS + 8 * 1024;

/** A request refused for a reason of HTTP itself (401, 405, 413…); `status` and the message become the answer. */
export class HttpError extends CaseworkError {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(status === 503 ? 'unavailable' : status === 404 ? 'not_found' : 'bad_input', message);
  }
}

/** One answer: status, JSON body (or an HTML page, for the console) and extra headers. */
export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** When set, the answer is this HTML page instead of `body` as JSON. */
  html?: string;
}

/** Writes an HTML answer; the console's pages are never cached (they carry CSRF tokens and case data). */
export function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(html);
}

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/**
 * The answer for an error: HTTP errors as they say, casework's own errors by their kind
 * (src/errors.ts; transient ones with Retry-After), anything else a 500 that names nothing
 * internal (the cause goes to the log, not to the caller: it may name hosts or tables).
 */
export function errorAnswer(error: unknown): Answer {
  if (error instanceof HttpError) {
    return { status: error.status, body: error.status === 503 ? { error: error.message, retryable: true } : { error: error.message }, headers: error.headers };
  }
  const status = httpStatusOf(error);
  if (status === 500) return { status, body: { error: 'the request failed inside casework; see the server log' } };
  const message = (error as Error).message;
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) return { status, body: { error: message, retryable: true }, headers: { 'retry-after': String(retryAfter) } };
  if (error instanceof InvalidEventError) return { status, body: { error: message, issues: error.issues } };
  return { status, body: { error: message } };
}

/**
 * Reads a body of at most `limit` bytes as UTF-8 text. Too large (declared or read) is 413 naming
 * `what`, bytes that are not UTF-8 are 400; the rest is not read, and the connection is closed after the answer.
 */
export async function readBodyText(req: IncomingMessage, limit: number, what = 'request body'): Promise<string> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => new HttpError(413, `${what} is larger than ${limit} bytes`, { connection: 'close' });
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    // Decoding leniently would replace the bytes with U+FFFD: the caller's words altered, silently.
    throw new HttpError(400, `${what} is not valid UTF-8`);
  }
}

/** Refuses what is not UTF-8 rather than replacing it, as the desk webhooks do (desk/verify.ts). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a JSON body of at most `limit` bytes. Too large is 413 (the rest is not read, and the
 * connection is closed after the answer); empty or not JSON is 400 saying so.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES, shape = 'a JSON object'): Promise<unknown> {
  const text = await readBodyText(req, limit);
  if (!text.trim()) throw new HttpError(400, `request body is empty; send ${shape}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, `request body is not valid JSON; send ${shape}`);
  }
}

/** Decodes one URL path segment, or 400 when it is not valid percent-encoding or is empty. */
export function decodeSegment(part: string, what = 'path segment'): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `"${part.slice(0, 100)}" is not a valid URL ${what}`);
  }
  if (!decoded.trim()) throw new HttpError(400, `the ${what} is empty`);
  // "%00" and friends decode to bytes no id holds and Postgres cannot store.
  const problem = idProblem(decoded);
  if (problem) throw new HttpError(400, `the ${what} ${problem}`);
  return decoded;
}

/** True for a JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A server's graceful close, once however often it is called: `onDrain` first (readiness answers
 * 503 from then on), the listener closed, idle connections dropped, requests in flight given
 * `graceMs` to finish before every connection is cut.
 */
export function drainingClose(server: Server, onDrain: () => void): (graceMs: number) => Promise<void> {
  let closing: Promise<void> | undefined;
  return (graceMs) =>
    (closing ??= new Promise<void>((resolve) => {
      onDrain();
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      server.close(() => {
        clearTimeout(cut);
        resolve();
      });
      server.closeIdleConnections();
    }));
}
