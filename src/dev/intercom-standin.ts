import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in for Intercom's REST API, for tests: NOT Intercom. A node:http server on 127.0.0.1
// holding conversations in memory and implementing only what casework calls, as strictly as
// Intercom's Conversations API documents it:
//   GET  /conversations/{id}          the conversation with state and conversation_parts
//   POST /conversations/search        "Search conversations": {query: {field, operator: "=", value}, pagination?:
//                                     {per_page (at most 150), starting_after}}; {conversations, total_count, pages}
//   POST /conversations/{id}/reply    "Reply to a conversation": {message_type: comment | note, type: admin, admin_id, body}
//   POST /conversations/{id}/parts    "Manage a conversation": {message_type: close | open | snoozed | assignment,
//                                     type: admin, admin_id, snoozed_until (snoozed), assignee_id (assignment), body?}
// Every call needs "Authorization: Bearer <token>"; an unknown field, a missing one or a value
// the docs do not allow is refused with 400 and Intercom's error.list. It records each state a
// conversation passes through, and injects Intercom's 429 (X-RateLimit-Reset, no Retry-After).

/** One part of a stand-in conversation, as Intercom shows it. */
export interface IntercomStandinPart {
  type: 'conversation_part';
  id: string;
  part_type: string;
  body: string | null;
  created_at: number;
  author: { type: 'admin' | 'user'; id: string };
  assigned_to: { type: 'admin'; id: string } | null;
}

interface Conversation {
  id: string;
  state: 'open' | 'snoozed' | 'closed';
  snoozed_until: number | null;
  admin_assignee_id: string | null;
  contactId: string;
  title: string | null;
  createdAt: number;
  customAttributes: Record<string, string | number | null>;
  parts: IntercomStandinPart[];
  states: string[];
}

/** The running Intercom stand-in. */
export interface IntercomStandin {
  url: string;
  accessToken: string;
  /** The admin casework replies as, and another a case can be assigned to. */
  adminId: string;
  teammateId: string;
  /** Opens a conversation from a contact; answers its id. An earlier one says when it was opened, its state, title and custom attributes. */
  createConversation(
    contactId: string,
    body: string,
    options?: { createdAt?: string; state?: 'open' | 'snoozed' | 'closed'; title?: string; customAttributes?: Record<string, string | number | null> },
  ): string;
  /** A contact's reply, which opens a snoozed or closed conversation again. */
  addContactReply(conversationId: string, body: string): void;
  /** The conversation as an admin sees it. */
  conversation(id: string): { state: string; assignee: string | null; parts: IntercomStandinPart[] } | undefined;
  /** Every state the conversation has had, in order, from "open". */
  stateHistory(id: string): string[];
  /** The next `count` requests answer 429 with X-RateLimit-Reset `resetInSeconds` from now. */
  rateLimit(count: number, resetInSeconds: number): void;
  requests: { method: string; path: string; status: number }[];
  close(): Promise<void>;
}

const REPLY_KEYS = new Set(['message_type', 'type', 'admin_id', 'body', 'attachment_urls', 'created_at']);
const MANAGE_KEYS = new Set(['message_type', 'type', 'admin_id', 'body', 'snoozed_until', 'assignee_id']);
/** The conversation fields search takes that the stand-in answers (Intercom documents more). */
const SEARCH_FIELDS = new Set(['contact_ids', 'id', 'state']);
const SEARCH_MAX_PER_PAGE = 150;

/** Starts the Intercom stand-in on 127.0.0.1 (any free port). */
export async function startIntercomStandin(options: { now?: () => Date; firstId?: number } = {}): Promise<IntercomStandin> {
  const now = options.now ?? (() => new Date());
  const accessToken = `dG9rOi${randomUUID()}`;
  const adminId = '814860';
  const teammateId = '991267';
  const conversations = new Map<string, Conversation>();
  const requests: IntercomStandin['requests'] = [];
  let nextConversation = options.firstId ?? 147_000_000;
  let nextPart = 9_000_000;
  let limited: { count: number; resetInSeconds: number } | undefined;
  const seconds = () => Math.floor(now().getTime() / 1000);

  const part = (partType: string, body: string | null, author: IntercomStandinPart['author'], assignedTo: string | null = null): IntercomStandinPart => ({
    type: 'conversation_part',
    id: String(nextPart++),
    part_type: partType,
    body,
    created_at: seconds(),
    author,
    assigned_to: assignedTo ? { type: 'admin', id: assignedTo } : null,
  });
  const setState = (c: Conversation, state: Conversation['state']) => {
    if (c.state !== state) c.states.push(state);
    c.state = state;
  };
  const view = (c: Conversation) => ({
    type: 'conversation',
    id: c.id,
    title: c.title,
    source: {
      type: 'conversation',
      id: c.parts[0]?.id ?? c.id,
      delivered_as: 'customer_initiated',
      subject: '',
      body: c.parts[0]?.body ?? '',
      author: { type: 'user', id: c.contactId },
    },
    custom_attributes: { ...c.customAttributes },
    created_at: c.createdAt,
    updated_at: c.parts.at(-1)?.created_at ?? seconds(),
    state: c.state,
    open: c.state === 'open',
    snoozed_until: c.snoozed_until,
    admin_assignee_id: c.admin_assignee_id === null ? null : Number(c.admin_assignee_id),
    contacts: { type: 'contact.list', contacts: [{ type: 'contact', id: c.contactId }] },
    conversation_parts: { type: 'conversation_part.list', conversation_parts: c.parts, total_count: c.parts.length },
  });

  function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    requests.push({ method: req.method ?? '', path: req.url ?? '', status });
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  }
  const error = (code: string, message: string) => ({ type: 'error.list', request_id: randomUUID(), errors: [{ code, message }] });

  /** Search conversations by one field, paged by cursor (starting_after), as Intercom documents it. */
  function search(req: IncomingMessage, res: ServerResponse, raw: string): void {
    let body: { query?: { field?: unknown; operator?: unknown; value?: unknown }; pagination?: { per_page?: unknown; starting_after?: unknown } };
    try {
      body = JSON.parse(raw) as typeof body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    } catch {
      return send(req, res, 400, error('parameter_invalid', 'Request body must be a JSON object'));
    }
    const unknown = Object.keys(body).find((k) => k !== 'query' && k !== 'pagination');
    if (unknown) return send(req, res, 400, error('parameter_invalid', `${unknown} is not a valid parameter`));
    const q = body.query;
    if (!q || typeof q !== 'object') return send(req, res, 400, error('parameter_not_found', 'query is required'));
    if (typeof q.field !== 'string' || !SEARCH_FIELDS.has(q.field)) return send(req, res, 400, error('parameter_invalid', `field ${String(q.field)} is not searchable here`));
    if (q.operator !== '=') return send(req, res, 400, error('parameter_invalid', 'operator must be one of =, !=, IN, NIN, <, >, ~, !~, ^, $'));
    if (typeof q.value !== 'string') return send(req, res, 400, error('parameter_invalid', 'value must be a string'));
    const perPage = body.pagination?.per_page ?? 20;
    if (typeof perPage !== 'number' || !Number.isInteger(perPage) || perPage < 1 || perPage > SEARCH_MAX_PER_PAGE)
      return send(req, res, 400, error('parameter_invalid', `per_page must be between 1 and ${SEARCH_MAX_PER_PAGE}`));
    const after = body.pagination?.starting_after;
    if (after !== undefined && typeof after !== 'string') return send(req, res, 400, error('parameter_invalid', 'starting_after must be a string'));
    const value = q.value;
    const all = [...conversations.values()].filter((c) => (q.field === 'contact_ids' ? c.contactId === value : q.field === 'id' ? c.id === value : c.state === value));
    // The cursor is opaque to the caller: here, the offset of the next page, base64.
    const offset = after ? Number(Buffer.from(after, 'base64').toString('utf8')) : 0;
    if (!Number.isInteger(offset) || offset < 0) return send(req, res, 400, error('parameter_invalid', 'starting_after is not a cursor this search gave'));
    const page = all.slice(offset, offset + perPage);
    const next = offset + perPage < all.length ? { page: Math.floor(offset / perPage) + 2, starting_after: Buffer.from(String(offset + perPage)).toString('base64') } : null;
    return send(req, res, 200, {
      type: 'conversation.list',
      conversations: page.map(view),
      total_count: all.length,
      pages: { type: 'pages', page: Math.floor(offset / perPage) + 1, per_page: perPage, total_pages: Math.max(1, Math.ceil(all.length / perPage)), ...(next ? { next } : {}) },
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (limited && limited.count > 0) {
      limited.count -= 1;
      const reset = String(seconds() + limited.resetInSeconds);
      return send(req, res, 429, error('rate_limit_exceeded', 'Exceeded rate limit of 167 in 10_seconds'), {
        'x-ratelimit-limit': '167',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': reset,
      });
    }
    if (req.headers.authorization !== `Bearer ${accessToken}`) return send(req, res, 401, error('unauthorized', 'Access Token Invalid'));
    const path = new URL(req.url ?? '/', 'http://standin').pathname;
    if (path === '/conversations/search' && req.method === 'POST') return search(req, res, Buffer.concat(chunks).toString('utf8'));
    const match = /^\/conversations\/([^/]+)(\/reply|\/parts)?$/.exec(path);
    if (!match) return send(req, res, 404, error('not_found', 'Resource Not Found'));
    const c = conversations.get(decodeURIComponent(match[1]!));
    if (!c) return send(req, res, 404, error('conversation_not_found', 'Conversation Not Found'));
    if (req.method === 'GET' && !match[2]) return send(req, res, 200, view(c));
    if (req.method !== 'POST' || !match[2]) return send(req, res, 404, error('not_found', 'Resource Not Found'));
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    } catch {
      return send(req, res, 400, error('parameter_invalid', 'Request body must be a JSON object'));
    }
    const keys = match[2] === '/reply' ? REPLY_KEYS : MANAGE_KEYS;
    const unknown = Object.keys(body).find((k) => !keys.has(k));
    if (unknown) return send(req, res, 400, error('parameter_invalid', `${unknown} is not a valid parameter`));
    if (body.type !== 'admin') return send(req, res, 400, error('parameter_invalid', 'type must be admin'));
    if (body.admin_id !== adminId && body.admin_id !== Number(adminId)) return send(req, res, 400, error('parameter_invalid', 'admin_id must be an admin of this workspace'));
    const author = { type: 'admin' as const, id: adminId };
    if (match[2] === '/reply') {
      if (body.message_type !== 'comment' && body.message_type !== 'note') return send(req, res, 400, error('parameter_invalid', 'message_type must be comment or note'));
      if (typeof body.body !== 'string' || !body.body.trim()) return send(req, res, 400, error('parameter_not_found', 'body is required'));
      c.parts.push(part(body.message_type, body.body, author));
      return send(req, res, 200, view(c));
    }
    switch (body.message_type) {
      case 'close':
        c.parts.push(part('close', typeof body.body === 'string' ? body.body : null, author));
        setState(c, 'closed');
        break;
      case 'open':
        c.parts.push(part('open', null, author));
        c.snoozed_until = null;
        setState(c, 'open');
        break;
      case 'snoozed':
        if (typeof body.snoozed_until !== 'number' || !Number.isInteger(body.snoozed_until) || body.snoozed_until <= seconds())
          return send(req, res, 400, error('parameter_invalid', 'snoozed_until must be a unix timestamp in the future'));
        c.parts.push(part('snoozed', null, author));
        c.snoozed_until = body.snoozed_until;
        setState(c, 'snoozed');
        break;
      case 'assignment':
        if (body.assignee_id !== teammateId && body.assignee_id !== adminId)
          return send(req, res, 400, error('parameter_invalid', 'assignee_id must be an admin or team of this workspace'));
        c.parts.push(part('assignment', null, author, String(body.assignee_id)));
        c.admin_assignee_id = String(body.assignee_id);
        break;
      default:
        return send(req, res, 400, error('parameter_invalid', 'message_type must be close, open, snoozed or assignment'));
    }
    return send(req, res, 200, view(c));
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      if (!res.headersSent) send(req, res, 500, error('server_error', e.message));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accessToken,
    adminId,
    teammateId,
    createConversation(contactId, body, options = {}) {
      const id = String(nextConversation++);
      const first = part('comment', body, { type: 'user', id: contactId });
      if (options.createdAt) first.created_at = Math.floor(Date.parse(options.createdAt) / 1000);
      const state = options.state ?? 'open';
      conversations.set(id, {
        id,
        state,
        snoozed_until: null,
        admin_assignee_id: null,
        contactId,
        title: options.title ?? null,
        createdAt: first.created_at,
        customAttributes: options.customAttributes ?? {},
        parts: [first],
        states: [state],
      });
      return id;
    },
    addContactReply(id, body) {
      const c = conversations.get(id);
      if (!c) throw new Error(`stand-in has no conversation ${id}`);
      c.parts.push(part('comment', body, { type: 'user', id: c.contactId }));
      c.snoozed_until = null;
      setState(c, 'open');
    },
    conversation(id) {
      const c = conversations.get(id);
      return c && { state: c.state, assignee: c.admin_assignee_id, parts: c.parts.map((p) => ({ ...p })) };
    },
    stateHistory(id) {
      return [...(conversations.get(id)?.states ?? [])];
    },
    rateLimit(count, resetInSeconds) {
      limited = { count, resetInSeconds };
    },
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
