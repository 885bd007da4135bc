import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContentBlockParam, MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import {
  applyClearing,
  applyNotesUpdate,
  buildContext,
  CACHE_TTL_MS,
  chooseSplit,
  clearingTrigger,
  clearOldResults,
  contextManagementEdits,
  countBreakpoints,
  EMPTY_AGENT_NOTES,
  estimateMessagesTokens,
  estimateRequestTokens,
  idsToClear,
  renderNotes,
  safeSplitPoints,
  STUB,
  toolResultIds,
  type CaseNotes,
} from '../src/context';
import { SYSTEM_PROMPT } from '../src/workflows/prompt';
import { toolDefinitions } from '../src/schemas/tool-specs';

const customer = (text: string): MessageParam => ({ role: 'user', content: [{ type: 'text', text: `Customer message:\n${text}` }] });
const calls = (...ids: string[]): MessageParam => ({
  role: 'assistant',
  content: ids.map((id): ContentBlockParam => ({ type: 'tool_use', id, name: 'get_tracking_events', input: { order_id: '4471', page: 1 } })),
});
const results = (...ids: string[]): MessageParam => ({
  role: 'user',
  content: ids.map((id): ContentBlockParam => ({
    type: 'tool_result',
    tool_use_id: id,
    content: `{"result_of":"${id}","events":["scanned at Hub 4"]}`,
    ...(id === 'c' ? { is_error: true } : {}),
  })),
});
const says = (text: string): MessageParam => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** A long investigation: parallel calls, an error result, customer messages between, replies. */
function sampleTranscript(): MessageParam[] {
  return [
    customer('Order 4471 never arrived.'),
    calls('a'),
    results('a'),
    calls('b', 'c'),
    { role: 'user', content: [...(results('b', 'c').content as ContentBlockParam[]), { type: 'text', text: 'Customer message:\nAny news?' }] },
    says('I can offer a replacement for order 4471.'),
    customer('I would rather have a refund.'),
    calls('d'),
    results('d'),
    calls('e'),
    results('e'),
    says('I have asked for a refund; a person will decide.'),
    customer('Thanks. Also check order 5102?'),
    calls('f'),
    results('f'),
  ];
}

/** Every tool_use is answered in the very next user message, results first; every result has its call. */
function assertPairsIntact(messages: MessageParam[]): void {
  messages.forEach((message, i) => {
    if (typeof message.content === 'string') return;
    if (message.role === 'assistant') {
      const ids = message.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
      if (ids.length === 0 || i === messages.length - 1) return;
      const next = messages[i + 1];
      assert.equal(next?.role, 'user', `message ${i + 1} answers tool calls`);
      const blocks = next?.content as ContentBlockParam[];
      const leading = blocks.slice(0, ids.length);
      assert.deepEqual(
        leading.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type)),
        ids,
        `results lead message ${i + 1}`,
      );
    } else {
      const resultIds = message.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
      if (resultIds.length === 0) return;
      const previous = messages[i - 1];
      assert.ok(previous && previous.role === 'assistant', `results in message ${i} follow an assistant message`);
      const asked = (previous.content as ContentBlockParam[]).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
      for (const id of resultIds) assert.ok(asked.includes(id), `result ${id} answers a call in message ${i - 1}`);
    }
  });
}

const resultContent = (messages: MessageParam[], id: string) => {
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_result' && b.tool_use_id === id) return b;
  }
  throw new Error(`no result ${id}`);
};

describe('clearing old tool results', () => {
  it('clears all but the last three results and keeps their ids', () => {
    const transcript = sampleTranscript();
    const cleared = clearOldResults(transcript);
    assert.deepEqual(toolResultIds(cleared), ['a', 'b', 'c', 'd', 'e', 'f']);
    for (const id of ['a', 'b', 'c']) assert.equal(resultContent(cleared, id).content, STUB);
    for (const id of ['d', 'e', 'f']) assert.equal(resultContent(cleared, id).content, resultContent(transcript, id).content);
  });

  it('uses the reference design placeholder word for word', () => {
    assert.equal(STUB, '[Older result cleared to save space. Call the tool again if you need it.]');
  });

  it('keeps is_error on a cleared result', () => {
    const cleared = clearOldResults(sampleTranscript());
    assert.equal(resultContent(cleared, 'c').is_error, true);
    assert.equal(resultContent(cleared, 'a').is_error, undefined);
  });

  it('never changes the transcript it is given (the workflow keeps every result word for word)', () => {
    const transcript = sampleTranscript();
    const before = structuredClone(transcript);
    clearOldResults(transcript, 0);
    applyClearing(transcript, ['a', 'b', 'c', 'd', 'e', 'f']);
    assert.deepEqual(transcript, before);
  });

  it('leaves every tool_use answered by its tool_result after clearing', () => {
    for (let keep = 0; keep <= 6; keep += 1) assertPairsIntact(clearOldResults(sampleTranscript(), keep));
  });

  it('keeps everything when there are no more results than it keeps', () => {
    const transcript = sampleTranscript().slice(0, 5);
    assert.deepEqual(idsToClear(transcript), []);
    assert.deepEqual(clearOldResults(transcript), transcript);
  });

  it('keeps new results verbatim between batches, because the cleared set is fixed at the batch', () => {
    const transcript = sampleTranscript();
    const atBatch = idsToClear(transcript.slice(0, 9)); // a, b, c, d known: clears a
    assert.deepEqual(atBatch, ['a']);
    const later = applyClearing(transcript, atBatch);
    for (const id of ['b', 'c', 'd', 'e', 'f']) assert.notEqual(resultContent(later, id).content, STUB);
  });
});

describe('the clearing schedule', () => {
  const base = { lastBatchStep: 0, clearEvery: 10, lastModelCallAt: 0, now: 30_000, cacheTtlMs: CACHE_TTL_MS };

  it('runs a batch every 10 steps, not on every call', () => {
    const batchSteps: number[] = [];
    let lastBatchStep = 0;
    for (let step = 1; step <= 30; step += 1) {
      if (clearingTrigger({ ...base, step, lastBatchStep }) === 'batch') {
        batchSteps.push(step);
        lastBatchStep = step;
      }
    }
    assert.deepEqual(batchSteps, [10, 20, 30]);
  });

  it('clears when more than the cache TTL has passed since the last model call', () => {
    assert.equal(clearingTrigger({ ...base, step: 4, lastModelCallAt: 0, now: CACHE_TTL_MS + 1 }), 'cold_cache');
  });

  it('does not clear at exactly the TTL, nor before the first call', () => {
    assert.equal(clearingTrigger({ ...base, step: 4, lastModelCallAt: 0, now: CACHE_TTL_MS }), null);
    assert.equal(clearingTrigger({ ...base, step: 1, lastModelCallAt: null, now: 10 * CACHE_TTL_MS }), null);
  });

  it('turns the schedule off with clearEvery 0, leaving the cold-cache rule', () => {
    assert.equal(clearingTrigger({ ...base, clearEvery: 0, step: 50 }), null);
    assert.equal(clearingTrigger({ ...base, clearEvery: 0, step: 50, now: CACHE_TTL_MS * 2 }), 'cold_cache');
  });

  it('also clears when a token budget is given and the context would pass it', () => {
    assert.equal(clearingTrigger({ ...base, step: 3, clearAboveTokens: 40_000, contextTokens: 40_001 }), 'over_budget');
    assert.equal(clearingTrigger({ ...base, step: 3, clearAboveTokens: 40_000, contextTokens: 40_000 }), null);
  });
});

describe('context editing when thinking is on', () => {
  it('asks the API to clear old tool uses itself, keeping the last three', () => {
    const field = contextManagementEdits(3);
    assert.deepEqual(field, {
      edits: [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'input_tokens', value: 30_000 },
          keep: { type: 'tool_uses', value: 3 },
          clear_at_least: { type: 'input_tokens', value: 10_000 },
        },
      ],
    });
  });

  it('can spare named tools and move the trigger', () => {
    const [edit] = contextManagementEdits(5, { triggerInputTokens: 50_000, excludeTools: ['read_notes'] }).edits ?? [];
    assert.deepEqual(edit, {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'input_tokens', value: 50_000 },
      keep: { type: 'tool_uses', value: 5 },
      clear_at_least: { type: 'input_tokens', value: 10_000 },
      exclude_tools: ['read_notes'],
    });
  });
});

describe('safe split points for compaction', () => {
  it('never separates a tool_use from its tool_result', () => {
    assert.deepEqual(safeSplitPoints(sampleTranscript()), [1, 3, 5, 6, 7, 9, 11, 12, 13]);
  });

  it('lists exactly the splits whose kept tail is a valid conversation', () => {
    const transcript = sampleTranscript();
    const safe = new Set(safeSplitPoints(transcript));
    for (let i = 1; i < transcript.length; i += 1) {
      const tail = transcript.slice(i);
      let valid = true;
      try {
        assertPairsIntact(tail);
        const head = tail[0];
        if (head?.role === 'user' && (head?.content as ContentBlockParam[]).some((b) => b.type === 'tool_result')) valid = false;
      } catch {
        valid = false;
      }
      assert.equal(safe.has(i), valid, `split at ${i}`);
    }
  });

  it('keeps at least the last eight messages, moving the cut earlier rather than splitting a pair', () => {
    const transcript = sampleTranscript(); // 15 messages: 15 - 8 = 7 is safe
    assert.equal(chooseSplit(transcript, 8), 7);
    assert.equal(chooseSplit(transcript, 7), 7); // 8 would cut between d's call and result
    assert.equal(chooseSplit(transcript.slice(0, 8), 8), null);
  });

  it('gives a tail that starts with an assistant message or a user message without results', () => {
    const transcript = sampleTranscript();
    for (const i of safeSplitPoints(transcript)) {
      const head = transcript[i];
      assert.ok(head?.role === 'assistant' || !(head?.content as ContentBlockParam[]).some((b) => b.type === 'tool_result'));
    }
  });
});

const notes: CaseNotes = {
  order_ids: ['4471'],
  customer_problem: 'Order 4471 never arrived.',
  facts_established: ['scanned at Hub 4 on 9 Oct (get_tracking_events)'],
  already_offered: ['offered a replacement'],
  customer_wants: 'a refund',
  open_questions: [],
};

describe('buildContext', () => {
  const tools: Tool[] = toolDefinitions();

  it('sends the rules unchanged as the system prompt on every call, whatever else changes', () => {
    const transcript = sampleTranscript();
    const first = buildContext({ system: SYSTEM_PROMPT, tools, messages: transcript.slice(0, 1) });
    const later = buildContext({
      system: SYSTEM_PROMPT,
      tools,
      messages: transcript.slice(7),
      clearedIds: ['a', 'b', 'c', 'd'],
      memoryBlock: '<customer_memory>\nPriya: deliveries go to Block B\n</customer_memory>',
      agentNotes: applyNotesUpdate(EMPTY_AGENT_NOTES, { found: ['parcel mis-sorted'] }),
      caseNotes: notes,
    });
    assert.deepEqual(later.system, first.system);
    assert.equal(first.system.map((b: TextBlockParam) => b.text).join(''), SYSTEM_PROMPT);
  });

  it('puts memory, agent notes and case notes in the first user message, in that order, before the conversation', () => {
    const built = buildContext({
      system: SYSTEM_PROMPT,
      tools,
      messages: sampleTranscript().slice(0, 3),
      memoryBlock: '<customer_memory>\nnotes\n</customer_memory>',
      agentNotes: applyNotesUpdate(EMPTY_AGENT_NOTES, { to_do: ['check payments'] }),
      caseNotes: notes,
    });
    const texts = (built.messages[0]?.content as ContentBlockParam[]).map((b) => (b.type === 'text' ? b.text : b.type));
    const [memory = '', agentNotes = '', caseNotes = '', message] = texts;
    assert.equal(texts.length, 4);
    assert.match(memory, /^<customer_memory>/);
    assert.match(agentNotes, /^<agent_notes>[\s\S]*check payments/);
    assert.match(caseNotes, /^<case_notes>[\s\S]*"already_offered"/);
    assert.equal(message, 'Customer message:\nOrder 4471 never arrived.');
  });

  it('opens with a user message of notes when the kept tail starts with the assistant', () => {
    const transcript = sampleTranscript();
    const built = buildContext({ system: SYSTEM_PROMPT, tools, messages: transcript.slice(5), caseNotes: notes });
    assert.equal(built.messages[0]?.role, 'user');
    assert.equal(built.messages.length, transcript.length - 5 + 1);
    assert.equal(built.messages[1]?.role, 'assistant');
  });

  it('keeps tool_use/tool_result pairs intact after compaction at every possible split, with clearing too', () => {
    const transcript = sampleTranscript();
    for (const split of safeSplitPoints(transcript)) {
      const tail = transcript.slice(split);
      const built = buildContext({ system: SYSTEM_PROMPT, tools, messages: tail, clearedIds: idsToClear(tail), caseNotes: notes });
      assert.equal(built.messages[0]?.role, 'user', `split ${split} opens with the user`);
      assertPairsIntact(built.messages);
    }
  });

  it('marks four cache breakpoints: the rules (after the tools), the clearing frontier, the end of the previous request and the end', () => {
    const built = buildContext({ system: SYSTEM_PROMPT, tools, messages: sampleTranscript(), clearedIds: ['a'] });
    assert.equal(countBreakpoints(built), 4);
    assert.deepEqual(built.system[built.system.length - 1]?.cache_control, { type: 'ephemeral' });
    // The rules come after the tools, so their breakpoint caches both; the tools need none of their own.
    assert.equal(
      built.tools.some((t) => t.cache_control),
      false,
    );
    const markedAt = built.messages.flatMap((m, i) =>
      (m.content as ContentBlockParam[]).flatMap((b, j) => ((b as { cache_control?: unknown }).cache_control ? [`${i}:${j}`] : [])),
    );
    // Message 3 ends with the call whose result is the first still sent whole (b): the next batch changes nothing before it.
    // Message 12 is the last of the previous request (before the latest reply, message 13); message 14 is the end.
    assert.deepEqual(markedAt, ['3:1', '12:0', '14:0']);
  });

  it('marks every breakpoint with the hour TTL when asked, and leaves the tail unmarked when the next step clears', () => {
    const hour = buildContext({ system: SYSTEM_PROMPT, tools, messages: sampleTranscript(), clearedIds: ['a'], cache: { ttl: '1h' } });
    const marks = [...hour.system, ...hour.messages.flatMap((m) => m.content as ContentBlockParam[])].flatMap((b) =>
      (b as { cache_control?: unknown }).cache_control ? [(b as { cache_control?: unknown }).cache_control] : [],
    );
    assert.deepEqual(marks, Array(4).fill({ type: 'ephemeral', ttl: '1h' }));
    const noTail = buildContext({ system: SYSTEM_PROMPT, tools, messages: sampleTranscript(), clearedIds: ['a'], cache: { writeTail: false } });
    assert.equal(countBreakpoints(noTail), 3);
    const last = noTail.messages.at(-1)!.content as ContentBlockParam[];
    assert.equal((last.at(-1) as { cache_control?: unknown }).cache_control, undefined);
  });

  it('sends byte-identical earlier messages between clearing batches, so the cache prefix holds', () => {
    const transcript = sampleTranscript();
    const cleared = ['a'];
    const before = buildContext({ system: SYSTEM_PROMPT, tools, messages: transcript.slice(0, 13), clearedIds: cleared });
    const after = buildContext({ system: SYSTEM_PROMPT, tools, messages: transcript, clearedIds: cleared });
    const strip = (m: MessageParam[]) => JSON.stringify(m, (k, v) => (k === 'cache_control' ? undefined : v));
    assert.equal(strip(after.messages.slice(0, 13)), strip(before.messages));
  });

  it('never changes the transcript it is given', () => {
    const transcript = sampleTranscript();
    const before = structuredClone(transcript);
    buildContext({ system: SYSTEM_PROMPT, tools, messages: transcript, clearedIds: ['a', 'b'], caseNotes: notes, memoryBlock: 'm' });
    assert.deepEqual(transcript, before);
  });
});

describe('agent notes', () => {
  it('adds items once each and crosses off to-do items marked done', () => {
    let n = applyNotesUpdate(EMPTY_AGENT_NOTES, { found: ['mis-sorted at Hub 4'], to_do: ['check payments', 'check policy'] });
    n = applyNotesUpdate(n, { found: ['Mis-sorted at  Hub 4', 'signed by gate guard'], done: ['check payments'], ruled_out: ['wrong address'] });
    assert.deepEqual(n, { found: ['mis-sorted at Hub 4', 'signed by gate guard'], ruled_out: ['wrong address'], to_do: ['check policy'] });
    assert.deepEqual(EMPTY_AGENT_NOTES, { found: [], ruled_out: [], to_do: [] });
  });

  it('renders three headed lists, or says there are none', () => {
    assert.equal(renderNotes(EMPTY_AGENT_NOTES), 'No notes yet.');
    assert.equal(renderNotes({ found: ['x'], ruled_out: [], to_do: ['y'] }), 'Found:\n- x\nTo do:\n- y');
  });
});

describe('token estimates', () => {
  it('counts what blocks carry: text, tool input and result content', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'abcd'.repeat(10) },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'abcd', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x'.repeat(400) }] },
    ];
    assert.equal(estimateMessagesTokens(messages), 10 + (1 + 1) + 100);
    assert.equal(estimateRequestTokens({ system: [{ type: 'text', text: 'y'.repeat(8) }], tools: [], messages }), 2 + 112);
  });
});
