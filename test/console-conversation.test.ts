import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import fc from 'fast-check';
import { labelCustomerText, labelDecisionNote } from '../src/context/wire';
import type { HandOff, InvestigationStatus } from '../src/schemas/investigation';
import { conversationOf, type ConversationEntry } from '../src/server/console/conversation';
import { conversationSection } from '../src/server/console/conversation-view';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { visibleText } from './support/console-agent';

// The case page's conversation, built from a transcript and the status alone (pure): who said
// what in order, every tool result whole, decisions with who took them, hand-overs with why and
// who answered, and every word escaped.

function status(overrides: Partial<InvestigationStatus> = {}): InvestigationStatus {
  return {
    workflowId: 'investigation-T-1',
    ticketId: 'T-1',
    customerId: 'cust_dana',
    status: 'waiting_for_customer',
    step: 3,
    model: 'offline',
    lastReply: null,
    pendingApproval: null,
    decisions: [],
    totals: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: 0 },
    steps: [],
    agentNotes: { found: [], ruled_out: [], to_do: [] },
    caseNotes: null,
    transcriptMessages: 0,
    continuedAsNew: 0,
    handOff: null,
    refunds: [],
    ...overrides,
  };
}

const user = (...content: ContentBlockParam[]): MessageParam => ({ role: 'user', content });
const assistant = (...content: ContentBlockParam[]): MessageParam => ({ role: 'assistant', content });
const textBlock = (text: string): ContentBlockParam => ({ type: 'text', text });
const use = (id: string, name: string, input: Record<string, unknown>): ContentBlockParam => ({ type: 'tool_use', id, name, input });
const result = (id: string, content: string, isError = false): ContentBlockParam => ({ type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) });

const ORDER = JSON.stringify({ order_id: '5102', status: 'delivered', placed_at: '2026-03-02T10:00:00Z', total_cents: 4200, currency: 'GBP', items: [{ name: 'Kettle', qty: 1 }] });
const PAYMENTS = JSON.stringify({ order_id: '5102', charged_cents: 4200, refunded_cents: 0, refundable_cents: 4200, currency: 'GBP' });
const REQUEST = JSON.stringify({ request_id: 'req_0123456789abcdef', order_id: '5102', amount_cents: 4200, currency: 'GBP', reason: 'Never arrived.', status: 'pending' });

describe('the conversation of a case', () => {
  test('lists the customer, the agent, every tool call with its whole result and sentence, the refund request and its decision, in order', () => {
    const transcript: MessageParam[] = [
      user(textBlock(labelCustomerText('My order 5102 never arrived.'))),
      assistant(textBlock('Let me look the order up.'), use('t1', 'get_order', { order_id: '5102' }), use('t2', 'get_payments', { order_id: '5102' })),
      user(result('t1', ORDER), result('t2', PAYMENTS)),
      assistant(use('t3', 'request_refund', { order_id: '5102', amount_cents: 4200, reason: 'Never arrived.' })),
      user(result('t3', REQUEST)),
      assistant(textBlock('A colleague is reviewing your refund.')),
      user(
        textBlock(
          labelDecisionNote(
            JSON.stringify({
              request_id: 'req_0123456789abcdef',
              decision: 'approved',
              decided_by: 'support-lead',
              reason: 'No scan.',
              refund: { refund_id: 'rfd_1', amount_cents: 4200, status: 'issued' },
              next: '…',
            }),
          ),
        ),
      ),
      assistant(textBlock('Your refund of £42.00 has been issued.')),
    ];
    const entries = conversationOf(
      transcript,
      status({
        decisions: [{ requestId: 'req_0123456789abcdef', decision: 'approved', approver: 'support-lead', decidedBy: 'Alice', via: 'console key:abcd1234', reason: 'No scan.' }],
        refunds: [{ request_id: 'req_0123456789abcdef', refund_id: 'rfd_1', order_id: '5102', amount_cents: 4200, approval_id: 'apr_1', currency: 'GBP' }],
      }),
    );
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['customer', 'agent_note', 'tool', 'tool', 'refund_requested', 'reply', 'decision', 'reply'],
    );
    const [customer, , order, payments, requested, , decision, last] = entries as [ConversationEntry, ...ConversationEntry[]];
    assert.deepEqual(customer, { kind: 'customer', text: 'My order 5102 never arrived.' }, 'the customer’s words without the label the model reads');
    assert.ok(order?.kind === 'tool' && order.call.result === ORDER, 'the whole result, word for word');
    assert.equal(order.sentence, 'Order 5102: delivered, placed 2026-03-02, total £42.00, items: Kettle x1');
    assert.ok(payments?.kind === 'tool');
    assert.match(payments.sentence, /charged £42\.00/, "amounts in the order's currency, which the order's own result gave");
    assert.ok(requested?.kind === 'refund_requested');
    assert.deepEqual([requested.amountCents, requested.currency, requested.orderId, requested.requestId, requested.waiting], [4200, 'GBP', '5102', 'req_0123456789abcdef', false]);
    assert.ok(decision?.kind === 'decision');
    assert.deepEqual(
      [decision.decision, decision.approver, decision.decidedBy, decision.via, decision.paid],
      ['approved', 'support-lead', 'Alice', 'console key:abcd1234', { refundId: 'rfd_1', amountCents: 4200, currency: 'GBP' }],
    );
    assert.deepEqual(last, { kind: 'reply', text: 'Your refund of £42.00 has been issued.', by: null, sent: true });
  });

  test('a hand-over shows why and how it ended; a held-back reply is marked not sent; the person’s reply is theirs', () => {
    const held = 'Your request req_0123456789abcdef is filed.';
    const handOffs: HandOff[] = [
      {
        reason: 'a reply was held back because it showed the customer an internal id',
        at: '2026-12-04T10:00:00.000Z',
        step: 2,
        resolution: { by: 'sam', action: 'replied', at: '2026-12-04T10:05:00.000Z' },
      },
    ];
    const transcript: MessageParam[] = [
      user(textBlock(labelCustomerText('Where is my refund?'))),
      assistant(textBlock(held), textBlock(HOLDING_REPLY), textBlock('Hi, Sam here: it is on its way.')),
    ];
    const entries = conversationOf(transcript, status({ handOffs }));
    assert.deepEqual(
      entries.map((e) => (e.kind === 'reply' ? `reply:${e.by ?? 'casework'}:${e.sent ? 'sent' : 'held'}` : e.kind)),
      ['customer', 'reply:casework:held', 'hand_off', 'reply:casework:sent', 'reply:sam:sent'],
    );
    const handOff = entries[2];
    assert.ok(handOff?.kind === 'hand_off');
    assert.equal(handOff.reason, handOffs[0]!.reason);
    assert.deepEqual(handOff.resolution, handOffs[0]!.resolution);
    const page = visibleText(conversationSection({ workflowId: 'investigation-T-1', runId: 'r', status: status({ handOffs }), transcript }).text);
    assert.match(page, /Held back: not sent to the customer Your request req_0123456789abcdef is filed\./);
    assert.match(page, /Handed to a person at 2026-12-04 10:00 UTC a reply was held back .* Answered by sam at 2026-12-04 10:05 UTC/);
    assert.match(page, /Reply from sam Hi, Sam here: it is on its way\./);
  });

  test('a decision accepted but not yet acted on is shown as recorded, after the request it decides', () => {
    const transcript = [
      user(textBlock(labelCustomerText('Refund please.'))),
      assistant(use('t9', 'request_refund', { order_id: '5102', amount_cents: 100, reason: 'x' })),
      user(result('t9', REQUEST)),
    ];
    const entries = conversationOf(
      transcript,
      status({ decisions: [{ requestId: 'req_0123456789abcdef', decision: 'denied', approver: 'duty-manager', reason: 'Duplicate claim.' }] }),
    );
    const last = entries.at(-1);
    assert.ok(last?.kind === 'decision');
    assert.deepEqual([last.decision, last.approver, last.settled, last.reason], ['denied', 'duty-manager', false, 'Duplicate claim.']);
  });

  test('customer text and tool output are escaped: a hostile message is shown as text, never as markup', () => {
    const hostile = '<script>alert("x")</script><img src=x onerror="alert(1)"> & <a href="javascript:alert(2)">click</a>';
    const transcript = [
      user(textBlock(labelCustomerText(hostile))),
      assistant(use('t1', 'lookup_policy', { topic: '<b>bold</b>' })),
      user(result('t1', JSON.stringify({ title: 'Lost <i>parcels</i>', text: '</pre><script>bad()</script>' }))),
      assistant(textBlock('We are on it.')),
    ];
    const markup = conversationSection({ workflowId: 'investigation-T-1', runId: 'r', status: status(), transcript }).text;
    for (const raw of ['<script', '<img', 'onerror="', '<a href="javascript', '<b>', '<i>', '</pre><script>']) assert.ok(!markup.includes(raw), `${raw} is not markup`);
    assert.ok(markup.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; '));
    assert.ok(visibleText(markup).includes(hostile), 'the words are all there, as text');
  });

  test('an erased customer’s case says when, and shows no content', () => {
    const markup = conversationSection({ workflowId: 'investigation-T-1', runId: 'r', status: status(), transcript: null, erasedOn: '2026-12-01' }).text;
    assert.match(visibleText(markup), /The conversation was erased on 2026-12-01/);
    assert.doesNotMatch(markup, /data-entry=/);
  });

  test('for any transcript, every customer message and every tool result appears once, whole and in order', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('customer' as const), text: fc.string({ minLength: 1 }) }),
      fc.record({ kind: fc.constant('tools' as const), results: fc.array(fc.string(), { minLength: 1, maxLength: 3 }) }),
      fc.record({ kind: fc.constant('reply' as const), text: fc.string({ minLength: 1 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const transcript: MessageParam[] = [];
        const said: string[] = [];
        const found: string[] = [];
        let n = 0;
        const push = (m: MessageParam) => {
          const last = transcript.at(-1);
          if (last && last.role === m.role) (last.content as ContentBlockParam[]).push(...(m.content as ContentBlockParam[]));
          else transcript.push({ role: m.role, content: [...(m.content as ContentBlockParam[])] } as MessageParam);
        };
        for (const s of steps) {
          if (s.kind === 'customer') {
            push(user(textBlock(labelCustomerText(s.text))));
            said.push(s.text);
          } else if (s.kind === 'reply') push(assistant(textBlock(s.text)));
          else {
            const ids = s.results.map(() => `t${++n}`);
            push(assistant(...ids.map((id) => use(id, 'get_order', { order_id: id }))));
            push(user(...ids.map((id, i) => result(id, s.results[i]!))));
            found.push(...s.results);
          }
        }
        const entries = conversationOf(transcript, status());
        assert.deepEqual(
          entries.flatMap((e) => (e.kind === 'customer' ? [e.text] : [])),
          said,
        );
        assert.deepEqual(
          entries.flatMap((e) => (e.kind === 'tool' ? [e.call.result] : [])),
          found,
        );
      }),
    );
  });
});
