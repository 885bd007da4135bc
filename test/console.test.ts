import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readStatus } from '../src/client/investigations';
import type { Database } from '../src/db/pool';
import { runMemoryCommand } from '../src/main/commands/memory';
import { showMemory } from '../src/memory/control';
import type { RequestLog } from '../src/server/app';
import { consoleCommand } from '../src/main/commands/console';
import { startServer, type RunningServer } from '../src/server/start';
import { PREVIEW_CHARS, PREVIEW_CUT } from '../src/context/references';
import { carriedStateQuery } from '../src/workflows/investigation-api';
import { consoleAgent, visibleText, type ConsoleAgent } from './support/console-agent';
import { clearingRun, pendingRefund, seedConsoleMemory, type PendingRefund } from './support/console-cases';
import { openTestDatabase, unique } from './support/db';
import { answer, scriptedModel } from './support/scripted-model';
import { parkDelivery } from '../src/db/parked-deliveries';
import { bodyCodecOf } from '../src/temporal/codec/body-codec';
import { codecFor } from '../src/temporal/data-converter';
import { settle } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';

// The support console over real HTTP, against the suite's Temporal dev server, a worker driven
// by the scripted model, and real Postgres: sign-in and grants, the cookie and CSRF, the
// approvals inbox deciding through the validated update, a case's timeline and chart, and the
// customer's memory page with correct / forget / forget everything.

const LEAD = 'ak_lead_console_0123456789ab'; // approver:support-lead
const ANY = 'ak_any_console_0123456789abc'; // approver:* (the person names the approver)
const SUPPORT = 'sk_support_console_01234567'; // support
const DANA = 'ck_dana_console_0123456789ab'; // cust_dana: a customer's key, not a console one
const TRUSTED = 'tk_trusted_console_0123456789'; // *: the ticketing system's key

const model = scriptedModel();
let db: Database;
let tw: TestWorker;
let server: RunningServer;
const logs: RequestLog[] = [];

const agent = () => consoleAgent(server.url);
async function signedIn(key: string, person = ''): Promise<ConsoleAgent> {
  const a = agent();
  const res = await a.signIn(key, person);
  assert.equal(res.status, 303, `sign-in succeeds: ${res.text.slice(0, 300)}`);
  await a.follow(res);
  return a;
}

const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

before(async () => {
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({ pool: db.app, model });
  const config = {
    ...tw.config,
    CASEWORK_API_KEYS: [`${LEAD}:approver:support-lead`, `${ANY}:approver:*`, `${SUPPORT}:support`, `${DANA}:cust_dana`, `${TRUSTED}:*`].join(','),
  };
  server = await startServer({ client: tw.client, pool: db.app, config, log: (e) => logs.push(e) }, 0);
});
after(async () => {
  await server?.close();
  await tw?.stop();
  await db?.close();
});

describe('signing in', () => {
  test('an approver key and a support key sign in; the session cookie is HttpOnly and SameSite=Strict, not Secure over plain HTTP', async () => {
    const lead = agent();
    assert.equal((await lead.get('/console')).headers.get('location'), '/console/sign-in', 'no session: the console sends you to sign in');
    const res = await lead.signIn(LEAD);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/console/inbox');
    const cookie = lead.setCookies.find((c) => c.startsWith('casework_console='));
    assert.ok(cookie, 'a session cookie is set');
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.doesNotMatch(cookie, /Secure/);
    assert.ok(!cookie.includes(LEAD), 'the cookie does not carry the key');
    const inbox = await lead.follow(res);
    assert.equal(inbox.status, 200);
    assert.match(visibleText(inbox.text), /Signed in as support-lead \(key:[0-9a-f]{8}\)/, 'a key for one approver signs in as that approver');

    const support = await signedIn(SUPPORT, 'Sam from support');
    assert.match(visibleText((await support.get('/console/inbox')).text), /Signed in as Sam from support/);
  });

  test('behind a proxy that says X-Forwarded-Proto: https (or over TLS) the cookies are Secure too', async () => {
    const a = agent();
    const res = await a.signIn(LEAD, '', { 'x-forwarded-proto': 'https' });
    assert.equal(res.status, 303);
    for (const name of ['casework_console_pre=', 'casework_console=']) {
      const cookie = a.setCookies.find((c) => c.startsWith(name));
      assert.match(cookie ?? '', /; HttpOnly; SameSite=Strict.*; Secure/, `${name} is Secure`);
    }
  });

  test('an unknown key is refused with words; a customer key and the ticketing key may not use the console (403)', async () => {
    const unknown = await agent().signIn('not-a-key-casework-knows-0000');
    assert.equal(unknown.status, 401);
    assert.match(visibleText(unknown.text), /That key is not one casework knows/);
    assert.ok(!unknown.headers.getSetCookie().some((c) => c.startsWith('casework_console=')), 'no session for an unknown key');
    for (const key of [DANA, TRUSTED]) {
      const refused = await agent().signIn(key, 'someone');
      assert.equal(refused.status, 403);
      assert.match(visibleText(refused.text), /this key may not use the console: it needs an approver:<name> grant .* or the support grant/);
    }
    const anyApprover = await agent().signIn(ANY);
    assert.equal(anyApprover.status, 400, 'a key for any approver must say who is signing in');
    assert.match(visibleText(anyApprover.text), /Give your name/);
  });

  test('the sign-in form needs its own token: a sign-in posted from elsewhere is refused', async () => {
    const a = agent();
    const res = await a.post('/console/sign-in', { key: LEAD }, { csrf: false });
    assert.equal(res.status, 403);
    assert.match(visibleText(res.text), /missing its security token/);
  });

  test('signing out ends the session on the server: the old cookie no longer opens a page', async () => {
    const a = await signedIn(LEAD);
    const cookie = a.setCookies.find((c) => c.startsWith('casework_console='))!.split(';')[0]!;
    const out = await a.post('/console/sign-out', {});
    assert.equal(out.headers.get('location'), '/console/sign-in');
    const replay = await fetch(`${server.url}/console/inbox`, { headers: { cookie }, redirect: 'manual' });
    assert.equal(replay.status, 303, 'the old session id is gone');
  });
});

describe('grants, checked on the server', () => {
  test('without a session a page redirects to sign-in and a form is refused', async () => {
    for (const path of ['/console/inbox', '/console/customers', '/console/cases/investigation-T-1']) {
      const res = await agent().get(path);
      assert.equal(res.status, 303, path);
      assert.equal(res.headers.get('location'), '/console/sign-in');
    }
    const res = await agent().post('/console/inbox/decide', { workflowId: 'investigation-T-1', requestId: 'r', decision: 'approved' });
    assert.equal(res.status, 403);
  });

  test('a support key cannot decide a refund (403), and an approver key cannot open customer memory (403)', async () => {
    const support = await signedIn(SUPPORT, 'Sam');
    const decided = await support.post('/console/inbox/decide', { workflowId: 'investigation-T-1', requestId: 'r', decision: 'approved' });
    assert.equal(decided.status, 403);
    assert.match(visibleText(decided.text), /deciding refunds needs an approver grant/);
    const lead = await signedIn(LEAD);
    for (const path of ['/console/customers']) {
      const res = await lead.get(path);
      assert.equal(res.status, 403, path);
      assert.match(visibleText(res.text), /needs the support grant/);
    }
    const lookup = await lead.post('/console/customers/lookup', { customerId: 'cust_dana' });
    assert.equal(lookup.status, 403);
  });
});

describe('the approvals inbox', () => {
  let older: PendingRefund;
  let newer: PendingRefund;

  before(async () => {
    older = await pendingRefund(tw, model, 700, 'Marked delivered, never received.');
    newer = await pendingRefund(tw, model, 1200, 'Charged twice for one parcel.');
  });

  test('an approver-only session is shown no link it cannot open; a support session is shown the memory links', async () => {
    const links = (html: string) => [...html.matchAll(/href="(\/console[^"]*)"/g)].map((m) => m[1]!).filter((href) => !href.startsWith('/console/assets/'));
    const lead = await signedIn(LEAD);
    const inbox = await lead.get('/console/inbox');
    const timeline = await lead.get(`/console/cases/${older.id}`);
    const shown = [...new Set([...links(inbox.text), ...links(timeline.text)])];
    assert.ok(shown.includes(`/console/cases/${older.id}`), 'the case timeline is linked');
    assert.deepEqual(
      shown.filter((href) => href.startsWith('/console/customers')),
      [],
      'no memory link for a key without the support grant',
    );
    for (const href of shown) {
      const res = await lead.get(href);
      // The console's root redirects to the inbox: the page it lands on must open too.
      assert.equal((res.status === 303 ? await lead.follow(res) : res).status, 200, href);
    }
    const support = await signedIn(SUPPORT, 'Sam');
    const supportLinks = [...links((await support.get('/console/inbox')).text), ...links((await support.get(`/console/cases/${older.id}`)).text)];
    assert.ok(supportLinks.includes('/console/customers'), 'the support grant sees the memory pages');
    assert.ok(
      supportLinks.some((href) => /^\/console\/customers\/c_/.test(href)),
      "and each case's customer memory",
    );
  });

  test('lists each pending refund oldest first, with customer, order, amount, reason, the evidence decoded, the wait, the reminder and the auto-deny', async () => {
    const lead = await signedIn(LEAD);
    // Visibility is eventually consistent: the status upsert can take a moment to be listed.
    let page = '';
    for (let i = 0; i < 100; i++) {
      page = (await lead.get('/console/inbox')).text;
      if (page.includes(older.status.pendingApproval!.request_id) && page.includes(newer.status.pendingApproval!.request_id)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const first = page.indexOf(`data-request-id="${older.status.pendingApproval!.request_id}"`);
    const second = page.indexOf(`data-request-id="${newer.status.pendingApproval!.request_id}"`);
    assert.ok(first > 0 && second > 0, 'both pending refunds are listed');
    assert.ok(first < second, 'the one waiting longest comes first');
    const card = visibleText(page.slice(first, second));
    assert.match(card, /£7\.00 refund on order 5102/);
    assert.match(card, /Customer cust_dana/);
    assert.match(card, /Order 5102/);
    assert.match(card, /Amount £7\.00/);
    assert.match(card, /Reason: Marked delivered, never received\./);
    assert.match(card, /Waiting for \d+ (s|min)/);
    assert.match(card, /Reminder \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    assert.match(card, /Auto-denied at \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    assert.match(card, /Who may approve support-lead \(up to £10\.00\), duty-manager \(up to £2,000\.00\)/);
    assert.match(
      card,
      /Tool results the agent used get_order\(order_id=5102\) : Order 5102: delivered, placed \d{4}-\d\d-\d\d, total £112\.99, items: /,
      'the evidence reads as the desk note says it',
    );
    const summaries = [...page.slice(first, second).matchAll(/<summary>([\s\S]*?)<\/summary>/g)].map((m) => visibleText(m[1]!));
    assert.ok(
      summaries.length > 0 && summaries.every((line) => !line.includes('{') && !line.endsWith('…')),
      `each evidence line is a whole sentence, not JSON cut mid-way: ${summaries.join(' | ')}`,
    );
    assert.ok(card.includes(flat(older.orderResult)), 'the tool result the agent saw is shown decoded, word for word, a click away');
    assert.match(card, /Approve £7\.00/);
    // The order's ledger, read now, in the order's currency.
    assert.match(card, /Order 5102 ledger \(GBP, now\)/);
    assert.match(card, /Captured £112\.99 in 1 charge/);
    assert.match(card, /Pending in ticket \S+ £12\.00/, "the other case's pending request on the order is shown with its ticket");

    const pending = await lead.get('/console/inbox/pending');
    const ids = (JSON.parse(pending.text) as { requestIds: string[] }).requestIds;
    assert.ok(ids.includes(older.status.pendingApproval!.request_id), 'the poll lists what is pending');

    // A support key reads the inbox but is offered no decision.
    const support = await signedIn(SUPPORT, 'Sam');
    const theirs = visibleText((await support.get('/console/inbox')).text);
    assert.match(theirs, /deciding refunds needs an approver grant/);
    assert.doesNotMatch(theirs, /Approve £7\.00/);
  });

  test('a forged form post without the CSRF token, with a wrong one, or from another origin is refused and nothing is decided', async () => {
    const lead = await signedIn(LEAD);
    const request = older.status.pendingApproval!;
    const fields = { workflowId: older.id, requestId: request.request_id, decision: 'approved' };
    const none = await lead.post('/console/inbox/decide', fields, { csrf: false });
    assert.equal(none.status, 403);
    assert.match(visibleText(none.text), /missing its security token/);
    assert.equal((await lead.post('/console/inbox/decide', fields, { csrf: 'forged-token-forged-token-forged-token-12' })).status, 403);
    const cross = await lead.post('/console/inbox/decide', fields, { headers: { origin: 'https://evil.example' } });
    assert.equal(cross.status, 403);
    assert.match(visibleText(cross.text), /came from another site/);
    // A form that is not the console's own (JSON) is not a form.
    const json = await fetch(`${server.url}/console/inbox/decide`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(json.status, 403, 'no session, no form');
    assert.equal((await readStatus(tw.client, older.id)).pendingApproval?.request_id, request.request_id, 'still pending');
  });

  test('approving goes through the validated update as the CLI does, and the case continues; the audit trail records the name typed at sign-in and the key', async () => {
    const lead = await signedIn(LEAD, 'Alice Example');
    const request = older.status.pendingApproval!;
    const res = await lead.post('/console/inbox/decide', { workflowId: older.id, requestId: request.request_id, decision: 'approved', reason: 'Tracking shows no delivery scan.' });
    assert.equal(res.status, 303);
    const shown = visibleText((await lead.follow(res)).text);
    assert.match(shown, /Approved the £7\.00 refund on order 5102 .* as support-lead; the investigation continues\./);
    assert.ok(!shown.includes(`data-request-id="${request.request_id}"`));
    const done = await settle(tw, model, older.id, older.status.step);
    assert.equal(done.status, 'waiting_for_customer');
    assert.equal(done.lastReply, 'Your refund has been issued.');
    assert.deepEqual(
      done.decisions.map((d) => [d.requestId, d.decision, d.approver, d.reason]),
      [[request.request_id, 'approved', 'support-lead', 'Tracking shows no delivery scan.']],
    );
    const { rows } = await db.admin.query('SELECT amount_cents FROM refunds WHERE request_id = $1', [request.request_id]);
    assert.deepEqual(rows, [{ amount_cents: 700 }], 'exactly one refund paid');
    const { rows: trail } = await db.admin.query('SELECT approver, decided_by, decided_via FROM refund_decisions WHERE request_id = $1', [request.request_id]);
    assert.equal(trail.length, 1);
    assert.deepEqual([trail[0].approver, trail[0].decided_by], ['support-lead', 'Alice Example'], 'the limits are the key approver; the person is the one who signed in');
    assert.match(trail[0].decided_via, /^console key:[0-9a-f]{8}$/);
    const ids = (JSON.parse((await lead.get('/console/inbox/pending')).text) as { requestIds: string[] }).requestIds;
    assert.ok(!ids.includes(request.request_id), 'the poll no longer lists it, so other open inboxes mark it decided');
  });

  test("a refusal shows the validator's words: already decided, over the approver's limit; a denial needs a reason", async () => {
    const lead = await signedIn(LEAD);
    const again = await lead.post('/console/inbox/decide', { workflowId: older.id, requestId: older.status.pendingApproval!.request_id, decision: 'denied', reason: 'no' });
    assert.match(visibleText((await lead.follow(again)).text), /refused: refund request \S+ has already been decided \(approved by support-lead\)\. Nothing was sent\./);

    const request = newer.status.pendingApproval!;
    const over = await lead.post('/console/inbox/decide', { workflowId: newer.id, requestId: request.request_id, decision: 'approved' });
    assert.match(visibleText((await lead.follow(over)).text), /refused: support-lead may approve up to 1000 cents; this refund is 1200 cents/);
    const noReason = await lead.post('/console/inbox/decide', { workflowId: newer.id, requestId: request.request_id, decision: 'denied' });
    assert.match(visibleText((await lead.follow(noReason)).text), /give a reason to deny/);
    assert.equal((await readStatus(tw.client, newer.id)).pendingApproval?.request_id, request.request_id, 'still pending after every refusal');

    // A key for any approver decides as the person who signed in; the duty manager's limit covers it.
    const manager = await signedIn(ANY, 'duty-manager');
    const approved = await manager.post('/console/inbox/decide', { workflowId: newer.id, requestId: request.request_id, decision: 'approved' });
    assert.match(visibleText((await manager.follow(approved)).text), /Approved the £12\.00 refund .* as duty-manager/);
    const done = await settle(tw, model, newer.id, newer.status.step);
    assert.deepEqual(
      done.decisions.map((d) => [d.decision, d.approver]),
      [['approved', 'duty-manager']],
    );
  });
});

describe('a run kept by reference', () => {
  test('the inbox and the timeline show whole tool results, read from the transcript log, not the previews the run carries', async () => {
    const run = await pendingRefund(tw, model, 800, 'Left at the door, never received.');
    const carried = await tw.client.workflow.getHandle(run.id).query(carriedStateQuery);
    assert.ok(carried.log, 'the run keeps its transcript by reference');
    const carriedResults = carried.transcript.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).filter((b) => b.type === 'tool_result');
    assert.ok(carriedResults.length > 0 && carriedResults.every((b) => typeof b.content === 'string' && b.content.length <= PREVIEW_CHARS + PREVIEW_CUT.length));
    assert.ok(run.orderResult.length > PREVIEW_CHARS * 3, 'the order lookup answered far more than the preview');

    const lead = await signedIn(LEAD);
    let page = '';
    for (let i = 0; i < 100 && !page.includes(run.status.pendingApproval!.request_id); i++) {
      page = (await lead.get('/console/inbox')).text;
      if (!page.includes(run.status.pendingApproval!.request_id)) await new Promise((r) => setTimeout(r, 200));
    }
    const start = page.indexOf(`data-request-id="${run.status.pendingApproval!.request_id}"`);
    assert.ok(start > 0, 'the pending refund is listed');
    const card = visibleText(page.slice(start, page.indexOf('</article>', start)));
    assert.match(card, /Tool results the agent used get_order\(order_id=5102\)/);
    assert.ok(card.includes(flat(run.orderResult)), 'the whole get_order result, word for word');
    assert.ok(!card.includes(PREVIEW_CUT.trim()), 'no preview marks');

    const timeline = visibleText((await lead.get(`/console/cases/${run.id}`)).text);
    assert.match(
      timeline,
      /get_order\(order_id=5102\) → Order 5102: delivered, placed \d{4}-\d\d-\d\d, total £112\.99/,
      'the step says what its tool call found, as the refund note does',
    );
    assert.ok(!timeline.includes(PREVIEW_CUT.trim()), 'no preview marks on the timeline');
    assert.doesNotMatch(timeline, /cost with no clearing \(estimate\) unavailable/);
  });
});

describe("a case's timeline", () => {
  test('has one chart point per step, a mark per clearing batch and compaction, totals beside the no-clearing cost, and a link to the web UI', async () => {
    const { id, status: done } = await clearingRun(tw, model);
    assert.equal(done.step, 14);
    const clearing = done.steps.filter((s) => /cleared [1-9]\d*/.test(s.context_event ?? '')).map((s) => s.step);
    const compaction = done.steps.filter((s) => /compacted \d+/.test(s.context_event ?? '')).map((s) => s.step);
    assert.ok(clearing.length >= 2, `clearing batches ran (${clearing.join(', ')})`);
    assert.ok(compaction.length >= 1, `compaction ran (${done.steps.map((s) => s.context_event ?? '-').join(' | ')})`);

    const support = await signedIn(SUPPORT, 'Sam');
    const res = await support.get(`/console/cases/${id}`);
    assert.equal(res.status, 200);
    const page = res.text;
    assert.match(page, /<svg class="chart"[^>]*data-steps="14"/);
    assert.equal(page.match(/<circle class="point" data-point/g)?.length, 14, 'one point per step');
    assert.deepEqual(
      [...page.matchAll(/data-mark="clearing" data-step="(\d+)"/g)].map((m) => Number(m[1])),
      clearing,
      'a clearing mark at each batch',
    );
    assert.deepEqual(
      [...page.matchAll(/data-mark="compaction" data-step="(\d+)"/g)].map((m) => Number(m[1])),
      compaction,
      'a compaction mark at each compaction',
    );
    assert.equal(page.match(/<tr data-step="/g)?.length, 14, 'a row per step');
    const text = visibleText(page);
    assert.match(text, /get_tracking_events\(order_id=5102, page=1\) → /, 'each tool call with its one-line summary');
    assert.match(text, /cleared \d+ old results \(every_n_steps|cleared \d+ old results \(/);
    assert.match(text, /compacted \d+ messages into case notes/);
    const totals = /<tr data-totals>([\s\S]*?)<\/tr>/.exec(page)![1]!;
    const cells = [...totals.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => visibleText(m[1]!));
    assert.equal(cells[5], `$${done.totals.cost_usd.toFixed(4)}`, 'the run’s own cost');
    const noClearing = /^\$(\d+\.\d{4}) \(\+([\d,]+) tokens\)$/.exec(cells[6]!);
    assert.ok(noClearing, `the no-clearing estimate is shown (${cells[6]})`);
    assert.ok(Number(noClearing[1]) > done.totals.cost_usd, 'with no clearing the run would have cost more');
    // The strategy the run cleared by, and what it saved (or cost) against no clearing, priced with the cache.
    assert.equal(visibleText(/<span data-context-strategy>([\s\S]*?)<\/span>/.exec(page)![1]!), 'a clearing batch every 4 steps and on a cold cache (keep 3)');
    assert.match(
      visibleText(/<span data-clearing-saving>([\s\S]*?)<\/span>/.exec(page)![1]!),
      /^(saved|cost) \$\d+\.\d{4} of input \(with caching, an estimate: \$\d+\.\d{4} with no clearing\)$/,
    );
    const { runId } = await tw.client.workflow.getHandle(id).describe();
    assert.ok(page.includes(`/namespaces/${tw.config.TEMPORAL_NAMESPACE}/workflows/${id}/${runId}/history`), 'links to this run in the Temporal web UI');

    const bad = await support.get('/console/cases/not-an-investigation');
    assert.equal(bad.status, 400);
  });
});

describe("the customer's memory", () => {
  const customer = unique('cust_mem');
  const twin = unique('cust_twin');
  let ref = '';

  before(async () => {
    await seedConsoleMemory(db.app, customer);
    await seedConsoleMemory(db.app, twin);
  });

  test('is opened by a lookup whose URL carries an opaque reference, not the customer id', async () => {
    const support = await signedIn(SUPPORT, 'Sam');
    const res = await support.post('/console/customers/lookup', { customerId: customer });
    assert.equal(res.status, 303);
    const location = res.headers.get('location')!;
    assert.match(location, /^\/console\/customers\/c_[A-Za-z0-9_-]{40,}$/);
    assert.ok(!location.includes(customer));
    ref = location.split('/').pop()!;
    const unknown = await support.get(`/console/customers/c_${'A'.repeat(60)}`);
    assert.equal(unknown.status, 404);
    assert.match(visibleText(unknown.text), /look the customer up again/);
  });

  test('shows current and superseded notes with dates, expiry and the run that wrote each, past cases and the audit trail', async () => {
    const support = await signedIn(SUPPORT, 'Sam');
    const page = (await support.get(`/console/customers/${ref}`)).text;
    const text = visibleText(page);
    assert.match(text, new RegExp(`What casework remembers about ${customer}`));
    const memory = await showMemory(db.app, customer);
    const old = memory.notes.find((n) => n.text === 'I live at 22 Oak Road, Leeds')!;
    assert.equal(old.status, 'superseded');
    const row = (noteId: number) => visibleText(new RegExp(`<tr class="note-\\w+" data-note-id="${noteId}">([\\s\\S]*?)</tr>`).exec(page)![1]!);
    assert.match(row(old.note_id), /superseded by note \d+/);
    assert.match(row(old.note_id), /written \d{4}-\d\d-\d\d \d\d:\d\d UTC expires \d{4}-\d\d-\d\d \d\d:\d\d UTC superseded \d{4}/);
    assert.match(row(old.note_id), /investigation-T1/, 'the run that wrote it');
    const current = memory.notes.find((n) => n.text.startsWith('Deliveries must go to Block B'))!;
    assert.match(row(current.note_id), /^\S+ current/);
    assert.match(text, /Past cases \(1\) closed ticket orders problem resolution 2026-10-14 T1 4471 Wrong building refunded/);
    assert.match(text, /Profile field value from note expires/);
    assert.match(text, /Audit trail \(\d+\)/);
  });

  test('correct, forget and forget everything do what the CLI does and write the same audit, naming the person', async () => {
    const support = await signedIn(SUPPORT, 'Sam');
    await support.get(`/console/customers/${ref}`);
    const note = (await showMemory(db.app, customer)).notes.find((n) => n.text.startsWith('Deliveries must go to Block B'))!;
    const twinNote = (await showMemory(db.app, twin)).notes.find((n) => n.text.startsWith('Deliveries must go to Block B'))!;
    const text = 'Deliveries must go to Block C, the side entrance';

    const corrected = await support.post(`/console/customers/${ref}/correct`, { noteId: String(note.note_id), text });
    assert.equal(corrected.headers.get('location'), `/console/customers/${ref}`);
    const after = await support.follow(corrected);
    assert.match(visibleText(after.text), new RegExp(`Note ${note.note_id} corrected\\.`));
    assert.ok(after.text.includes(text));
    const cli = (...args: string[]) => runMemoryCommand(args, { pool: db.app, out: () => undefined });
    assert.equal(await cli('correct', '--customer', twin, '--note', String(twinNote.note_id), '--text', text, '--actor', 'cli-user'), 0);

    const refused = await support.post(`/console/customers/${ref}/correct`, { noteId: String(note.note_id), text: 'My card is 4111 1111 1111 1111' });
    assert.match(visibleText((await support.follow(refused)).text), /Not changed: it contains what looks like a payment card number/, 'a refused correction says why, on the page');

    const forgotten = await support.post(`/console/customers/${ref}/forget`, { noteId: String(note.note_id) });
    assert.match(visibleText((await support.follow(forgotten)).text), new RegExp(`Note ${note.note_id} forgotten\\.`));
    assert.equal(await cli('forget', '--customer', twin, '--note', String(twinNote.note_id), '--actor', 'cli-user'), 0);

    const unconfirmed = await support.post(`/console/customers/${ref}/forget-all`, { confirm: 'yes' });
    assert.match(visibleText((await support.follow(unconfirmed)).text), /Nothing was deleted: type "forget"/);
    assert.ok((await showMemory(db.app, customer)).notes.length > 0);
    const all = await support.post(`/console/customers/${ref}/forget-all`, { confirm: 'forget' });
    assert.match(visibleText((await support.follow(all)).text), /Forgot everything: \d+ notes, 1 cases, \d+ profile fields\./);
    assert.equal(await cli('forget', '--customer', twin, '--actor', 'cli-user'), 0);

    const mine = await showMemory(db.app, customer);
    const theirs = await showMemory(db.app, twin);
    assert.deepEqual([mine.notes.length, mine.cases.length, Object.keys(mine.profile).length], [0, 0, 0], 'everything forgotten');
    const changes = (m: typeof mine) => m.audit.filter((a) => a.action !== 'read');
    const shape = (m: typeof mine) => changes(m).map((a) => [a.action, a.target.replace(/\d+/g, 'N'), Object.keys(a.detail as object).sort()]);
    assert.deepEqual(shape(mine), shape(theirs), 'the same audit rows as the CLI');
    assert.ok(
      changes(mine).every((a) => /^Sam via console \(key:[0-9a-f]{8}\)$/.test(a.actor)),
      'the audit names the person and the key label',
    );
  });
});

describe('privacy', () => {
  test('no customer data reaches a console URL or a log line', () => {
    const consoleLines = logs.filter((l) => l.path.startsWith('/console'));
    assert.ok(consoleLines.length > 20, 'the console was used');
    const text = JSON.stringify(consoleLines);
    for (const secret of ['cust_dana', 'cust_mem', 'cust_twin', 'Block B', 'Block C', 'Oak Road', LEAD, SUPPORT, ANY]) {
      assert.ok(!text.includes(secret), `${secret} is in no console log line`);
    }
  });
});

describe('casework console on its own', () => {
  test('serves the console pages and /healthz, and none of the JSON routes', async () => {
    const config = { ...tw.config, CASEWORK_API_KEYS: `${LEAD}:approver:support-lead,${TRUSTED}:*` };
    const alone = await startServer({ client: tw.client, pool: db.app, config, log: () => undefined, routes: 'console' }, 0);
    try {
      assert.equal((await fetch(`${alone.url}/`, { redirect: 'manual' })).headers.get('location'), '/console');
      assert.equal((await fetch(`${alone.url}/healthz`)).status, 200);
      const lead = consoleAgent(alone.url);
      assert.equal((await lead.signIn(LEAD)).status, 303);
      assert.equal((await lead.get('/console/inbox')).status, 200);
      for (const [method, path] of [
        ['POST', '/events'],
        ['GET', '/investigations/investigation-T-1'],
        ['GET', '/customers/cust_dana/memory'],
        ['GET', '/metrics'],
      ] as const) {
        const res = await fetch(alone.url + path, { method, headers: { authorization: `Bearer ${TRUSTED}` } });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.match(((await res.json()) as { error: string }).error, /this is the support console \(\/console\); the JSON API is `casework serve`/);
      }
    } finally {
      await alone.close();
    }
  });

  test('refuses to start without API keys, naming the variable', async () => {
    const lines: string[] = [];
    assert.equal(await consoleCommand([], { ...tw.config, CASEWORK_API_KEYS: undefined, CASEWORK_HTTP_OPEN: 'false' }, (l) => lines.push(l)), 2);
    assert.match(lines.join('\n'), /^error: casework console will not start: .*CASEWORK_API_KEYS/);
  });
});

describe('parked desk deliveries', () => {
  test('a support person maps a parked requester (the delivery reaches its investigation once) or discards one with a reason; both are audited', async () => {
    const codec = bodyCodecOf(codecFor(tw.config));
    const requester = `${Date.now() % 1_000_000_000}`;
    const park = async (n: number) => {
      const ticket = `${requester}${n}`;
      const draft = {
        eventId: `zendesk-comment-${ticket}`,
        type: 'ticket.message' as const,
        ticketId: `zendesk-${ticket}`,
        message: `My parcel ${n} never came.`,
        receivedAt: new Date().toISOString(),
      };
      assert.equal(
        await parkDelivery(db.app, codec, {
          desk: 'zendesk',
          eventId: draft.eventId,
          ticketId: draft.ticketId,
          requester,
          reason: 'unmapped_requester',
          body: { draft, requester: { desk: 'zendesk', id: requester }, ref: { desk: 'zendesk', externalTicketId: ticket } },
        }),
        true,
      );
      return draft;
    };
    const kept = await park(1);
    const spam = await park(2);
    const support = await signedIn(SUPPORT, 'Sam');
    const page = await support.get('/console/deliveries');
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(kept.ticketId) && page.text.includes(spam.ticketId), 'both wait on the page');
    assert.ok(!page.text.includes('never came'), 'the page shows ids, never the words');

    const [discardId] = (await db.admin.query<{ id: string }>('SELECT id FROM parked_deliveries WHERE event_id = $1', [spam.eventId])).rows.map((r) => r.id);
    const discarded = await support.post(`/console/deliveries/${discardId}/discard`, { reason: 'spam' });
    assert.match(visibleText((await support.follow(discarded)).text), /Discarded delivery/);

    const workflowId = `investigation-${kept.ticketId}`;
    model.script(workflowId, [answer('I am on it.')]);
    const mapped = await support.post('/console/deliveries/map', { desk: 'zendesk', requester, customerId: 'cust_dana' });
    assert.match(visibleText((await support.follow(mapped)).text), new RegExp(`Mapped zendesk requester ${requester} to cust_dana; delivered 1\\.`));
    const status = await settle(tw, model, workflowId);
    assert.equal(status.customerId, 'cust_dana');
    const audit = await db.admin.query<{ action: string; actor: string }>('SELECT action, actor FROM desk_delivery_audit WHERE requester = $1 ORDER BY id', [requester]);
    assert.deepEqual(
      audit.rows.map((r) => r.action),
      ['discarded', 'mapped', 'delivered'],
    );
    assert.ok(audit.rows.every((r) => r.actor.startsWith('Sam via console')));
  });

  test('an approver-only session sees no link to the page, and is refused it', async () => {
    const lead = await signedIn(LEAD);
    const inbox = await lead.get('/console/inbox');
    assert.ok(!inbox.text.includes('/console/deliveries'));
    assert.equal((await lead.get('/console/deliveries')).status, 403);
  });
});
