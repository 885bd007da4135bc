import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'pg';
import { correctNote, DEFAULT_ACTOR, forgetMemory, showMemory } from '../../memory/control';
import { MemoryInputError, NoteNotFoundError } from '../../memory/errors';

// The customer's view of their memory over HTTP: see it, correct a note, delete a note or all.
// Authentication of the caller is added in front of this by the HTTP server; here the caller
// is named by an `actor` header for the audit trail.

/** Largest request body accepted, in bytes: a corrected note is one sentence. */
const MAX_BODY_BYTES = 16 * 1024;

const ROUTE = /^\/customers\/([^/]*)\/memory(?:\/notes\/([^/]*))?\/?$/;

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) throw new HttpError(400, 'request body must be JSON: {"text": "..."}');
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'request body is not valid JSON; send {"text": "..."}');
  }
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `"${part}" is not a valid URL path segment`);
  }
}

function actorOf(req: IncomingMessage): string {
  const header = req.headers['actor'] ?? req.headers['x-actor'];
  return (Array.isArray(header) ? header[0] : header)?.trim() || DEFAULT_ACTOR;
}

type Reply = { status: number; body: unknown; headers?: Record<string, string> };

async function route(req: IncomingMessage, pool: Pool, customerId: string, noteId: string | undefined): Promise<Reply> {
  const actor = actorOf(req);
  const method = req.method ?? 'GET';
  if (noteId === undefined) {
    if (method === 'GET') return { status: 200, body: await showMemory(pool, customerId, { actor }) };
    if (method === 'DELETE') return { status: 200, body: await forgetMemory(pool, customerId, { actor }) };
    return { status: 405, body: { error: `${method} is not allowed here; use GET or DELETE` }, headers: { allow: 'GET, DELETE' } };
  }
  if (method === 'PATCH') {
    const body = await readJson(req);
    const text = (body as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') throw new HttpError(400, 'request body must be JSON with a "text" string');
    return { status: 200, body: { note: await correctNote(pool, customerId, noteId, text, actor) } };
  }
  if (method === 'DELETE') return { status: 200, body: await forgetMemory(pool, customerId, { noteId, actor }) };
  return { status: 405, body: { error: `${method} is not allowed here; use PATCH or DELETE` }, headers: { allow: 'PATCH, DELETE' } };
}

function failure(error: unknown): Reply {
  if (error instanceof HttpError) return { status: error.status, body: { error: error.message } };
  if (error instanceof NoteNotFoundError) return { status: 404, body: { error: error.message } };
  if (error instanceof MemoryInputError) return { status: 400, body: { error: error.message } };
  // The cause goes to the log, not to the caller: it may name tables or hosts.
  console.error('memory route failed:', error);
  return { status: 500, body: { error: 'memory request failed; see the server log' } };
}

/**
 * Serves GET /customers/:id/memory, PATCH /customers/:id/memory/notes/:noteId {text} and
 * DELETE /customers/:id/memory[/notes/:noteId]. Returns false, writing nothing, when the path
 * is not a memory route, so the caller can try its other routes.
 */
export async function handleMemoryRequest(req: IncomingMessage, res: ServerResponse, deps: { pool: Pool }): Promise<boolean> {
  const match = ROUTE.exec((req.url ?? '/').split('?')[0]);
  if (!match) return false;
  let reply: Reply;
  try {
    reply = await route(req, deps.pool, decode(match[1]), match[2] === undefined ? undefined : decode(match[2]));
  } catch (error) {
    reply = failure(error);
  }
  send(res, reply.status, reply.body, reply.headers);
  return true;
}
