import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { eraseCustomer, erasureDepsOf } from '../src/client/erasure';
import { CasesNotClosedError, ERASURE_APPROVER } from '../src/client/erasure-closing';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { createApp } from '../src/server/app';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { consoleAgent, visibleText } from './support/console-agent';
import { CUSTOMER, deskStack, postsSettled, postZendeskWebhook, ZENDESK_REQUESTER } from './support/desk-stack';
import { answer, calls, json, toolUse } from './support/scripted-model';
import { settle } from './support/scripted-run';
import { describeCase } from '../src/client/case-status';

// Erasing a customer whose case is still open (docs/payload-privacy.md, "Erasure"): the case is
// closed first through the ticket's own close and waited for, the refund it left awaiting
// approval is withdrawn on the refund trail with the reason, the customer gets the holding reply
// and the team an internal note on the desk ticket, and only then is the customer erased. A run
// that does not end in time stops the erasure, naming it; the same erasure run again finishes it.
// The Zendesk stand-in (a test double of Zendesk), a real worker with the scripted model (the
// model's double), the real Temporal dev server and Postgres.

const stack = deskStack();

/** The customer's words on the ticket, and casework's public replies and internal notes on it, as the stand-in holds them. */
function ticketPosts(ticketId: number): { replies: string[]; notes: string[] } {
  const comments = stack.standin.ticket(ticketId)!.comments;
  return {
    replies: comments.filter((c) => c.public && c.author_id === stack.standin.agent.id).map((c) => c.body),
    notes: comments.filter((c) => !c.public).map((c) => c.body),
  };
}

describe('erasing a customer with an open case', () => {
  test('closes the case awaiting approval first (the console names it before confirming): refund withdrawn with the reason, holding reply and note on the desk, then erased; a run slow to end stops it, named, and a retry finishes it once', async () => {
    const { ticketId, commentId } = stack.standin.createTicket({
      requesterId: ZENDESK_REQUESTER,
      subject: 'Order',
      body: 'Order 5102 never arrived, I want my money back. Gate code Quorvish.',
    });
    const workflowId = `investigation-zendesk-${ticketId}`;
    stack.model.script(workflowId, {
      replies: [
        calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1000, reason: 'Marked delivered but never received.' })),
        answer('I have asked a colleague to approve a refund of £10.00 for order 5102.'),
      ],
      purposes: { compact: () => json({ ...emptyCaseNotes(), customer_problem: 'Order 5102 never arrived.' }) },
    });
    await postZendeskWebhook(stack, ticketId, commentId);
    const waiting = await settle(stack.tw, stack.model, workflowId);
    assert.equal(waiting.status, 'awaiting_approval');
    const requestId = waiting.pendingApproval!.request_id;
    await postsSettled(stack, workflowId, 2);
    const before = ticketPosts(ticketId);
    const { db, tw } = stack;
    const deps = erasureDepsOf(tw.config, db.app, tw.client);
    assert.ok(deps.post, 'the erasure posts to the desk the worker posts to');

    // The console's erase form names the open case it would close, before anyone confirms.
    const SUPPORT = 'sk_support_erase_open_0123456789';
    const app = createApp({ client: tw.client, pool: db.app, config: { ...tw.config, CASEWORK_API_KEYS: `${SUPPORT}:support` }, log: () => undefined });
    const server = createServer((req, res) => void app.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const sam = consoleAgent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await sam.follow(await sam.signIn(SUPPORT, 'Sam'));
      const page = await sam.follow(await sam.post('/console/customers/lookup', { customerId: CUSTOMER }));
      const form = /<form[^>]*data-erase[\s\S]*?<\/form>/.exec(page.text)?.[0] ?? '';
      assert.match(
        visibleText(form),
        /First closes their 1 open case\(s\): the customer gets a holding reply, the team an internal note, and a refund awaiting approval is withdrawn/,
      );
      assert.ok(form.includes(`href="/console/cases/${workflowId}"`), 'the open case is listed, linked to its timeline');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }

    // A run that does not end within the wait stops the erasure, named; nothing is erased yet.
    await assert.rejects(eraseCustomer({ ...deps, closeWaitMs: 1 }, { customerId: CUSTOMER, by: 'alice' }), (error: unknown) => {
      return error instanceof CasesNotClosedError && error.workflowIds.includes(workflowId) && /Nothing was erased/.test(error.message);
    });
    assert.equal((await db.admin.query('SELECT count(*)::int AS n FROM customer_erasures WHERE customer_id = $1', [CUSTOMER])).rows[0].n, 0);
    const liveKeys = await db.admin.query('SELECT count(*)::int AS n FROM customer_keys WHERE customer_id = $1 AND destroyed_at IS NULL', [CUSTOMER]);
    assert.ok(liveKeys.rows[0].n >= 1, 'her key still lives');

    // Run again: the run asked to close has ended; its refund is withdrawn, both are told, and she is erased.
    const report = await eraseCustomer(deps, { customerId: CUSTOMER, by: 'alice' });
    assert.deepEqual(
      report.closed.map((c) => ({ workflowId: c.workflowId, refundWithdrawn: c.refundWithdrawn, told: c.told })),
      [{ workflowId, refundWithdrawn: requestId, told: 'posted' }],
    );
    // describeCase: her run's memo is under her destroyed key, what Temporal keeps in clear still says how it stands.
    assert.equal((await describeCase(tw.client, workflowId)).state, 'completed', 'closed through its own close path, not terminated');

    // The refund trail: withdrawn as a denial with the reason and who asked, nothing paid.
    const decision = await db.admin.query('SELECT decision, approver, reason, decided_by, decided_via FROM refund_decisions WHERE request_id = $1', [requestId]);
    assert.deepEqual(decision.rows[0], {
      decision: 'denied',
      approver: ERASURE_APPROVER,
      reason: decision.rows[0].reason,
      decided_by: 'alice',
      decided_via: 'erasure',
    });
    assert.match(decision.rows[0].reason, /withdrawn: the customer asked for their data to be erased/);
    assert.equal((await db.admin.query('SELECT status FROM refund_requests WHERE request_id = $1', [requestId])).rows[0].status, 'denied');
    assert.equal((await db.admin.query('SELECT count(*)::int AS n FROM refunds WHERE request_id = $1', [requestId])).rows[0].n, 0);

    // The desk: the customer has the holding reply, the team a note saying why and what was withdrawn.
    const after = ticketPosts(ticketId);
    assert.deepEqual(after.replies, [...before.replies, HOLDING_REPLY]);
    const note = after.notes.at(-1)!;
    assert.equal(after.notes.length, before.notes.length + 1);
    assert.match(note, new RegExp(`closed because customer ${CUSTOMER} asked for their data to be erased \\(erasure by alice\\)`));
    assert.match(note, new RegExp(`Refund request ${requestId}, still waiting for a decision, was withdrawn: nothing was paid`));
    assert.equal(stack.standin.ticket(ticketId)!.status, 'hold', 'the ticket waits for a person (Zendesk: on hold), not solved');

    // Erased: her key destroyed, her memory gone (the case the close recorded with it), the audit naming what was closed.
    const keys = await db.admin.query('SELECT count(*)::int AS n FROM customer_keys WHERE customer_id = $1 AND destroyed_at IS NULL', [CUSTOMER]);
    assert.equal(keys.rows[0].n, 0);
    assert.equal(report.deleted.cases, 1, 'the closed case was recorded, then erased with the rest of her memory');
    const audit = await db.admin.query('SELECT erased_by, detail FROM customer_erasures WHERE customer_id = $1', [CUSTOMER]);
    assert.deepEqual(
      audit.rows.map((r: { detail: { investigations_closed: string[]; refunds_withdrawn: string[] } }) => [r.detail.investigations_closed, r.detail.refunds_withdrawn]),
      [[[workflowId], [requestId]]],
    );
    assert.ok(!JSON.stringify(audit.rows).includes('Quorvish'));

    // A third erasure closes nothing more and posts nothing twice.
    const again = await eraseCustomer(deps, { customerId: CUSTOMER, by: 'alice' });
    assert.deepEqual(again.closed, []);
    assert.deepEqual(ticketPosts(ticketId), after);
  });
});
