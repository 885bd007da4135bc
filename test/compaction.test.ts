import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { CaseNotesParseError, compactionRequest, createCompactionActivities, parseCaseNotes } from '../src/activities/compaction';
import { offlineCompact } from '../src/model/offline/compactor';
import type { Model } from '../src/model/port';
import { type CaseNotes, caseNotesJsonSchema, emptyCaseNotes, mergeCaseNotes } from '../src/schemas/case-notes';
import { renderTranscriptForNotes } from '../src/context/notes-transcript';
import type { ModelReply, ModelRequest } from '../src/schemas/model';
import { buildContext, chooseSplit } from '../src/context';
import { SYSTEM_PROMPT } from '../src/workflows/prompt';

const customer = (text: string): MessageParam => ({ role: 'user', content: [{ type: 'text', text: `Customer message:\n${text}` }] });
const call = (id: string, name: string, input: Record<string, unknown>): MessageParam => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input }] });
const result = (id: string, value: unknown, is_error = false): MessageParam => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content: typeof value === 'string' ? value : JSON.stringify(value), ...(is_error ? { is_error } : {}) }],
});
const says = (text: string): MessageParam => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** A long chat: a missing parcel, a replacement offered, then a refund asked for. */
function chat(): MessageParam[] {
  return [
    customer('My order 4471 never arrived. The courier left it at the wrong building again.'),
    call('t1', 'get_order', { order_id: '4471' }),
    result('t1', { order_id: '4471', status: 'delivered', total_cents: 4599, delivery_address: 'Block B, 12 Elm Road' }),
    call('t2', 'get_tracking_events', { order_id: '4471', page: 1 }),
    result('t2', { showing: 'events 1-3 of 3, newest first', events: [{ description: 'delivered: left at reception of Block A' }] }),
    says('The courier left your parcel at Block A instead of Block B. I can arrange a replacement for order 4471.'),
    customer('I would like a refund instead, please. Will the courier be warned?'),
    call('t3', 'lookup_policy', { topic: 'parcel delivered to the wrong building' }),
    result('t3', 'Policy ND-2: refund or replacement for a delivery to the wrong building.'),
    call('t4', 'get_payments', { order_id: '9999' }),
    result('t4', 'No such order on this account.', true),
    says('I have asked a colleague to approve a refund of £45.99; I will tell you as soon as they decide.'),
    customer('Thanks.'),
    call('t5', 'request_refund', { order_id: '4471', amount_cents: 4599, reason: 'Left at the wrong building' }),
    result('t5', { request_id: 'rr-1', decision: 'approved' }),
    says('Your refund of £45.99 has been approved.'),
  ];
}

const offline: Model = {
  label: 'offline investigator (deterministic test double)',
  offline: true,
  create: async (request: ModelRequest) => offlineCompact(request),
};

function replying(text: string): Model {
  return {
    label: 'scripted',
    offline: true,
    create: async (): Promise<ModelReply> => ({
      id: 'msg_1',
      model: 'scripted',
      content: [{ type: 'text', text, citations: null }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    }),
  };
}

const { compactConversation } = createCompactionActivities({ model: offline });

describe('CaseNotes', () => {
  it('has exactly the reference design fields, all required, as the structured-output schema', () => {
    const schema = caseNotesJsonSchema() as { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
    const fields = ['order_ids', 'customer_problem', 'facts_established', 'already_offered', 'customer_wants', 'open_questions'];
    assert.deepEqual(Object.keys(schema.properties), fields);
    assert.deepEqual(schema.required, fields);
    assert.equal(schema.additionalProperties, false);
    assert.equal('$schema' in schema, false);
  });

  it('merges field by field: lists united without repeats in order, newer scalars only when non-empty', () => {
    const older: CaseNotes = { ...emptyCaseNotes(), order_ids: ['4471'], customer_problem: 'parcel missing', already_offered: ['a replacement'], customer_wants: 'a refund' };
    const newer: CaseNotes = { ...emptyCaseNotes(), order_ids: ['5102', '4471'], customer_problem: '', already_offered: ['A  replacement', 'a refund of £45.99'] };
    const merged = mergeCaseNotes(older, newer);
    assert.deepEqual(merged.order_ids, ['4471', '5102']);
    assert.equal(merged.customer_problem, 'parcel missing');
    assert.equal(merged.customer_wants, 'a refund');
    assert.deepEqual(merged.already_offered, ['a replacement', 'a refund of £45.99']);
    assert.deepEqual(mergeCaseNotes(merged, merged), merged);
  });
});

describe('the compaction request', () => {
  it('asks for structured output against the CaseNotes schema, over a plain-text rendering of the messages', () => {
    const request = compactionRequest(chat().slice(0, 6));
    assert.equal(request.purpose, 'compact');
    assert.deepEqual(request.output_schema, caseNotesJsonSchema());
    assert.deepEqual(request.tools, []);
    const text = (request.messages[0]?.content as ContentBlockParam[]).map((b) => (b.type === 'text' ? b.text : '')).join('');
    assert.match(text, /Keep exact order numbers, amounts and dates/);
    assert.match(text, /### tool result get_order \(t1\)\n\{"order_id":"4471"/);
  });

  it('names each result by its tool and marks failed ones', () => {
    const text = renderTranscriptForNotes(chat().slice(9, 11));
    assert.equal(text, '### tool call get_payments (t4)\n{"order_id":"9999"}\n### tool result get_payments (t4) error\nNo such order on this account.');
  });
});

describe('offline compaction', () => {
  it('fills the notes from the conversation: orders, facts with sources, offers, wishes, questions', async () => {
    const { notes } = await compactConversation({ messages: chat().slice(0, 12), previous: null });
    assert.deepEqual(notes.order_ids, ['4471', '9999']);
    assert.match(notes.customer_problem, /order 4471 never arrived/i);
    assert.ok(notes.facts_established.some((f) => /status: delivered/.test(f) && f.endsWith('(get_order)')));
    assert.ok(notes.facts_established.some((f) => /Block A/.test(f) && f.endsWith('(get_tracking_events)')));
    assert.ok(notes.facts_established.some((f) => f.endsWith('(lookup_policy)')));
    assert.deepEqual(notes.already_offered, [
      'I can arrange a replacement for order 4471.',
      'I have asked a colleague to approve a refund of £45.99; I will tell you as soon as they decide.',
    ]);
    assert.equal(notes.customer_wants, 'I would like a refund instead, please.');
    assert.ok(notes.open_questions.includes('Will the courier be warned?'));
    assert.ok(notes.open_questions.some((q) => q.startsWith('get_payments failed')));
  });

  it('gives the same notes when the same part is compacted twice', async () => {
    const older = chat().slice(0, 9);
    const once = await compactConversation({ messages: older, previous: null });
    const twice = await compactConversation({ messages: older, previous: once.notes });
    assert.deepEqual(twice.notes, once.notes);
    const replayed = offlineCompact(compactionRequest(older));
    assert.deepEqual(replayed, offlineCompact(compactionRequest(older)));
  });

  it('never loses already_offered over repeated compactions, however little the newer part says', async () => {
    const messages = chat();
    const first = await compactConversation({ messages: messages.slice(0, 6), previous: null });
    assert.deepEqual(first.notes.already_offered, ['I can arrange a replacement for order 4471.']);
    const second = await compactConversation({ messages: messages.slice(6, 9), previous: first.notes });
    const third = await compactConversation({ messages: messages.slice(12, 13), previous: second.notes });
    assert.deepEqual(third.notes.already_offered.slice(0, 1), ['I can arrange a replacement for order 4471.']);
    assert.equal(third.notes.customer_problem, first.notes.customer_problem);
    assert.deepEqual(third.notes.order_ids.slice(0, 1), ['4471']);
  });

  it('returns the previous notes without a model call when there is nothing to compact', async () => {
    const previous = { ...emptyCaseNotes(), order_ids: ['4471'] };
    const { notes, usage } = await createCompactionActivities({ model: replying('not json') }).compactConversation({ messages: [], previous });
    assert.deepEqual(notes, previous);
    assert.equal(usage.input_tokens, 0);
  });

  it('reports the compaction call usage for accounting', async () => {
    const { usage } = await compactConversation({ messages: chat().slice(0, 6), previous: null });
    assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0);
  });
});

describe('compaction replies that do not parse', () => {
  it('throws, so the activity is retried, when the reply is not JSON or not CaseNotes', async () => {
    await assert.rejects(createCompactionActivities({ model: replying('Here are the notes: …') }).compactConversation({ messages: chat(), previous: null }), CaseNotesParseError);
    await assert.rejects(createCompactionActivities({ model: replying('{"order_ids": "4471"}') }).compactConversation({ messages: chat(), previous: null }), CaseNotesParseError);
  });

  it('accepts JSON fenced as a code block', () => {
    const notes = { ...emptyCaseNotes(), order_ids: ['4471'] };
    const reply: ModelReply = {
      id: 'm',
      model: 'x',
      stop_reason: 'end_turn',
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      content: [{ type: 'text', text: `\`\`\`json\n${JSON.stringify(notes)}\n\`\`\``, citations: null }],
    };
    assert.deepEqual(parseCaseNotes(reply), notes);
  });
});

describe('compaction keeps tool pairs intact', () => {
  it('at every split chooseSplit can pick: the older part answers its own calls and the sent tail is valid', () => {
    const messages = chat();
    for (let keepLast = 1; keepLast < messages.length; keepLast += 1) {
      const split = chooseSplit(messages, keepLast);
      if (split === null) continue;
      assert.ok(messages.length - split >= keepLast, `keeps at least ${keepLast}`);
      const older = messages.slice(0, split);
      const asked = older.flatMap((m) => (m.role === 'assistant' ? (m.content as ContentBlockParam[]).flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : []));
      const answered = older.flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])) : []));
      assert.deepEqual(answered, asked, `split ${split}: every call in the older part is answered there`);
      const sent = buildContext({ system: SYSTEM_PROMPT, tools: [], messages: messages.slice(split), caseNotes: emptyCaseNotes() }).messages;
      sent.forEach((m, i) => {
        if (m.role !== 'assistant') return;
        const ids = (m.content as ContentBlockParam[]).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
        if (!ids.length || i === sent.length - 1) return;
        const next = sent[i + 1]?.content as ContentBlockParam[];
        assert.deepEqual(
          next.slice(0, ids.length).map((b) => (b.type === 'tool_result' ? b.tool_use_id : '')),
          ids,
        );
      });
      const head = sent[0]?.content as ContentBlockParam[];
      assert.equal(
        head.some((b) => b.type === 'tool_result'),
        false,
        `split ${split}: the sent context opens without orphan results`,
      );
    }
  });
});
