import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideRefund, waitUntilSettled } from '../src/client/investigations';
import { runToReply } from '../src/dev/bench/workflow';
import { example, send } from './support/investigate';
import { recordingModel, seededWorker } from './support/temporal';

// Priya never has to explain "last time" again: conversation one writes her memory,
// conversation two (a new ticket, on a Monday) starts from it.

const model = recordingModel();
const ctx = seededWorker({ model });

test('conversation two opens with her profile and last case, and the reply names order 4471', async () => {
  const first = example('priya-1');
  const one = await runToReply(ctx.tw.client, ctx.tw.pool, ctx.tw.config, first);
  assert.match(one.lastReply!, /4471/);
  const closed = await send(ctx.tw, { ...first, type: 'ticket.closed', eventId: `${first.eventId}-closed`, message: '' });
  assert.equal(closed.status, 'closed');

  const profile = await ctx.db.admin.query(
    "SELECT n.text FROM memory_profile p JOIN memory_notes n USING (note_id) WHERE p.customer_id = $1 AND p.field = 'delivery_instructions'",
    [first.customerId],
  );
  assert.match(profile.rows[0]?.text ?? '', /Block B/);
  const cases = await ctx.db.admin.query('SELECT order_ids FROM memory_cases WHERE customer_id = $1', [first.customerId]);
  assert.ok(
    cases.rows.some((r) => (r.order_ids as string[]).includes('4471')),
    'the post-run pipeline recorded the case',
  );

  const from = model.requests.length;
  const second = example('priya-2');
  assert.doesNotMatch(second.message, /4471/, 'she does not repeat the order number');
  const two = await send(ctx.tw, second);
  const index = model.requests.findIndex((r, i) => i >= from && r.purpose === 'investigate');
  const opening = JSON.stringify(model.requests[index]?.messages[0]);
  assert.match(opening, /<customer_memory/);
  assert.match(opening, /Block B/, 'her delivery instructions');
  assert.match(opening, /4471/, 'her last case');
  const firstWords = (model.replies[index]?.content ?? [])
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join(' ');
  assert.match(firstWords, /again after order 4471/, 'the first reply names the earlier order instead of asking');
  assert.doesNotMatch(firstWords, /order number/i);

  // Her new order goes through the same approval as anyone's, and the reply still names 4471.
  assert.equal(two.status, 'awaiting_approval');
  assert.equal(two.pendingApproval!.order_id, '4620');
  await decideRefund(ctx.tw.client, two.workflowId, { requestId: two.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
  const replied = await waitUntilSettled(ctx.tw.client, two.workflowId, { afterStep: two.step });
  assert.match(replied.lastReply!, /after order 4471/);
  assert.match(replied.lastReply!, /4620/);
});
