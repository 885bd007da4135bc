import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_MESSAGE_CHARS } from '../schemas/event';

/**
 * Largest request body accepted, in bytes. A message of MAX_MESSAGE_CHARS UTF-16 units can
 * take six bytes each when JSON-escaped ("\uXXXX"), plus the envelope; anything larger is
 * refused before it is read into memory.
 */
export const MAX_BODY_BYTES = 6 * MAX_MESSAGE_CHARS + 8 * 1024;

/** A request the endpoint refuses; `status` and the message become the JSON answer. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
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
 * Reads a JSON body of at most `limit` bytes. Too large is 413 (the rest is not read, and the
 * connection is closed after the answer); empty or not JSON is 400 saying so.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => new HttpError(413, `request body is larger than ${limit} bytes (a message may be at most ${MAX_MESSAGE_CHARS} characters)`, { connection: 'close' });
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) throw new HttpError(400, 'request body is empty; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Decodes one URL path segment, or 400 when it is not valid percent-encoding. */
export function decodeSegment(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `"${part}" is not a valid URL path segment`);
  }
}
