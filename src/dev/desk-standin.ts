import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signZendesk, ZENDESK_SIGNATURE_HEADER, ZENDESK_TIMESTAMP_HEADER } from '../desk/zendesk-inbound';

// A stand-in for Zendesk, for tests, benches and the demo: NOT Zendesk. A node:http server on
// 127.0.0.1 holding ticket threads in memory and implementing only the part of the Support API
// casework uses, as strictly as Zendesk documents it:
//   GET /api/v2/tickets/{id}.json            {ticket}
//   GET /api/v2/tickets/{id}/comments.json   {comments, next_page, previous_page, count}
//   PUT /api/v2/tickets/{id}.json            {ticket: {comment: {body | html_body, public?, author_id?}, status?, group_id?, tags?, additional_tags?, remove_tags?}}
//   GET /api/v2/users/{id}/tickets/requested.json?page=&per_page=&sort_by=&sort_order=
//                                            {tickets, next_page, previous_page, count}: offset pagination,
//                                            100 a page by default and at most, oldest first unless sorted
// A closed ticket refuses every update (422), as Zendesk's does; each status a ticket passes
// through is recorded, so a test reads back the lifecycle casework drove. Every call needs "Authorization: Basic base64(email/token:api_token)"; unknown fields are
// refused with 422 RecordInvalid, a missing comment body too. It also sends Zendesk's signed
// ticket-event webhooks (zen:event-type:ticket.comment_added) to a URL, and injects faults: the
// next N API requests answer 429 with Retry-After, 401 or 500, or apply the write and then never
// answer (the case exactly-once must survive).

/** A fault the next `count` matching requests get. */
export type StandinFault =
  | { kind: 'rate_limit'; count: number; retryAfterSeconds: number }
  | { kind: 'unauthorized'; count: number }
  | { kind: 'server_error'; count: number }
  /** Writes only: the update is applied, then the response never comes (the socket is held, then dropped). */
  | { kind: 'apply_then_timeout'; count: number; hangMs?: number };

/** One comment on a stand-in ticket, as Zendesk's Ticket Comments API shows it. */
export interface StandinComment {
  id: number;
  type: 'Comment';
  author_id: number;
  body: string;
  html_body: string;
  plain_body: string;
  public: boolean;
  attachments: [];
  via: { channel: string };
  created_at: string;
}

interface StandinTicket {
  id: number;
  subject: string;
  description: string;
  status: 'new' | 'open' | 'pending' | 'hold' | 'solved' | 'closed';
  requester_id: number;
  submitter_id: number;
  assignee_id: number | null;
  group_id: number | null;
  tags: string[];
  custom_fields: { id: number; value: string | null }[];
  created_at: string;
  updated_at: string;
  comments: StandinComment[];
}

/** A user the stand-in knows: end users (customers) and the agent casework authenticates as. */
export interface StandinUser {
  id: number;
  name: string;
  is_staff: boolean;
}

/** The running stand-in. */
export interface DeskStandin {
  /** Base URL, e.g. http://127.0.0.1:49152 (what CASEWORK_ZENDESK_BASE_URL would be). */
  url: string;
  /** The agent casework signs in as. */
  agent: StandinUser & { email: string; apiToken: string };
  /** The webhook signing secret. */
  webhookSecret: string;
  /** Opens a ticket from an end user; its first comment is the description. */
  createTicket(input: {
    requesterId: number;
    requesterName?: string;
    subject: string;
    body: string;
    /** An earlier ticket: when it was opened, its status, and its custom field values. */
    createdAt?: string;
    status?: StandinTicket['status'];
    customFields?: { id: number; value: string | null }[];
  }): { ticketId: number; commentId: number };
  /** Adds a public comment from an end user. */
  addCustomerComment(ticketId: number, authorId: number, body: string): number;
  /** The ticket's thread and tags, as an agent sees them. */
  ticket(ticketId: number): { status: string; groupId: number | null; tags: string[]; comments: StandinComment[] } | undefined;
  /** Every status the ticket has had, in order, from "new": a change is recorded once, a repeat of the same status not at all. */
  statusHistory(ticketId: number): string[];
  /** Sets a ticket's status as an agent or Zendesk's automation would (e.g. closed, some days after solved). */
  setStatus(ticketId: number, status: StandinTicket['status']): void;
  /** The signed ticket.comment_added webhook for a comment, as bytes and headers (not sent). */
  commentWebhook(ticketId: number, commentId: number, options?: { timestamp?: string; secret?: string }): { body: Buffer; headers: Record<string, string> };
  /** Sends a comment's webhook to `url`; answers the receiver's status. */
  sendCommentWebhook(url: string, ticketId: number, commentId: number, options?: { timestamp?: string }): Promise<number>;
  /** Queues a fault for the next requests. */
  inject(fault: StandinFault): void;
  /** Every API request answered (or dropped), in order. */
  requests: { method: string; path: string; status: number | 'dropped' }[];
  close(): Promise<void>;
}

const TICKET_KEYS = new Set(['comment', 'status', 'group_id', 'tags', 'additional_tags', 'remove_tags']);
const COMMENT_KEYS = new Set(['body', 'html_body', 'public', 'author_id']);
const STATUSES = new Set(['new', 'open', 'pending', 'hold', 'solved', 'closed']);
const TAG = /^[^\s,]{1,80}$/;
const LIST_PARAMS = new Set(['page', 'per_page', 'sort_by', 'sort_order']);
const SORT_BY = new Set(['id', 'created_at', 'updated_at', 'status']);

/** Starts the stand-in on 127.0.0.1 (port 0: any free port). */
export async function startDeskStandin(
  options: {
    port?: number;
    webhookSecret?: string;
    now?: () => Date;
    /** The first ticket's id (5158 by default); stand-ins sharing one Temporal server need ids apart. */ firstTicketId?: number;
    /** The first comment's id (10001 by default); comment ids are webhook event ids, which the ticket gate admits once for good. */
    firstCommentId?: number;
    /** Zendesk's "Auto-assign tickets upon solve" (on by default here): solving an unassigned ticket assigns it to the solving agent; off, it is refused. */
    autoAssignOnSolve?: boolean;
  } = {},
): Promise<DeskStandin> {
  const now = options.now ?? (() => new Date());
  const agent = { id: 900001, name: 'casework (agent)', is_staff: true, email: 'casework@example.test', apiToken: randomUUID() };
  const users = new Map<number, StandinUser>([[agent.id, agent]]);
  const tickets = new Map<number, StandinTicket>();
  const history = new Map<number, string[]>();
  const changeStatus = (ticket: StandinTicket, status: StandinTicket['status']) => {
    if (ticket.status !== status) history.get(ticket.id)?.push(status);
    ticket.status = status;
  };
  const faults: StandinFault[] = [];
  const requests: DeskStandin['requests'] = [];
  const webhookSecret = options.webhookSecret ?? `whsec-${randomUUID()}`;
  let nextTicket = options.firstTicketId ?? 5158;
  let nextComment = options.firstCommentId ?? 10001;
  let nextAudit = 70001;
  const expectedAuth = `Basic ${Buffer.from(`${agent.email}/token:${agent.apiToken}`).toString('base64')}`;

  const comment = (authorId: number, body: string, isPublic: boolean): StandinComment => ({
    id: nextComment++,
    type: 'Comment',
    author_id: authorId,
    body,
    html_body: `<div class="zd-comment"><p>${body.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</p></div>`,
    plain_body: body,
    public: isPublic,
    attachments: [],
    via: { channel: authorId === agent.id ? 'api' : 'web' },
    created_at: now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z'),
  });
  const view = (t: StandinTicket) => {
    const { comments: _comments, ...rest } = t;
    return { ...rest, url: `/api/v2/tickets/${t.id}.json`, type: 'question', priority: 'normal' };
  };

  function takeFault(isWrite: boolean): StandinFault | undefined {
    const fault = faults[0];
    if (!fault || (fault.kind === 'apply_then_timeout' && !isWrite)) return undefined;
    fault.count -= 1;
    if (fault.count <= 0) faults.shift();
    return fault;
  }

  function send(res: ServerResponse, req: IncomingMessage, status: number, body: unknown, headers: Record<string, string> = {}): void {
    requests.push({ method: req.method ?? '', path: req.url ?? '', status });
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  }

  const invalid = (details: Record<string, string>) => ({
    error: 'RecordInvalid',
    description: 'Record validation errors',
    details: Object.fromEntries(Object.entries(details).map(([field, description]) => [field, [{ description, error: 'InvalidValue' }]])),
  });

  /** Validates a PUT body as Zendesk does; a problem map, or the update to apply. */
  function parseUpdate(
    body: unknown,
  ):
    | { problems: Record<string, string> }
    | { update: { comment?: { body: string; public: boolean }; status?: StandinTicket['status']; groupId?: number; tags?: string[]; add: string[]; remove: string[] } } {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return { problems: { base: 'body must be a JSON object' } };
    const keys = Object.keys(body);
    if (keys.length !== 1 || keys[0] !== 'ticket') return { problems: { base: 'body must be {"ticket": {...}}' } };
    const ticket = (body as { ticket: unknown }).ticket;
    if (typeof ticket !== 'object' || ticket === null || Array.isArray(ticket)) return { problems: { ticket: 'must be an object' } };
    const problems: Record<string, string> = {};
    for (const key of Object.keys(ticket)) if (!TICKET_KEYS.has(key)) problems[key] = `unknown field ticket.${key}`;
    const t = ticket as Record<string, unknown>;
    let parsedComment: { body: string; public: boolean } | undefined;
    if (t.comment !== undefined) {
      const c = t.comment as Record<string, unknown>;
      if (typeof c !== 'object' || c === null) problems.comment = 'must be an object';
      else {
        for (const key of Object.keys(c)) if (!COMMENT_KEYS.has(key)) problems[`comment.${key}`] = `unknown field ticket.comment.${key}`;
        const text = typeof c.body === 'string' ? c.body : typeof c.html_body === 'string' ? c.html_body : undefined;
        if (!text || !text.trim()) problems['comment.body'] = 'cannot be blank';
        if (c.public !== undefined && typeof c.public !== 'boolean') problems['comment.public'] = 'must be true or false';
        if (c.author_id !== undefined && c.author_id !== agent.id) problems['comment.author_id'] = 'must be the authenticated agent';
        if (text) parsedComment = { body: text, public: c.public !== false };
      }
    }
    if (t.status !== undefined && (typeof t.status !== 'string' || !STATUSES.has(t.status))) problems.status = 'must be new, open, pending, hold, solved or closed';
    if (t.group_id !== undefined && (typeof t.group_id !== 'number' || !Number.isInteger(t.group_id) || t.group_id <= 0)) problems.group_id = 'must be the id of a group';
    const tagList = (field: string): string[] => {
      const value = t[field];
      if (value === undefined) return [];
      if (!Array.isArray(value) || value.some((tag) => typeof tag !== 'string' || !TAG.test(tag))) {
        problems[field] = 'must be an array of tags without spaces';
        return [];
      }
      return (value as string[]).map((tag) => tag.toLowerCase());
    };
    const tags = t.tags === undefined ? undefined : tagList('tags');
    const add = tagList('additional_tags');
    const remove = tagList('remove_tags');
    if (!parsedComment && t.status === undefined && t.group_id === undefined && tags === undefined && add.length === 0 && remove.length === 0) problems.base = 'nothing to update';
    if (Object.keys(problems).length) return { problems };
    return { update: { comment: parsedComment, status: t.status as StandinTicket['status'] | undefined, groupId: t.group_id as number | undefined, tags, add, remove } };
  }

  /** A user's requested tickets, offset-paginated as Zendesk documents it (List Tickets, "Pagination"). */
  function listRequested(req: IncomingMessage, res: ServerResponse, url: URL, userId: number): void {
    if (!users.has(userId)) return send(res, req, 404, { error: 'RecordNotFound', description: 'Not found' });
    const unknown = [...url.searchParams.keys()].find((k) => !LIST_PARAMS.has(k));
    if (unknown) return send(res, req, 400, { error: 'InvalidParameter', description: `${unknown} is not a parameter of this endpoint` });
    const perPage = Number(url.searchParams.get('per_page') ?? 100);
    const page = Number(url.searchParams.get('page') ?? 1);
    const sortBy = url.searchParams.get('sort_by') ?? 'id';
    const sortOrder = url.searchParams.get('sort_order') ?? 'asc';
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100)
      return send(res, req, 400, { error: 'InvalidPaginationParameter', description: 'per_page must be between 1 and 100' });
    if (!Number.isInteger(page) || page < 1) return send(res, req, 400, { error: 'InvalidPaginationParameter', description: 'page must be a positive number' });
    if (!SORT_BY.has(sortBy) || !['asc', 'desc'].includes(sortOrder))
      return send(res, req, 400, { error: 'InvalidPaginationParameter', description: 'sort_by or sort_order is not allowed' });
    const key = (t: StandinTicket): string | number => (sortBy === 'id' ? t.id : sortBy === 'status' ? t.status : sortBy === 'updated_at' ? t.updated_at : t.created_at);
    const all = [...tickets.values()]
      .filter((t) => t.requester_id === userId)
      .sort((a, b) => {
        const [x, y] = [key(a), key(b)];
        const order = x < y ? -1 : x > y ? 1 : a.id - b.id;
        return sortOrder === 'desc' ? -order : order;
      });
    const at = (n: number) => `${url.origin}${url.pathname}?${new URLSearchParams({ ...Object.fromEntries(url.searchParams), page: String(n) }).toString()}`;
    return send(res, req, 200, {
      tickets: all.slice((page - 1) * perPage, page * perPage).map(view),
      next_page: page * perPage < all.length ? at(page + 1) : null,
      previous_page: page > 1 ? at(page - 1) : null,
      count: all.length,
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://standin');
    const match = /^\/api\/v2\/tickets\/(\d+)(\/comments)?(?:\.json)?$/.exec(url.pathname);
    const requested = /^\/api\/v2\/users\/(\d+)\/tickets\/requested(?:\.json)?$/.exec(url.pathname);
    const isWrite = req.method === 'PUT';
    const fault = takeFault(isWrite);
    if (fault?.kind === 'rate_limit')
      return send(res, req, 429, { error: 'TooManyRequests', description: 'Rate limit exceeded' }, { 'retry-after': String(fault.retryAfterSeconds) });
    if (fault?.kind === 'unauthorized' || req.headers.authorization !== expectedAuth) return send(res, req, 401, { error: "Couldn't authenticate you" });
    if (fault?.kind === 'server_error') return send(res, req, 500, { error: 'InternalServerError', description: 'Something went wrong' });
    if (requested && req.method === 'GET') return listRequested(req, res, url, Number(requested[1]));
    if (!match) return send(res, req, 404, { error: 'InvalidEndpoint', description: 'Not found' });
    const ticket = tickets.get(Number(match[1]));
    if (!ticket) return send(res, req, 404, { error: 'RecordNotFound', description: 'Not found' });
    if (req.method === 'GET' && match[2]) {
      return send(res, req, 200, { comments: ticket.comments, next_page: null, previous_page: null, count: ticket.comments.length });
    }
    if (req.method === 'GET') return send(res, req, 200, { ticket: view(ticket) });
    if (req.method !== 'PUT' || match[2]) return send(res, req, 405, { error: 'MethodNotAllowed' });
    if (!/^application\/json/.test(req.headers['content-type'] ?? '')) return send(res, req, 400, { error: 'Content-Type must be application/json' });
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, req, 400, { error: 'Unprocessable JSON' });
    }
    if (ticket.status === 'closed') return send(res, req, 422, invalid({ status: 'closed prevents ticket update' }));
    const parsed = parseUpdate(body);
    if ('problems' in parsed) return send(res, req, 422, invalid(parsed.problems));
    const { update } = parsed;
    // Zendesk solves only an assigned ticket; with "auto-assign tickets upon solve" the solving agent becomes the assignee (applied below), without it the update is refused whole.
    if (update.status === 'solved' && ticket.assignee_id === null && options.autoAssignOnSolve === false)
      return send(res, req, 422, invalid({ assignee_id: 'is required when solving a ticket' }));
    const events: unknown[] = [];
    if (update.comment) {
      const added = comment(agent.id, update.comment.body, update.comment.public);
      ticket.comments.push(added);
      events.push({ id: added.id, type: 'Comment', author_id: agent.id, body: added.body, public: added.public });
    }
    if (update.status === 'solved' && ticket.assignee_id === null) ticket.assignee_id = agent.id;
    if (update.status) changeStatus(ticket, update.status);
    if (update.groupId !== undefined) ticket.group_id = update.groupId;
    if (update.tags) ticket.tags = [...new Set(update.tags)];
    ticket.tags = [...new Set([...ticket.tags, ...update.add])].filter((tag) => !update.remove.includes(tag));
    ticket.updated_at = now().toISOString();
    if (fault?.kind === 'apply_then_timeout') {
      requests.push({ method: req.method ?? '', path: req.url ?? '', status: 'dropped' });
      setTimeout(() => req.socket.destroy(), fault.hangMs ?? 30_000).unref();
      return;
    }
    return send(res, req, 200, { ticket: view(ticket), audit: { id: nextAudit++, ticket_id: ticket.id, created_at: ticket.updated_at, author_id: agent.id, events } });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) send(res, req, 500, { error: error.message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function commentWebhook(ticketId: number, commentId: number, opts: { timestamp?: string; secret?: string } = {}) {
    const ticket = tickets.get(ticketId);
    const found = ticket?.comments.find((c) => c.id === commentId);
    if (!ticket || !found) throw new Error(`stand-in has no comment ${commentId} on ticket ${ticketId}`);
    const author = users.get(found.author_id) ?? { id: found.author_id, name: 'unknown', is_staff: false };
    const time = now().toISOString();
    // Field for field the documented envelope: developer.zendesk.com/api-reference/webhooks/event-types/ticket-events.
    const payload = {
      account_id: 22129848,
      detail: {
        actor_id: String(author.id),
        assignee_id: ticket.assignee_id === null ? null : String(ticket.assignee_id),
        brand_id: '8447346621310',
        created_at: ticket.created_at,
        custom_status: '8447388088190',
        description: ticket.description,
        external_id: null,
        form_id: '8646151517822',
        group_id: '8447320466430',
        id: String(ticket.id),
        is_public: true,
        organization_id: null,
        priority: 'NORMAL',
        requester_id: String(ticket.requester_id),
        status: ticket.status.toUpperCase(),
        subject: ticket.subject,
        submitter_id: String(ticket.submitter_id),
        tags: ticket.tags,
        type: 'QUESTION',
        updated_at: ticket.updated_at,
        via: { channel: found.via.channel === 'api' ? 'api_client' : 'web_form' },
      },
      event: { comment: { author: { id: String(author.id), is_staff: author.is_staff, name: author.name }, body: found.body, id: String(found.id), is_public: found.public } },
      id: randomUUID(),
      subject: `zen:ticket:${ticket.id}`,
      time,
      type: 'zen:event-type:ticket.comment_added',
      zendesk_event_version: '2022-11-06',
    };
    const body = Buffer.from(JSON.stringify(payload));
    const timestamp = opts.timestamp ?? time.replace(/\.\d{3}Z$/, 'Z');
    return {
      body,
      headers: {
        'content-type': 'application/json',
        [ZENDESK_SIGNATURE_HEADER]: signZendesk(opts.secret ?? webhookSecret, timestamp, body),
        [ZENDESK_TIMESTAMP_HEADER]: timestamp,
      },
    };
  }

  return {
    url,
    agent,
    webhookSecret,
    createTicket(input) {
      const id = nextTicket++;
      users.set(input.requesterId, { id: input.requesterId, name: input.requesterName ?? `Customer ${input.requesterId}`, is_staff: false });
      const first = comment(input.requesterId, input.body, true);
      if (input.createdAt) first.created_at = new Date(input.createdAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const at = first.created_at;
      tickets.set(id, {
        id,
        subject: input.subject,
        description: input.body,
        status: input.status ?? 'new',
        requester_id: input.requesterId,
        submitter_id: input.requesterId,
        assignee_id: null,
        group_id: null,
        tags: [],
        custom_fields: input.customFields ?? [],
        created_at: at,
        updated_at: at,
        comments: [first],
      });
      history.set(id, [input.status ?? 'new']);
      return { ticketId: id, commentId: first.id };
    },
    addCustomerComment(ticketId, authorId, body) {
      const ticket = tickets.get(ticketId);
      if (!ticket) throw new Error(`stand-in has no ticket ${ticketId}`);
      if (!users.has(authorId)) users.set(authorId, { id: authorId, name: `Customer ${authorId}`, is_staff: false });
      const added = comment(authorId, body, true);
      ticket.comments.push(added);
      // A requester's comment opens the ticket again.
      changeStatus(ticket, 'open');
      return added.id;
    },
    ticket(ticketId) {
      const t = tickets.get(ticketId);
      return t && { status: t.status, groupId: t.group_id, tags: [...t.tags], comments: t.comments.map((c) => ({ ...c })) };
    },
    statusHistory(ticketId) {
      return [...(history.get(ticketId) ?? [])];
    },
    setStatus(ticketId, status) {
      const t = tickets.get(ticketId);
      if (!t) throw new Error(`stand-in has no ticket ${ticketId}`);
      changeStatus(t, status);
    },
    commentWebhook,
    async sendCommentWebhook(target, ticketId, commentId, opts) {
      const { body, headers } = commentWebhook(ticketId, commentId, opts);
      const response = await fetch(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
      await response.arrayBuffer();
      return response.status;
    },
    inject(fault) {
      faults.push({ ...fault });
    },
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A stand-in ticket as two views, for the demo: the thread as the customer sees it (public
 * comments, customer and casework) and the internal notes as the team sees them.
 */
export function formatThread(standin: DeskStandin, ticketId: number): string {
  const ticket = standin.ticket(ticketId);
  if (!ticket) return `(no ticket ${ticketId})`;
  const who = (authorId: number) => (authorId === standin.agent.id ? 'casework' : `customer ${authorId}`);
  const lines = [`Ticket ${ticketId} (${ticket.status}) as the customer sees it:`];
  for (const c of ticket.comments.filter((c) => c.public)) lines.push(`  [${who(c.author_id)}] ${c.body.replace(/\n/g, '\n    ')}`);
  const notes = ticket.comments.filter((c) => !c.public);
  lines.push(`Internal notes (${notes.length}):`);
  for (const c of notes) lines.push(`  [${who(c.author_id)}] ${c.body.replace(/\n/g, '\n    ')}`);
  const tags = ticket.tags.filter((t) => !t.startsWith('casework_cw'));
  if (tags.length) lines.push(`Tags: ${tags.join(', ')}`);
  return lines.join('\n');
}
