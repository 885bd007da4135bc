import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { decideRefund } from '../src/client/investigations';
import { STUB } from '../src/context/wire';
import { estimateRequestTokens } from '../src/context/tokens';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { investigationId, type TicketEvent } from '../src/schemas/event';
import type { ModelRequest } from '../src/schemas/model';
import { settingsWith, ticket } from './support/investigate';
import { allToolResults, answer, calls, json, scriptedModel, toolUse, type ScriptStep } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { seededWorker } from './support/temporal';

// The cache-optimal clearing schedule in the workflow, on the real dev server with the scripted
// model: a batch runs only when a request would pass the peak, every request stays under it, the
// request before a batch leaves its tail out of the cache (the batch rewrites it anyway), and the
// request before a wait on a person buys the hour's cache.

const model = scriptedModel();
const ctx = seededWorker({ model });

function scripted(message: string, script: ScriptStep[] | Parameters<typeof model.script>[1]): { event: TicketEvent; id: string } {
  const event = ticket('cust_dana', message);
  const id = investigationId(event.ticketId);
  model.script(id, script);
  return { event, id };
}

const run = (event: TicketEvent, env: Record<string, string> = {}) => deliver(ctx.tw, model, event, settingsWith(env));

/** Every cache_control mark of a request, in prefix order. */
function marks(request: ModelRequest): unknown[] {
  const blocks = [...request.tools, ...request.system, ...request.messages.flatMap((m) => (typeof m.content === 'string' ? [] : (m.content as ContentBlockParam[])))];
  return blocks.flatMap((b) => ((b as { cache_control?: unknown }).cache_control ? [(b as { cache_control?: unknown }).cache_control] : []));
}

/** Whether the request's last block carries a breakpoint (its tail is written to the cache). */
function tailMarked(request: ModelRequest): boolean {
  const last = request.messages.at(-1)!.content as ContentBlockParam[];
  return Boolean((last.at(-1) as { cache_control?: unknown }).cache_control);
}

describe('the cache-optimal clearing schedule', () => {
  test('clears only when a request would pass the peak, keeps every request under it, and leaves the tail before a batch out of the cache', async () => {
    // Steps of one size: the rule forecasts the next step's growth from this one's, so with steps
    // alike the forecast is exact and every batch is foreseen (with results of different sizes a
    // bigger one than forecast can bring a batch a step early, and its tail was written for nothing).
    const uses = Array.from({ length: 24 }, () => toolUse('get_tracking_events', { order_id: '5102', page: 1 }));
    const { event, id } = scripted('Order 5102 never arrived.', { replies: [...uses.map((u) => calls(u)), answer('Done.')], purposes: { compact: () => json(emptyCaseNotes()) } });
    const peak = 4_000;
    const done = await run(event, { CASEWORK_MAX_STEPS: '40', CASEWORK_COMPACT_ABOVE_TOKENS: '10000000', CASEWORK_CONTEXT_PEAK_TOKENS: String(peak) });
    assert.equal(done.step, 25);
    assert.match(done.contextStrategy ?? '', /cache-optimal clearing under 4,000 tokens/);
    const sent = model.requests(id, 'investigate');
    const sizes = sent.map((r) => estimateRequestTokens(r));
    const batches = done.steps.filter((s) => /cleared \d+ old results \(over_budget\)/.test(s.context_event ?? '')).map((s) => s.step);
    assert.ok(batches.length >= 2, `batches at ${batches.join(', ')}`);
    for (const [i, size] of sizes.entries()) assert.ok(size <= peak, `step ${i + 1} sent ${size} tokens, over the ${peak} peak`);
    for (const step of batches) {
      // The batch ran because, unchanged, this request would have passed the peak: the one before it plus what the step added.
      const before = allToolResults(sent[step - 1]!).filter((r) => r.content === STUB).length;
      assert.ok(before > allToolResults(sent[step - 2]!).filter((r) => r.content === STUB).length, `step ${step} cleared more than step ${step - 1}`);
      assert.equal(tailMarked(sent[step - 2]!), false, `step ${step - 1}, before a batch, leaves its tail out of the cache`);
    }
    // Well under the peak, the next step is sure to read the tail: it is written.
    const wellUnder = sizes.flatMap((size, i) => (size <= peak - 1_000 ? [i + 1] : []));
    assert.ok(wellUnder.length > 5);
    for (const step of wellUnder) assert.equal(tailMarked(sent[step - 1]!), true, `step ${step} writes its tail for the next`);
    for (const request of sent) assert.ok(marks(request).length <= 4);
  });

  test('the request before a wait on a person caches for an hour, then five minutes again (the activity rebuilds it from the step plan)', async () => {
    const askRefund = toolUse('request_refund', { order_id: '5102', amount_cents: 600, reason: 'Never received.' });
    const { event, id } = scripted('My order 5102 never arrived.', [
      calls(toolUse('get_order', { order_id: '5102' })),
      calls(askRefund),
      answer('A colleague is reviewing your refund.'),
      answer('Your refund has been issued.'),
    ]);
    const paused = await run(event);
    assert.equal(paused.status, 'awaiting_approval');
    const sent = model.requests(id, 'investigate');
    assert.deepEqual(
      marks(sent[0]!),
      marks(sent[0]!).map(() => ({ type: 'ephemeral' })),
      'no wait ahead: five minutes',
    );
    assert.ok(marks(sent[2]!).length > 0);
    assert.deepEqual(
      marks(sent[2]!),
      marks(sent[2]!).map(() => ({ type: 'ephemeral', ttl: '1h' })),
      'a refund waits on a person: every breakpoint an hour (1h entries come first)',
    );
    assert.match(paused.steps[2]!.context_event ?? '', /cached for an hour before a wait on a person/);
    await decideRefund(ctx.tw.client, id, { requestId: paused.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
    const done = await settle(ctx.tw, model, id, paused.step);
    assert.equal(done.lastReply, 'Your refund has been issued.');
    // After the decision nothing waits on a person any more: back to five minutes.
    assert.deepEqual(
      marks(model.requests(id, 'investigate')[3]!),
      marks(model.requests(id, 'investigate')[3]!).map(() => ({ type: 'ephemeral' })),
    );
  });
});
