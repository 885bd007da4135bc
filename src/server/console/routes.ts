import type { IncomingMessage } from 'node:http';
import type { RefundDecision } from '../../schemas/investigation';
import { decideRefund, readStatus } from '../../client/investigations';
import { mapRequesterAndDeliver } from '../../client/parked-deliveries';
import { discardParked, isParkingDesk, listParked } from '../../db/parked-deliveries';
import { eraseCustomer, erasureDepsOf } from '../../client/erasure';
import { closedCaseLine, openInvestigations } from '../../client/erasure-closing';
import { bodyCodecOf } from '../../temporal/codec/body-codec';
import { codecFor } from '../../temporal/data-converter';
import { correctNote, forgetMemory, showMemory } from '../../memory/control';
import { decisionProblem } from '../../workflows/approvals';
import { mayDecide, mayDecideAs, soleApprover, type Principal } from '../auth';
import type { RouteContext, Trace } from '../context';
import { errorAnswer, HttpError, type Answer } from '../http';
import { CONSOLE_CSS, CONSOLE_JS } from './assets';
import { pendingCases, readCase, withPersonCases } from './cases';
import { checkCsrf, checkOrigin } from './csrf';
import { deliveriesPage } from './deliveries';
import { field, readForm } from './form';
import { money } from './format';
import { inboxPage } from './inbox';
import { liveLedger } from './ledger-card';
import { ledgerProblem } from '../../context/ledger';
import type { OrderLedger } from '../../schemas/ledger';
import type { CaseView } from './cases';
import { PAGE_HEADERS } from './layout';
import { lookupPage, memoryPage } from './memory';
import { errorPage, signInPage } from './pages';
import { customerRefs, type CustomerRefs } from './refs';
import { consoleSecrets, type ConsoleSecrets } from './secrets';
import { cookiesOf, overTls, randomToken, sessionCookie, type Flash, type Session, type SessionStore } from './session';
import { postgresSessions } from './session-store';
import { loadKeyring } from '../../temporal/codec/keys';
import { timelinePage } from './timeline';

// The support team's console, under the HTTP server at /console. Every page checks its grant
// here, on the server: approvers decide refunds, the support grant reads cases and memory and
// corrects or forgets notes; both read the inbox and timelines. Every form carries the
// session's CSRF token. URLs hold only workflow ids, request ids and opaque customer
// references, so no customer data reaches a URL, a browser history or a log line.
//
//   GET  /console                                 -> the inbox, or sign-in
//   GET  /console/sign-in · POST /console/sign-in · POST /console/sign-out
//   GET  /console/inbox · GET /console/inbox/pending (JSON, the poll) · POST /console/inbox/decide
//   GET  /console/cases/:workflowId                a case's timeline
//   GET  /console/deliveries · POST /console/deliveries/map · POST /console/deliveries/:id/discard
//   GET  /console/customers · POST /console/customers/lookup
//   GET  /console/customers/:ref · POST /console/customers/:ref/correct | forget | forget-all | erase
//   GET  /console/assets/console.css | console.js

/** Where the console is mounted. */
export const CONSOLE_PREFIX = '/console';

/** The pre-sign-in cookie: the sign-in form's CSRF token, double-submitted (there is no session yet). */
const PRE_COOKIE = 'casework_console_pre';

/**
 * What the console works with between requests: sessions in Postgres, and the keys its CSRF
 * tokens and customer references are made under. Nothing in it is this process's own, so any
 * replica serves any request.
 */
interface ConsoleState {
  sessions: SessionStore;
  refs: CustomerRefs;
  secrets: ConsoleSecrets;
}

// One state per route context (that is, per app).
const states = new WeakMap<RouteContext, ConsoleState>();

/** Prepares the console of an app: loads its keys (failing at start, naming the variable, when there are none). */
export function openConsole(ctx: RouteContext): void {
  if (states.has(ctx)) return;
  const { config } = ctx.deps;
  const secrets = consoleSecrets(loadKeyring(config));
  const lifetimes = { idleMs: config.CASEWORK_CONSOLE_IDLE_MINUTES * 60_000, absoluteMs: config.CASEWORK_CONSOLE_SESSION_HOURS * 3_600_000 };
  states.set(ctx, { sessions: postgresSessions(ctx.deps.pool, { secrets, lifetimes, now: ctx.deps.now }), refs: customerRefs(secrets), secrets });
}

function stateOf(ctx: RouteContext): ConsoleState {
  openConsole(ctx);
  return states.get(ctx)!;
}

const WORKFLOW_ID = /^investigation-[A-Za-z0-9_-]{1,120}$/;

const htmlAnswer = (status: number, html: string, headers: Record<string, string> = {}): Answer => ({ status, body: null, html, headers: { ...PAGE_HEADERS, ...headers } });
const redirect = (to: string, headers: Record<string, string> = {}): Answer => ({ status: 303, body: null, html: '', headers: { location: to, ...headers } });

/** True when a principal may use the console at all. */
function mayUseConsole(principal: Principal): boolean {
  return principal.support || mayDecide(principal);
}

function requireSupport(session: Session): void {
  if (!session.principal.support) throw new HttpError(403, 'reading and changing customer memory needs the support grant; this key does not have it');
}

function requireDecider(session: Session): void {
  if (!mayDecide(session.principal)) throw new HttpError(403, 'deciding refunds needs an approver grant; this key may only read cases');
}

/** Serves one console path. */
export async function consoleRoute(ctx: RouteContext, req: IncomingMessage, path: string, trace: Trace): Promise<Answer> {
  const state = stateOf(ctx);
  let session: Session | undefined;
  try {
    session = await currentSession(ctx, state, req, path);
    if (session) trace.principal = session.principal.label;
    return await serve(ctx, state, req, path, session);
  } catch (error) {
    const answer = errorAnswer(error);
    if (answer.status === 500) trace.error = `${(error as Error).name}: ${(error as Error).message}`;
    const message = (answer.body as { error?: string } | null)?.error ?? 'the request failed';
    return htmlAnswer(answer.status, errorPage(answer.status, message, session), answer.headers);
  }
}

/**
 * The request's session with what its key may do now: grants follow CASEWORK_API_KEYS as this
 * replica has it, and a session whose key has been removed ends (a revoked key signs no one in,
 * whichever replica a request lands on).
 */
async function currentSession(ctx: RouteContext, state: ConsoleState, req: IncomingMessage, path: string): Promise<Session | undefined> {
  const session = await state.sessions.of(req, { takeFlash: showsFlash(req, path) });
  if (!session) return undefined;
  const principal = ctx.auth.principalOfLabel(session.principal.label);
  if (!principal) {
    await state.sessions.end(session.id);
    return undefined;
  }
  return { ...session, principal };
}

/** True for a request answered with a page, which shows the session's message (and so clears it). */
function showsFlash(req: IncomingMessage, path: string): boolean {
  const rest = path.slice(CONSOLE_PREFIX.length);
  return (req.method ?? 'GET') === 'GET' && rest !== '/inbox/pending' && !rest.startsWith('/assets/') && rest !== '' && rest !== '/' && rest !== '/sign-in';
}

async function serve(ctx: RouteContext, state: ConsoleState, req: IncomingMessage, path: string, session: Session | undefined): Promise<Answer> {
  const method = req.method ?? 'GET';
  const rest = path.slice(CONSOLE_PREFIX.length) || '/';
  const only = (allowed: 'GET' | 'POST') => {
    if (method !== allowed) throw new HttpError(405, `${method} is not allowed here; use ${allowed}`, { allow: allowed });
  };

  if (rest === '/assets/console.css' || rest === '/assets/console.js') {
    only('GET');
    const css = rest.endsWith('.css');
    return {
      status: 200,
      body: null,
      html: css ? CONSOLE_CSS : CONSOLE_JS,
      headers: { 'content-type': css ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', 'cache-control': 'max-age=300', 'x-content-type-options': 'nosniff' },
    };
  }
  if (rest === '/sign-in') {
    if (method === 'GET') return showSignIn(ctx, req);
    only('POST');
    return signIn(ctx, state, req);
  }
  if (rest === '/') {
    only('GET');
    return redirect(session ? '/console/inbox' : '/console/sign-in');
  }

  // Everything below needs a session.
  if (!session) {
    if (method === 'GET') return redirect('/console/sign-in');
    throw new HttpError(403, 'sign in to the console first: the form was sent without a session');
  }
  if (method === 'POST') {
    checkOrigin(req);
    const form = await readForm(req);
    checkCsrf(session, form, state.secrets);
    return post(ctx, state, req, rest, session, form);
  }
  only('GET');
  return get(ctx, state, rest, session);
}

function showSignIn(ctx: RouteContext, req: IncomingMessage): Answer {
  const token = randomToken();
  const html = signInPage({ open: ctx.auth.mode === 'open' }).replace(
    '<form method="post" action="/console/sign-in" class="card">',
    (form) => `${form}<input type="hidden" name="csrf" value="${token}">`,
  );
  return htmlAnswer(200, html, { 'set-cookie': `${PRE_COOKIE}=${token}; Path=/console; HttpOnly; SameSite=Strict${overTls(req) ? '; Secure' : ''}` });
}

async function signIn(ctx: RouteContext, state: ConsoleState, req: IncomingMessage): Promise<Answer> {
  checkOrigin(req);
  const form = await readForm(req);
  const pre = cookiesOf(req)[PRE_COOKIE];
  const sent = form.get('csrf');
  if (!pre || !sent || pre !== sent) throw new HttpError(403, 'the sign-in form is missing its security token; open the sign-in page again');
  const key = (form.get('key') ?? '').trim();
  const principal = ctx.auth.authenticateKey(key);
  const again = (status: number, problem: string) => {
    const answer = showSignIn(ctx, req);
    return { ...answer, status, html: (answer.html ?? '').replace('<h1>Sign in</h1>', `<h1>Sign in</h1>\n  <p class="flash error" role="alert">${problem}</p>`) };
  };
  if (!principal) return again(401, 'That key is not one casework knows. Check it and try again.');
  if (!mayUseConsole(principal)) {
    throw new HttpError(403, 'this key may not use the console: it needs an approver:<name> grant (to decide refunds) or the support grant (to read cases and memory)');
  }
  // The name typed goes in the audit trail, also for a key that decides as one approver (whose name then only stands in when none is typed).
  const person = (form.get('person') ?? '').trim().slice(0, 100) || (soleApprover(principal) ?? '');
  if (!person) return again(400, 'Give your name: this key decides or acts as whoever signs in with it, and the audit trail records who.');
  const session = await state.sessions.create(principal, person);
  return redirect('/console/inbox', { 'set-cookie': sessionCookie(session.id, overTls(req)) });
}

/** The pending cases' order ledgers as they are now, by workflow id (a case whose ledger cannot be read is left out). */
async function liveLedgers(ctx: RouteContext, cases: readonly CaseView[]): Promise<Map<string, OrderLedger>> {
  const out = new Map<string, OrderLedger>();
  for (const c of cases) {
    const request = c.status.pendingApproval;
    if (!request) continue;
    const ledger = await liveLedger(ctx.deps.pool, c.status.customerId, request.order_id);
    if (ledger) out.set(c.workflowId, ledger);
  }
  return out;
}

async function get(ctx: RouteContext, state: ConsoleState, rest: string, session: Session): Promise<Answer> {
  const { config } = ctx.deps;
  const source = { client: ctx.deps.client, log: ctx.transcriptLog };
  if (rest === '/inbox') {
    const cases = await ctx.temporal('listing pending approvals', () => pendingCases(source, ctx.taskQueue), ctx.temporalTimeoutMs * 2);
    const ledgers = await liveLedgers(ctx, cases);
    const withPerson = await ctx.temporal('listing cases with a person', () => withPersonCases(source, ctx.taskQueue), ctx.temporalTimeoutMs * 2);
    return htmlAnswer(
      200,
      inboxPage(cases, { session, settings: ctx.settings, refs: state.refs, now: Date.now(), pollMs: config.CASEWORK_CONSOLE_POLL_SECONDS * 1000, ledgers, withPerson }),
    );
  }
  if (rest === '/inbox/pending') {
    const cases = await ctx.temporal('listing pending approvals', () => pendingCases(source, ctx.taskQueue), ctx.temporalTimeoutMs * 2);
    return { status: 200, body: { requestIds: cases.map((c) => c.status.pendingApproval?.request_id).filter(Boolean) } };
  }
  const caseMatch = /^\/cases\/([^/]+)$/.exec(rest);
  if (caseMatch) {
    const workflowId = caseMatch[1] ?? '';
    if (!WORKFLOW_ID.test(workflowId)) throw new HttpError(400, 'a case is named by its investigation id, e.g. investigation-T-1001');
    const view = await ctx.temporal('reading the case', () => readCase(source, workflowId));
    return htmlAnswer(200, timelinePage(view, { session, settings: ctx.settings, refs: state.refs, temporalUiUrl: config.TEMPORAL_UI_URL, namespace: config.TEMPORAL_NAMESPACE }));
  }
  if (rest === '/customers') {
    requireSupport(session);
    return htmlAnswer(200, lookupPage(session));
  }
  if (rest === '/deliveries') {
    requireSupport(session);
    return htmlAnswer(200, deliveriesPage(await listParked(ctx.deps.pool, { waiting: true }), session));
  }
  const memoryMatch = /^\/customers\/([^/]+)$/.exec(rest);
  if (memoryMatch) {
    requireSupport(session);
    const ref = memoryMatch[1] ?? '';
    const customerId = customerOf(state, ref);
    const memory = await showMemory(ctx.deps.pool, customerId, { actor: actorOf(session) });
    // The erase form's confirmation names the cases an erasure would close; Temporal down only loses that list.
    const open = await openInvestigations(ctx.deps, customerId).then(
      (runs) => runs.map((r) => r.workflowId),
      () => undefined,
    );
    return htmlAnswer(200, memoryPage(memory, ref, session, open));
  }
  throw new HttpError(404, 'no such console page');
}

function customerOf(state: ConsoleState, ref: string): string {
  const customerId = state.refs.customerOf(ref);
  if (!customerId) throw new HttpError(404, 'this customer link is not one casework can open (it was altered, or made under a key since retired); look the customer up again');
  return customerId;
}

/** Who the audit trail names: the person and the key they signed in with, never the key itself. */
function actorOf(session: Session): string {
  return `${session.person} via console (${session.principal.label})`;
}

async function post(ctx: RouteContext, state: ConsoleState, req: IncomingMessage, rest: string, session: Session, form: URLSearchParams): Promise<Answer> {
  if (rest === '/sign-out') {
    await state.sessions.end(session.id);
    return redirect('/console/sign-in', { 'set-cookie': sessionCookie(null, overTls(req)) });
  }
  if (rest === '/inbox/decide') return decide(ctx, state, session, form);
  if (rest === '/deliveries/map' || /^\/deliveries\/\d+\/discard$/.test(rest)) return parkedAction(ctx, state, rest, session, form);
  if (rest === '/customers/lookup') {
    requireSupport(session);
    const customerId = field(form, 'customerId', 'the customer id', 100);
    return redirect(`/console/customers/${state.refs.refOf(customerId)}`);
  }
  const action = /^\/customers\/([^/]+)\/(correct|forget|forget-all|erase)$/.exec(rest);
  if (action) {
    requireSupport(session);
    const ref = action[1] ?? '';
    const customerId = customerOf(state, ref);
    const back = `/console/customers/${ref}`;
    const { pool } = ctx.deps;
    const done = async (kind: Flash['kind'], text: string) => {
      await state.sessions.flash(session.id, { kind, text });
      return redirect(back);
    };
    try {
      if (action[2] === 'correct') {
        const noteId = field(form, 'noteId', 'the note id', 20);
        const note = await correctNote(pool, customerId, noteId, field(form, 'text', 'the corrected text', 1000), actorOf(session));
        return done('ok', `Note ${note.note_id} corrected.`);
      }
      if (action[2] === 'forget') {
        const noteId = field(form, 'noteId', 'the note id', 20);
        await forgetMemory(pool, customerId, { noteId, actor: actorOf(session) });
        return done('ok', `Note ${noteId} forgotten.`);
      }
      if (action[2] === 'erase') {
        // Erasure cannot be undone: the person types the customer's own id, not a generic word.
        if ((form.get('confirm') ?? '').trim() !== customerId) return done('error', `Nothing was erased: type the customer id ${customerId} to confirm.`);
        const erased = await eraseCustomer(erasureDepsOf(ctx.deps.config, pool, ctx.deps.client), { customerId, by: actorOf(session) });
        const closed = erased.closed.length ? ` Closed first: ${erased.closed.map(closedCaseLine).join('; ')}.` : '';
        return done('ok', `Erased on ${erased.erasure.erasedAt.slice(0, 10)}: memory deleted, data key destroyed; their transcripts can no longer be read.${closed}`);
      }
      if ((form.get('confirm') ?? '').trim().toLowerCase() !== 'forget') return done('error', 'Nothing was deleted: type "forget" to confirm forgetting everything.');
      const result = await forgetMemory(pool, customerId, { actor: actorOf(session) });
      return done('ok', `Forgot everything: ${result.deleted.notes} notes, ${result.deleted.cases} cases, ${result.deleted.profile_fields} profile fields.`);
    } catch (error) {
      // A refusal in words (the note says something not allowed, no such note) goes back to the page.
      const answer = errorAnswer(error);
      if (answer.status >= 500) throw error;
      return done('error', (answer.body as { error?: string }).error ?? 'not changed');
    }
  }
  throw new HttpError(404, 'no such console form');
}

/** Maps a parked delivery's requester (delivering what waits for them) or discards one delivery. */
async function parkedAction(ctx: RouteContext, state: ConsoleState, rest: string, session: Session, form: URLSearchParams): Promise<Answer> {
  requireSupport(session);
  const done = async (kind: Flash['kind'], text: string) => {
    await state.sessions.flash(session.id, { kind, text });
    return redirect('/console/deliveries');
  };
  try {
    const discard = /^\/deliveries\/(\d+)\/discard$/.exec(rest);
    if (discard) {
      const parked = await discardParked(ctx.deps.pool, { id: Number(discard[1]), by: actorOf(session), reason: field(form, 'reason', 'the reason', 500) });
      return done('ok', `Discarded delivery ${parked.id} (${parked.desk} ticket ${parked.ticketId}).`);
    }
    const desk = field(form, 'desk', 'the desk', 20);
    if (!isParkingDesk(desk)) throw new HttpError(400, 'the desk must be zendesk, intercom or freshdesk');
    const input = {
      desk,
      requester: field(form, 'requester', 'the requester', 320),
      customerId: field(form, 'customerId', 'the customer id', 100),
      by: actorOf(session),
    };
    const { client, pool, config } = ctx.deps;
    const result = await ctx.temporal('delivering parked deliveries', () =>
      mapRequesterAndDeliver({ client, pool, codec: bodyCodecOf(codecFor(config)) }, input, { taskQueue: ctx.taskQueue, settings: ctx.settings }),
    );
    const still = result.stillParked.length ? ` ${result.stillParked.length} still wait: ${result.stillParked.map((s) => s.why).join('; ')}` : '';
    return done(
      result.stillParked.length ? 'error' : 'ok',
      `Mapped ${input.desk} requester ${input.requester} to ${input.customerId}; delivered ${result.delivered.length}.${still}`,
    );
  } catch (error) {
    const answer = errorAnswer(error);
    if (answer.status >= 500) throw error;
    return done('error', (answer.body as { error?: string }).error ?? 'not changed');
  }
}

async function decide(ctx: RouteContext, state: ConsoleState, session: Session, form: URLSearchParams): Promise<Answer> {
  requireDecider(session);
  const workflowId = field(form, 'workflowId', 'the investigation id', 140);
  if (!WORKFLOW_ID.test(workflowId)) throw new HttpError(400, 'the investigation id is not one casework makes');
  const requestId = field(form, 'requestId', 'the request id', 200);
  const decision = form.get('decision');
  if (decision !== 'approved' && decision !== 'denied') throw new HttpError(400, 'the decision must be approve or deny');
  const reason = (form.get('reason') ?? '').trim().slice(0, 2000);
  const approver = soleApprover(session.principal) ?? session.person;
  const back = async (kind: Flash['kind'], text: string) => {
    await state.sessions.flash(session.id, { kind, text });
    return redirect('/console/inbox');
  };
  if (!mayDecideAs(session.principal, approver)) return back('error', `Your key may not decide refunds as ${approver}.`);
  if (decision === 'denied' && !reason) return back('error', 'Nothing was sent: give a reason to deny, so the customer can be told why.');
  const { client } = ctx.deps;
  // Re-check first, with the validator's own rule: another person may have decided since this
  // page was drawn. The words are the validator's, so the page says what the CLI would.
  const status = await ctx.temporal('reading the case', () => readStatus(client, workflowId));
  const asked: RefundDecision = { requestId, decision, approver, ...(reason ? { reason } : {}), decidedBy: session.person, via: `console ${session.principal.label}` };
  const request = status.pendingApproval;
  // The ledger as it is now, not only as the case last heard of it: another case may have paid since.
  const live = request && decision === 'approved' && request.kind ? await liveLedger(ctx.deps.pool, status.customerId, request.order_id) : undefined;
  const problem =
    decisionProblem(status.pendingApproval, status.decisions, asked) ??
    (live && request?.kind
      ? ledgerProblem(live, { request_id: request.request_id, amount_cents: request.amount_cents, kind: request.kind, charge_id: request.charge_id ?? null })
      : null);
  if (problem || !request) {
    const earlier = status.decisions.find((d) => d.requestId === requestId);
    const who = earlier ? ` (${earlier.decision} by ${earlier.approver})` : '';
    return back('error', `Refund decision refused: ${problem ?? 'no refund is waiting for approval'}${who}. Nothing was sent.`);
  }
  try {
    await ctx.temporal('sending the decision', () => decideRefund(client, workflowId, asked), ctx.updateTimeoutMs);
  } catch (error) {
    const answer = errorAnswer(error);
    if (answer.status >= 500 && answer.status !== 503) throw error;
    // The validator's own words: over the approver's limit, already decided, not yet pending.
    return back('error', (answer.body as { error?: string }).error ?? 'the decision was refused');
  }
  return back(
    'ok',
    `${decision === 'approved' ? 'Approved' : 'Denied'} the ${money(request.amount_cents, request.currency)} refund on order ${request.order_id} (ticket ${status.ticketId}) as ${approver}; the investigation continues.`,
  );
}
