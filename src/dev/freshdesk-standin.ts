import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in for Freshdesk's API v2, for tests: NOT Freshdesk. A node:http server on 127.0.0.1
// holding tickets in memory and implementing only what casework calls, as strictly as
// Freshdesk documents it:
//   GET  /api/v2/tickets/{id}/conversations?page=&per_page=   30 a page by default, at most 100, oldest first,
//                                                             a Link rel="next" header while more pages follow
//   POST /api/v2/tickets/{id}/reply   {body, from_email?, user_id?, cc_emails?, bcc_emails?}
//   POST /api/v2/tickets/{id}/notes   {body, private?, incoming?, notify_emails?, user_id?}
//   GET  /api/v2/tickets/{id}         the ticket, with description and description_text
//   GET  /api/v2/tickets?requester_id=&updated_since=&order_by=&order_type=&include=&page=&per_page=
//                                     a requester's tickets, newest first by default, 30 a page by default,
//                                     at most 100; only those created in the last 30 days unless
//                                     updated_since reaches back; description only with include=description
//   PUT  /api/v2/tickets/{id}         {status?, group_id?, priority?, ...}; status 2 Open, 3 Pending, 4 Resolved,
//                                     5 Closed, and the account's custom statuses (6 Waiting on Customer,
//                                     7 Waiting on Third Party in a default account)
// Every call needs "Authorization: Basic base64(<api key>:X)"; an unknown field or a value the
// docs do not allow is refused with 400 and Freshdesk's {description, errors}. It records each
// status a ticket passes through, and injects 429 with Retry-After.

/** One conversation (reply or note) of a stand-in ticket, as Freshdesk lists it. */
export interface FreshdeskStandinConversation {
  id: number;
  body: string;
  body_text: string;
  incoming: boolean;
  private: boolean;
  user_id: number;
  ticket_id: number;
  source: number;
  created_at: string;
}

interface Ticket {
  id: number;
  status: number;
  group_id: number | null;
  requesterId: number;
  subject: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  customFields: Record<string, string | null>;
  conversations: FreshdeskStandinConversation[];
  statuses: number[];
}

/** The running Freshdesk stand-in. */
export interface FreshdeskStandin {
  url: string;
  apiKey: string;
  /** The agent casework's key belongs to, and a group a case can be assigned to. */
  agentId: number;
  groupId: number;
  /** Opens a ticket from a requester (the description as HTML, as Freshdesk keeps it); answers its id. An earlier ticket says when it was opened, its status and custom fields. */
  createTicket(requesterId: number, description: string, options?: { subject?: string; createdAt?: string; status?: number; customFields?: Record<string, string | null> }): number;
  /** Adds `count` conversations (private notes by another agent), to make a long ticket. */
  addNotes(ticketId: number, count: number): void;
  /** The ticket as an agent sees it. */
  ticket(id: number): { status: number; groupId: number | null; conversations: FreshdeskStandinConversation[] } | undefined;
  /** Every status the ticket has had, in order, from 2 (Open). */
  statusHistory(id: number): number[];
  /** The next `count` requests answer 429 with Retry-After `seconds`. */
  rateLimit(count: number, seconds: number): void;
  requests: { method: string; path: string; status: number }[];
  close(): Promise<void>;
}

const REPLY_KEYS = new Set(['body', 'from_email', 'user_id', 'cc_emails', 'bcc_emails']);
const NOTE_KEYS = new Set(['body', 'private', 'incoming', 'notify_emails', 'user_id']);
const UPDATE_KEYS = new Set(['status', 'group_id', 'priority', 'responder_id', 'type', 'tags', 'custom_fields']);
/** Open, Pending, Resolved, Closed, and a default account's custom statuses. */
const STATUSES = new Set([2, 3, 4, 5, 6, 7]);
const LIST_PARAMS = new Set(['filter', 'requester_id', 'email', 'unique_external_id', 'company_id', 'updated_since', 'order_by', 'order_type', 'include', 'page', 'per_page']);
const ORDER_BY = new Set(['created_at', 'due_by', 'updated_at', 'status']);
const INCLUDES = new Set(['requester', 'stats', 'description', 'company']);
/** Without updated_since, Freshdesk lists only tickets created in the last 30 days. */
const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000;

/** Starts the Freshdesk stand-in on 127.0.0.1 (any free port). */
export async function startFreshdeskStandin(options: { now?: () => Date; firstTicketId?: number } = {}): Promise<FreshdeskStandin> {
  const now = options.now ?? (() => new Date());
  const apiKey = `fd-${randomUUID()}`;
  const agentId = 43_000_001;
  const otherAgentId = 43_000_002;
  const groupId = 43_500_017;
  const tickets = new Map<number, Ticket>();
  const requests: FreshdeskStandin['requests'] = [];
  let nextTicket = options.firstTicketId ?? 42_000;
  let nextConversation = 77_000_001;
  let limited: { count: number; seconds: number } | undefined;
  const expectedAuth = `Basic ${Buffer.from(`${apiKey}:X`).toString('base64')}`;

  const textOfHtml = (html: string) =>
    html
      .replace(/<[^>]*>/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ')
      .trim();
  const conversation = (t: Ticket, body: string, by: number, isPrivate: boolean, incoming: boolean): FreshdeskStandinConversation => ({
    id: nextConversation++,
    body,
    body_text: textOfHtml(body),
    incoming,
    private: isPrivate,
    user_id: by,
    ticket_id: t.id,
    // 0 reply, 2 note (Freshdesk's conversation sources).
    source: isPrivate ? 2 : 0,
    created_at: now().toISOString(),
  });
  const setStatus = (t: Ticket, status: number) => {
    if (t.status !== status) t.statuses.push(status);
    t.status = status;
  };

  function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    requests.push({ method: req.method ?? '', path: req.url ?? '', status });
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  }
  const invalid = (field: string, message: string, code = 'invalid_value') => ({ description: 'Validation failed', errors: [{ field, message, code }] });

  const view = (t: Ticket, withDescription: boolean) => ({
    id: t.id,
    subject: t.subject,
    status: t.status,
    priority: 1,
    source: 1,
    requester_id: t.requesterId,
    group_id: t.group_id,
    custom_fields: { ...t.customFields },
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    ...(withDescription ? { description: t.description, description_text: textOfHtml(t.description) } : {}),
  });

  /** List All Tickets, filtered by requester, as the docs describe it. */
  function list(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const params = url.searchParams;
    const unknown = [...params.keys()].find((k) => !LIST_PARAMS.has(k));
    if (unknown) return send(req, res, 400, invalid(unknown, 'Unexpected/invalid field in request', 'invalid_field'));
    const perPage = params.has('per_page') ? Number(params.get('per_page')) : 30;
    const page = params.has('page') ? Number(params.get('page')) : 1;
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) return send(req, res, 400, invalid('per_page', 'Has to be a number between 1 and 100'));
    if (!Number.isInteger(page) || page < 1) return send(req, res, 400, invalid('page', 'Has to be a positive number'));
    const orderBy = params.get('order_by') ?? 'created_at';
    const orderType = params.get('order_type') ?? 'desc';
    if (!ORDER_BY.has(orderBy)) return send(req, res, 400, invalid('order_by', 'It should be one of these values: created_at,due_by,updated_at,status'));
    if (orderType !== 'asc' && orderType !== 'desc') return send(req, res, 400, invalid('order_type', 'It should be one of these values: asc,desc'));
    const includes = (params.get('include') ?? '').split(',').filter(Boolean);
    const bad = includes.find((i) => !INCLUDES.has(i));
    if (bad) return send(req, res, 400, invalid('include', 'It should be one of these values: requester,stats,description,company'));
    const since = params.get('updated_since');
    if (since !== null && !Number.isFinite(Date.parse(since))) return send(req, res, 400, invalid('updated_since', 'It should be in the YYYY-MM-DDTHH:MM:SSZ format'));
    const requester = params.get('requester_id');
    const from = since === null ? now().getTime() - DEFAULT_WINDOW_MS : Date.parse(since);
    const all = [...tickets.values()]
      .filter((t) => (requester === null || String(t.requesterId) === requester) && Date.parse(since === null ? t.createdAt : t.updatedAt) >= from)
      .sort((a, b) => {
        const key = (t: Ticket) => (orderBy === 'status' ? String(t.status).padStart(3, '0') : orderBy === 'updated_at' ? t.updatedAt : t.createdAt);
        const order = key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id;
        return orderType === 'desc' ? -order : order;
      });
    const slice = all.slice((page - 1) * perPage, page * perPage).map((t) => view(t, includes.includes('description')));
    const more = all.length > page * perPage;
    const next = new URLSearchParams({ ...Object.fromEntries(params), page: String(page + 1) });
    return send(req, res, 200, slice, more ? { link: `<${url.origin}${url.pathname}?${next.toString()}>; rel="next"` } : {});
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (limited && limited.count > 0) {
      limited.count -= 1;
      return send(req, res, 429, { message: 'You have exceeded the limit of requests per minute' }, { 'retry-after': String(limited.seconds) });
    }
    if (req.headers.authorization !== expectedAuth) return send(req, res, 401, { code: 'invalid_credentials', message: 'You have to be logged in to perform this action.' });
    const url = new URL(req.url ?? '/', 'http://standin');
    if (url.pathname === '/api/v2/tickets' && req.method === 'GET') return list(req, res, url);
    const match = /^\/api\/v2\/tickets\/(\d+)(\/conversations|\/reply|\/notes)?$/.exec(url.pathname);
    if (!match) return send(req, res, 404, { message: 'Not found' });
    const t = tickets.get(Number(match[1]));
    if (!t) return send(req, res, 404, { message: 'Not found' });
    if (req.method === 'GET' && !match[2]) return send(req, res, 200, view(t, true));
    if (req.method === 'GET' && match[2] === '/conversations') {
      const perPage = url.searchParams.has('per_page') ? Number(url.searchParams.get('per_page')) : 30;
      const page = url.searchParams.has('page') ? Number(url.searchParams.get('page')) : 1;
      if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) return send(req, res, 400, invalid('per_page', 'Has to be a number between 1 and 100'));
      if (!Number.isInteger(page) || page < 1) return send(req, res, 400, invalid('page', 'Has to be a positive number'));
      const slice = t.conversations.slice((page - 1) * perPage, page * perPage);
      const more = t.conversations.length > page * perPage;
      const link: Record<string, string> = more ? { link: `<${url.origin}${url.pathname}?per_page=${perPage}&page=${page + 1}>; rel="next"` } : {};
      return send(req, res, 200, slice, link);
    }
    if (req.method === 'GET') return send(req, res, 405, { message: 'Method not allowed' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    } catch {
      return send(req, res, 400, { description: 'Validation failed', errors: [{ code: 'invalid_json', message: 'Request body has invalid json format' }] });
    }
    const allowed = match[2] === '/reply' ? REPLY_KEYS : match[2] === '/notes' ? NOTE_KEYS : UPDATE_KEYS;
    const unknown = Object.keys(body).find((k) => !allowed.has(k));
    if (unknown) return send(req, res, 400, invalid(unknown, 'Unexpected/invalid field in request', 'invalid_field'));
    if (req.method === 'POST' && (match[2] === '/reply' || match[2] === '/notes')) {
      if (typeof body.body !== 'string' || !body.body.trim()) return send(req, res, 400, invalid('body', 'It should not be blank as this is a mandatory field', 'missing_field'));
      if (body.private !== undefined && typeof body.private !== 'boolean') return send(req, res, 400, invalid('private', 'It should be a boolean'));
      // A note is private unless it says otherwise (Freshdesk's default).
      const added = conversation(t, body.body, agentId, match[2] === '/notes' && body.private !== false, false);
      t.conversations.push(added);
      return send(req, res, 201, added);
    }
    if (req.method === 'PUT' && !match[2]) {
      if (body.status !== undefined && (typeof body.status !== 'number' || !STATUSES.has(body.status)))
        return send(req, res, 400, invalid('status', 'It should be one of these values: 2,3,4,5,6,7'));
      if (body.group_id !== undefined && body.group_id !== groupId) return send(req, res, 400, invalid('group_id', 'There is no group matching the given group_id'));
      if (typeof body.status === 'number') setStatus(t, body.status);
      if (typeof body.group_id === 'number') t.group_id = body.group_id;
      return send(req, res, 200, { id: t.id, status: t.status, group_id: t.group_id, requester_id: t.requesterId, updated_at: now().toISOString() });
    }
    return send(req, res, 405, { message: 'Method not allowed' });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      if (!res.headersSent) send(req, res, 500, { message: e.message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    agentId,
    groupId,
    createTicket(requesterId, description, options = {}) {
      const id = nextTicket++;
      const at = options.createdAt
        ? new Date(options.createdAt).toISOString().replace(/\.\d{3}Z$/, 'Z')
        : now()
            .toISOString()
            .replace(/\.\d{3}Z$/, 'Z');
      const status = options.status ?? 2;
      // The description is the ticket's own field; conversations are what follows it.
      const t: Ticket = {
        id,
        status,
        group_id: null,
        requesterId,
        subject: options.subject ?? description.slice(0, 60),
        description,
        createdAt: at,
        updatedAt: at,
        customFields: options.customFields ?? {},
        conversations: [],
        statuses: [status],
      };
      tickets.set(id, t);
      return id;
    },
    addNotes(ticketId, count) {
      const t = tickets.get(ticketId);
      if (!t) throw new Error(`stand-in has no ticket ${ticketId}`);
      for (let i = 0; i < count; i++) t.conversations.push(conversation(t, `<div>Internal note ${i + 1} from a colleague.</div>`, otherAgentId, true, false));
    },
    ticket(id) {
      const t = tickets.get(id);
      return t && { status: t.status, groupId: t.group_id, conversations: t.conversations.map((c) => ({ ...c })) };
    },
    statusHistory(id) {
      return [...(tickets.get(id)?.statuses ?? [])];
    },
    rateLimit(count, seconds) {
      limited = { count, seconds };
    },
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
