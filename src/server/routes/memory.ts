import type { IncomingMessage } from 'node:http';
import { correctNote, forgetMemory, showMemory } from '../../memory/control';
import { maySpeakFor } from '../auth';
import type { RouteContext, Trace } from '../context';
import { decodeSegment, HttpError, isObject, readJsonBody, type Answer } from '../http';

// The customer's view of their memory over HTTP: see it, correct a note, delete a note or all.
//   GET    /customers/:id/memory                   what casework remembers
//   DELETE /customers/:id/memory                   forget everything
//   PATCH  /customers/:id/memory/notes/:noteId     {text}: correct a note
//   DELETE /customers/:id/memory/notes/:noteId     forget one note

/** Largest request body accepted, in bytes: a corrected note is one sentence. */
const MAX_BODY_BYTES = 16 * 1024;

/** The memory paths; anything else under /customers is no route. */
export const MEMORY_ROUTE = /^\/customers\/([^/]+)\/memory(?:\/notes\/([^/]+))?$/;

/**
 * Who the audit trail names: the credential, and, for the trusted ticketing system only, the
 * person it says acted (an `actor` header).
 */
function actorOf(req: IncomingMessage, principal: { label: string; anyCustomer: boolean }): string {
  const relayed = principal.anyCustomer ? [req.headers['actor'], req.headers['x-actor']].flat().find((v) => v?.trim()) : undefined;
  return relayed ? `${relayed.trim().slice(0, 150)} via ${principal.label}` : principal.label;
}

const notAllowed = (method: string, allowed: string) => new HttpError(405, `${method} is not allowed here; use ${allowed.replace(', ', ' or ')}`, { allow: allowed });

/** Serves one memory route; `match` is MEMORY_ROUTE's match of the path. */
export async function memoryRoute(ctx: RouteContext, req: IncomingMessage, match: RegExpExecArray, trace: Trace): Promise<Answer> {
  const principal = ctx.principalOf(req, trace);
  const customerId = decodeSegment(match[1] ?? '', 'customer id');
  trace.customerId = customerId;
  if (!maySpeakFor(principal, customerId) && !principal.support) throw new HttpError(403, `these credentials may not access the memory of customer ${customerId}`);
  const actor = actorOf(req, principal);
  const { pool } = ctx.deps;
  const method = req.method ?? 'GET';
  const noteSegment = match[2];
  if (noteSegment === undefined) {
    if (method === 'GET') return { status: 200, body: await showMemory(pool, customerId, { actor }) };
    if (method === 'DELETE') return { status: 200, body: await forgetMemory(pool, customerId, { actor }) };
    throw notAllowed(method, 'GET, DELETE');
  }
  const noteId = decodeSegment(noteSegment, 'note id');
  if (method === 'PATCH') {
    const body = await readJsonBody(req, MAX_BODY_BYTES, '{"text": "..."}');
    const text = isObject(body) ? body.text : undefined;
    if (typeof text !== 'string') throw new HttpError(400, 'request body must be JSON with a "text" string');
    return { status: 200, body: { note: await correctNote(pool, customerId, noteId, text, actor) } };
  }
  if (method === 'DELETE') return { status: 200, body: await forgetMemory(pool, customerId, { noteId, actor }) };
  throw notAllowed(method, 'PATCH, DELETE');
}
