import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { decideRefund, readStatus } from '../src/client/investigations';
import type { Database } from '../src/db/pool';
import { showMemory } from '../src/memory/control';
import { startServer, type RunningServer } from '../src/server/start';
import { ARTIFACTS, launchChromium, skipWithoutChromium } from './support/chromium';
import { clearingRun, pendingRefund, scriptedTicket, seedConsoleMemory, type PendingRefund } from './support/console-cases';
import { openTestDatabase, unique } from './support/db';
import { answer, calls, lastToolResults, scriptedModel, toolUse } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';

// The support console in a real browser (Debian's headless Chromium): a support lead signs in,
// approves a refund from the inbox and sees the case continue, watches a card another person
// decided get marked, reads a timeline whose chart has a point per step and visible clearing
// marks, and a case's conversation with a tool result expanded; a support agent corrects and
// forgets a note. Screenshots go to test-artifacts/.

const LEAD = 'ak_lead_browser_0123456789ab'; // approver:support-lead
const SUPPORT = 'sk_support_browser_01234567'; // support
const DANA = 'ck_dana_browser_0123456789ab'; // a customer's key: no console

const model = scriptedModel();
let db: Database;
let tw: TestWorker;
let server: RunningServer;
let browser: Browser;

async function signIn(context: BrowserContext, key: string, person = ''): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${server.url}/console`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('API key').fill(key);
  if (person) await page.getByLabel('Your name').fill(person);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });

describe('the support console in Chromium', { skip: skipWithoutChromium }, () => {
  let first: PendingRefund;
  let second: PendingRefund;

  before(async () => {
    db = await openTestDatabase({ seed: true });
    tw = await startTestWorker({ pool: db.app, model });
    // A one-second poll, so an open inbox notices another person's decision within the test.
    const config = { ...tw.config, CASEWORK_API_KEYS: [`${LEAD}:approver:support-lead`, `${SUPPORT}:support`, `${DANA}:cust_dana`].join(','), CASEWORK_CONSOLE_POLL_SECONDS: 1 };
    server = await startServer({ client: tw.client, pool: db.app, config, log: () => undefined }, 0);
    first = await pendingRefund(tw, model, 800, 'Marked delivered, never received.');
    second = await pendingRefund(tw, model, 900, 'Charged twice for one parcel.');
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await tw?.stop();
    await db?.close();
  });

  test('a support lead signs in, approves a refund from the inbox, and the case continues', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signIn(context, LEAD);
    await page.getByRole('heading', { name: /Refunds awaiting approval/ }).waitFor();
    const card = page.locator(`[data-request-id="${first.status.pendingApproval!.request_id}"]`);
    // Visibility is eventually consistent: a just-paused run can take a moment to be listed.
    for (let i = 0; i < 50 && !(await card.count()); i++) {
      await new Promise((r) => setTimeout(r, 200));
      await page.reload();
    }
    await card.waitFor();
    assert.match(await card.innerText(), /£8\.00 refund on order 5102/);
    assert.match(await card.innerText(), /Marked delivered, never received\./);
    // The order's ledger, on the card: captured, refunded, and the other case's request pending on the same order, with its ticket.
    const ledger = card.locator('[data-ledger="5102"]');
    assert.match(await ledger.innerText(), /Order 5102 ledger \(GBP, now\)/);
    assert.match(await ledger.innerText(), /Captured\s+£112\.99 in 1 charge/);
    assert.match(await ledger.innerText(), new RegExp(`Pending in ticket ${second.status.ticketId}\\s+£9\\.00`));
    await ledger.screenshot({ path: join(ARTIFACTS, 'console-ledger-card.png') });
    await shot(page, 'console-inbox.png');

    await card.getByLabel('Reason (required to deny)').fill('No delivery scan in the tracking.');
    await card.getByRole('button', { name: 'Approve £8.00' }).click();
    await page.getByRole('status').filter({ hasText: 'Approved the £8.00 refund' }).waitFor();
    assert.equal(await card.count(), 0, 'the decided request leaves the inbox');
    await shot(page, 'console-approved.png');

    // The investigation goes on: the agent tells the customer the refund is issued.
    await settle(tw, model, first.id, first.status.step);
    await page.goto(`${server.url}/console/cases/${first.id}`);
    assert.equal(await page.locator('[data-case-status]').innerText(), 'waiting_for_customer');
    assert.match(await page.locator('main').innerText(), /approved by support-lead \(“No delivery scan in the tracking\.”\)/);
    await context.close();
  });

  test('the open inbox marks a card another person decided first, without a reload', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signIn(context, LEAD);
    const card = page.locator(`[data-request-id="${second.status.pendingApproval!.request_id}"]`);
    await card.waitFor();
    // The duty manager decides from the command line's path while this page is open.
    await decideRefund(tw.client, second.id, { requestId: second.status.pendingApproval!.request_id, decision: 'denied', approver: 'duty-manager', reason: 'Duplicate claim.' });
    await card.locator('[data-gone-note]').waitFor({ state: 'visible' });
    assert.ok(await card.getByRole('button', { name: 'Approve £9.00' }).isDisabled(), 'its buttons are disabled');
    await shot(page, 'console-decided-elsewhere.png');

    // Had the lead clicked anyway, the server would have said who decided.
    await page.evaluate(`document.querySelectorAll('[data-request-id="${second.status.pendingApproval!.request_id}"] button').forEach((b) => { b.disabled = false; })`);
    await card.getByRole('button', { name: 'Approve £9.00' }).click();
    await page.getByRole('status').filter({ hasText: 'has already been decided (denied by duty-manager)' }).waitFor();
    await context.close();
  });

  test("a case's timeline charts one point per step with visible clearing and compaction marks", async () => {
    const run = await clearingRun(tw, model);
    const clearing = run.status.steps.filter((s) => /cleared [1-9]/.test(s.context_event ?? '')).length;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signIn(context, SUPPORT, 'Sam');
    await page.goto(`${server.url}/console/cases/${run.id}`);
    const chart = page.locator('svg.chart');
    await chart.waitFor();
    assert.equal(await chart.locator('circle[data-point]').count(), run.status.steps.length, 'one point per step');
    assert.ok(clearing >= 2);
    const marks = chart.locator('line[data-mark="clearing"]');
    assert.equal(await marks.count(), clearing, 'a mark per clearing batch');
    // A vertical line has no width to measure, so "visible" is: drawn, stroked, and as tall as the plot.
    const drawn = await page.evaluate<{ stroke: string; width: number; height: number }[]>(
      `[...document.querySelectorAll('svg.chart line[data-mark="clearing"]')].map((line) => { const style = getComputedStyle(line); return { stroke: style.stroke, width: parseFloat(style.strokeWidth), height: line.getBoundingClientRect().height }; })`,
    );
    for (const mark of drawn) {
      assert.notEqual(mark.stroke, 'none');
      assert.ok(mark.width > 0 && mark.height > 100, `a clearing mark is drawn: ${JSON.stringify(mark)}`);
    }
    assert.ok((await chart.locator('line[data-mark="compaction"]').count()) >= 1, 'the compaction is marked');
    await chart.screenshot({ path: join(ARTIFACTS, 'console-timeline-chart.png') });
    await shot(page, 'console-timeline.png');

    // Narrow screen: the page still reads, the tables scroll inside themselves.
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    assert.ok(overflow <= 1, `the page does not scroll sideways on a phone (${overflow}px)`);
    await shot(page, 'console-timeline-narrow.png');
    await context.close();
  });

  test("a case page shows the conversation: the customer's words as text, and each tool result whole behind an expander", async () => {
    const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script> My parcel 5102 never came.';
    const getOrder = toolUse('get_order', { order_id: '5102' });
    const { event, id } = scriptedTicket(model, hostile, [calls(getOrder), answer('I have checked order 5102: it shows as delivered to the front door.')]);
    await deliver(tw, model, event);
    const orderResult = lastToolResults(model.requests(id, 'investigate')[1]!).find((r) => r.tool_use_id === getOrder.id)!.content;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signIn(context, LEAD);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.getByRole('heading', { name: /Refunds awaiting approval/ }).waitFor();
    await page.goto(`${server.url}/console/cases/${id}`);
    const conversation = page.locator('[data-conversation]');
    await conversation.waitFor();
    assert.equal(await conversation.locator('[data-entry="customer"] .words').innerText(), hostile, "the customer's words, shown as text");
    assert.equal(await conversation.locator('img').count(), 0, 'no element came from the message');
    assert.match(await conversation.locator('[data-entry="reply"]').innerText(), /I have checked order 5102: it shows as delivered to the front door\./);

    const call = conversation.locator(`#call-${getOrder.id}`);
    assert.match(await call.locator('[data-sentence]').innerText(), /^Order 5102: delivered, placed \d{4}-\d\d-\d\d, total £112\.99/);
    const raw = call.locator('details[data-raw-result] pre');
    assert.equal(await raw.isVisible(), false, 'the raw result starts folded');
    await call.locator('details[data-raw-result] summary').click();
    await raw.waitFor({ state: 'visible' });
    assert.equal(await raw.innerText(), orderResult, 'expanded, the whole result, word for word');
    // The whole result is readable in place: the box grows to hold it (no inner scroll hides the end).
    const box = await raw.evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight }));
    assert.ok(box.scroll <= box.client + 1, `the expanded result is not cut off (${JSON.stringify(box)})`);
    await conversation.screenshot({ path: join(ARTIFACTS, 'console-conversation.png') });

    // The steps table links each call to its entry.
    await page.locator(`a[href="#call-${getOrder.id}"]`).click();
    assert.ok(page.url().endsWith(`#call-${getOrder.id}`));
    assert.deepEqual(dialogs, [], 'no script from the message ran');

    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    assert.ok(overflow <= 1, `the conversation does not scroll sideways on a phone (${overflow}px)`);
    await conversation.screenshot({ path: join(ARTIFACTS, 'console-conversation-narrow.png') });
    await context.close();
  });

  test('a support agent opens a customer’s memory, corrects a note and forgets one', async () => {
    const customer = unique('cust_browser');
    await seedConsoleMemory(db.app, customer);
    const notes = (await showMemory(db.app, customer)).notes;
    const block = notes.find((n) => n.text.startsWith('Deliveries must go to Block B'))!;
    const old = notes.find((n) => n.status === 'superseded')!;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await signIn(context, SUPPORT, 'Sam');
    await page.getByRole('link', { name: 'Customer memory' }).click();
    await page.getByLabel('Customer id').fill(customer);
    await page.getByRole('button', { name: 'Open memory' }).click();
    await page.getByRole('heading', { name: `What casework remembers about ${customer}` }).waitFor();
    assert.ok(!page.url().includes(customer), 'the customer id is not in the URL');
    assert.match(await page.locator(`tr[data-note-id="${old.note_id}"]`).innerText(), /superseded/);
    await shot(page, 'console-memory.png');

    const row = page.locator(`tr[data-note-id="${block.note_id}"]`);
    await row.getByLabel('Corrected text').fill('Deliveries must go to Block C, the side entrance');
    await row.getByRole('button', { name: 'Correct' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Note ${block.note_id} corrected.` })
      .waitFor();
    assert.match(await page.locator(`tr[data-note-id="${block.note_id}"] [data-note-text]`).innerText(), /Block C, the side entrance/);
    await shot(page, 'console-memory-corrected.png');

    await page.getByRole('button', { name: `Forget note ${block.note_id}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Note ${block.note_id} forgotten.` })
      .waitFor();
    assert.equal(await page.locator(`tr[data-note-id="${block.note_id}"]`).count(), 0);
    assert.match(await page.locator('[data-audit]').innerText(), /forget\s+Sam via console/);
    await shot(page, 'console-memory-forgotten.png');
    assert.equal(
      (await showMemory(db.app, customer)).notes.some((n) => n.note_id === block.note_id),
      false,
    );
    await context.close();
  });

  test('an unauthorised key sees 403, and a forged form post without the CSRF token is refused', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/console/sign-in`);
    await page.getByLabel('API key').fill(DANA);
    await page.getByLabel('Your name').fill('Dana');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/console/sign-in') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    assert.equal(answer.status(), 403);
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    await shot(page, 'console-forbidden.png');

    // Signed in as the lead, a post that lacks the form's token (as another site's would) is refused.
    const lead = await signIn(context, LEAD);
    await lead.getByRole('heading', { name: /Refunds awaiting approval/ }).waitFor();
    const pendingOne = await pendingRefund(tw, model, 500, 'Never received.');
    const forged = await context.request.post(`${server.url}/console/inbox/decide`, {
      form: { workflowId: pendingOne.id, requestId: pendingOne.status.pendingApproval!.request_id, decision: 'approved' },
      maxRedirects: 0,
    });
    assert.equal(forged.status(), 403);
    assert.match(await forged.text(), /missing its security token/);
    assert.equal((await readStatus(tw.client, pendingOne.id)).status, 'awaiting_approval', 'nothing was decided');
    await context.close();
  });
});
