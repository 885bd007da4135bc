import type { IncomingMessage } from 'node:http';
import { eraseCustomer, erasureDepsOf } from '../../client/erasure';
import { exportCustomer } from '../../client/subject-export';
import type { Principal } from '../auth';
import type { RouteContext, Trace } from '../context';
import { decodeSegment, HttpError, isObject, readJsonBody, type Answer } from '../http';

// Erasure and subject access over HTTP:
//   POST /customers/:id/erase   {"confirm": "<the same customer id>"}: erase the customer for good
//   GET  /customers/:id/export  everything held about the customer (schema casework.subject-access/v1)
// Both are for the ticketing system's key (which relays the person who asked in an `actor`
// header) and the support team's grant; a customer-scoped key may not: an erasure cannot be
// undone, so it goes through the people who answer for it.

/** The erasure and export paths. */
export const CUSTOMER_ROUTE = /^\/customers\/([^/]+)\/(erase|export)$/;

const MAX_BODY_BYTES = 4 * 1024;

function actorOf(req: IncomingMessage, principal: Principal): string {
  const relayed = principal.anyCustomer ? [req.headers['actor'], req.headers['x-actor']].flat().find((v) => v?.trim()) : undefined;
  return relayed ? `${relayed.trim().slice(0, 150)} via ${principal.label}` : principal.label;
}

/** Serves one CUSTOMER_ROUTE match. */
export async function customerRoute(ctx: RouteContext, req: IncomingMessage, match: RegExpExecArray, trace: Trace): Promise<Answer> {
  const principal = ctx.principalOf(req, trace);
  const customerId = decodeSegment(match[1] ?? '', 'customer id');
  trace.customerId = customerId;
  if (!principal.anyCustomer && !principal.support)
    throw new HttpError(403, `these credentials may not ${match[2]} customer ${customerId}: the ticketing system's key or a support grant may`);
  const method = req.method ?? 'GET';
  const { pool, config } = ctx.deps;
  if (match[2] === 'export') {
    if (method !== 'GET') throw new HttpError(405, `${method} is not allowed here; use GET`, { allow: 'GET' });
    return { status: 200, body: await exportCustomer({ pool, log: ctx.transcriptLog }, { customerId, actor: actorOf(req, principal) }) };
  }
  if (method !== 'POST') throw new HttpError(405, `${method} is not allowed here; use POST`, { allow: 'POST' });
  const body = await readJsonBody(req, MAX_BODY_BYTES, `{"confirm": "${customerId}"}`);
  if (!isObject(body) || body.confirm !== customerId) {
    throw new HttpError(400, `an erasure cannot be undone: confirm it with a JSON body {"confirm": "${customerId}"} naming the same customer`);
  }
  const report = await ctx.temporal('erasing the customer', () => eraseCustomer(erasureDepsOf(config, pool, ctx.deps.client), { customerId, by: actorOf(req, principal) }));
  return { status: 200, body: report };
}
