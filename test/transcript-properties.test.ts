import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ContentBlock, MessageParam, StopReason, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { buildContext } from '../src/context/build-context';
import { idsToClear } from '../src/context/clearing';
import { appendAssistant, appendUserText, assistantMessage, CUT_OFF_TOOL_USE, EMPTY_REPLY_NUDGE, planReply } from '../src/context/replies';
import { chooseSplit } from '../src/context/split';
import { customerText, toolResultMessage } from '../src/context/transcript';
import { repairTranscript, requestProblems, transcriptProblems } from '../src/context/transcript-check';
import type { ModelReply } from '../src/schemas/model';

// The transcript invariants, over random conversations: whatever the model replies (every
// stop reason the Messages API documents, several tool calls at once, thinking, block types
// casework does not know, nothing at all), whenever customers write, decisions land, clearing
// batches run, compaction cuts and the run continues as new, every request the conversation
// produces keeps the API's rules, and the transcript keeps every message word for word. The
// conversation is driven the way src/workflows/investigation.ts drives it, with the same
// pure functions.

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** One model reply, as the API could send it. */
const block = (id: number) =>
  fc.oneof(
    fc.string({ minLength: 1, maxLength: 40 }).map((text): ContentBlock => ({ type: 'text', text, citations: null })),
    fc.constant<ContentBlock>({ type: 'text', text: '', citations: null }),
    fc
      .constantFrom('get_order', 'lookup_policy', 'write_notes', 'no_such_tool')
      .map((name): ContentBlock => ({ type: 'tool_use', id: `toolu_${id}_${name}`, name, input: { order_id: String(id) }, caller: { type: 'direct' } }) as unknown as ContentBlock),
    fc.constant<ContentBlock>({ type: 'thinking', thinking: 'let me think', signature: 'sig' }),
    fc.constant<ContentBlock>({ type: 'redacted_thinking', data: 'opaque' }),
    fc.constant({ type: 'server_tool_use_of_the_future', id: `srv_${id}`, payload: { x: 1 } } as unknown as ContentBlock),
  );

const stopReasons: StopReason[] = ['end_turn', 'tool_use', 'max_tokens', 'pause_turn', 'refusal', 'model_context_window_exceeded', 'stop_sequence'];

const reply = (id: number) =>
  fc.record({
    content: fc.array(block(id), { maxLength: 4 }).map((blocks) =>
      // Tool ids are unique within a reply, as the API makes them.
      blocks.map((b, i) => (b.type === 'tool_use' ? { ...b, id: `${b.id}_${i}` } : b)),
    ),
    stop_reason: fc.constantFrom<StopReason | null>(...stopReasons, null),
  });

/** What happens between model calls. */
const event = fc.oneof(
  fc.record({ kind: fc.constant('reply' as const), seed: fc.nat() }),
  fc.record({ kind: fc.constant('customer' as const), text: fc.string({ minLength: 1, maxLength: 30 }) }),
  fc.record({ kind: fc.constant('decision' as const) }),
  fc.record({ kind: fc.constant('clear' as const) }),
  fc.record({ kind: fc.constant('compact' as const) }),
  fc.record({ kind: fc.constant('continue_as_new' as const) }),
  fc.record({ kind: fc.constant('tool_fails' as const) }),
);

interface Conversation {
  transcript: MessageParam[];
  compactedThrough: number;
  clearedIds: string[];
  awaitingModel: boolean;
  failNextTool: boolean;
}

const systemTools = { system: 'rules', tools: [{ name: 'get_order', description: 'd', input_schema: { type: 'object' as const } }] };

describe('transcript invariants over random conversations', () => {
  it('every request keeps the API rules, and the transcript keeps every word', () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 40 }), fc.array(reply(0), { minLength: 40, maxLength: 40 }), (events, replies) => {
        let c: Conversation = { transcript: [], compactedThrough: 0, clearedIds: [], awaitingModel: false, failNextTool: false };
        const said: string[] = [];
        const results: string[] = [];
        let replyIndex = 0;
        let empties = 0;

        const modelCall = () => {
          const built = buildContext({
            ...systemTools,
            messages: c.transcript.slice(c.compactedThrough),
            clearedIds: c.clearedIds,
            memoryBlock: '<customer_memory>x</customer_memory>',
          });
          const problems = requestProblems(built);
          assert.deepEqual(problems, [], `a request broke the API's rules:\n${problems.join('\n')}\n${JSON.stringify(built.messages, null, 1)}`);
          const raw = replies[replyIndex++ % replies.length];
          const sent: ModelReply = {
            id: `msg_${replyIndex}`,
            model: 'm',
            usage,
            content: raw!.content.map((b) => (b.type === 'tool_use' ? { ...b, id: `${b.id}_r${replyIndex}` } : b)),
            stop_reason: raw!.stop_reason,
          };
          const plan = planReply(sent);
          const message = assistantMessage(sent);
          if (message) appendAssistant(c.transcript, message);
          if (plan.kind !== 'empty') empties = 0;
          switch (plan.kind) {
            case 'run_tools': {
              const out: ToolResultBlockParam[] = plan.uses.map((u) => {
                const content = c.failNextTool ? 'The tool is not answering right now.' : `result of ${u.id}`;
                results.push(content);
                return { type: 'tool_result', tool_use_id: u.id, content, ...(c.failNextTool ? { is_error: true } : {}) };
              });
              c.failNextTool = false;
              c.transcript.push(toolResultMessage(out, []));
              break;
            }
            case 'continue':
              for (const r of plan.results) assert.equal(r.content, CUT_OFF_TOOL_USE, 'a cut-off tool call is never run');
              if (plan.results.length) c.transcript.push(toolResultMessage(plan.results, []));
              break;
            case 'empty':
              empties += 1;
              if (empties > 2) {
                c.transcript = repairTranscript(c.transcript);
                appendAssistant(c.transcript, { role: 'assistant', content: [{ type: 'text', text: 'a colleague will pick this up' }] });
                c.awaitingModel = false;
                return;
              }
              appendUserText(c.transcript, [{ type: 'text', text: EMPTY_REPLY_NUDGE }]);
              break;
            case 'refused':
              c.transcript = repairTranscript(c.transcript);
              appendAssistant(c.transcript, { role: 'assistant', content: [{ type: 'text', text: 'a colleague will pick this up' }] });
              c.awaitingModel = false;
              return;
            case 'reply':
              c.awaitingModel = false;
              return;
          }
          c.awaitingModel = true;
        };

        for (const e of events) {
          switch (e.kind) {
            case 'customer':
              said.push(e.text);
              appendUserText(c.transcript, [customerText(e.text)]);
              c.awaitingModel = true;
              break;
            case 'decision':
              if (c.transcript.length === 0) break;
              appendUserText(c.transcript, [{ type: 'text', text: 'Refund decision, recorded by casework:\n{"decision":"approved"}' }]);
              c.awaitingModel = true;
              break;
            case 'clear':
              c.clearedIds = idsToClear(c.transcript.slice(c.compactedThrough), 3);
              break;
            case 'compact': {
              const split = chooseSplit(c.transcript.slice(c.compactedThrough), 2);
              if (split && split > 0) c.compactedThrough += split;
              break;
            }
            case 'continue_as_new':
              // The carried state crosses the boundary as JSON.
              c = JSON.parse(JSON.stringify(c)) as Conversation;
              break;
            case 'tool_fails':
              c.failNextTool = true;
              break;
            case 'reply':
              break;
          }
          // The workflow calls the model whenever a step is due.
          for (let guard = 0; c.awaitingModel && guard < 6; guard += 1) modelCall();
          if (c.awaitingModel) {
            // The step cap: the turn ends with casework's own words.
            c.transcript = repairTranscript(c.transcript);
            appendAssistant(c.transcript, { role: 'assistant', content: [{ type: 'text', text: 'passed to a colleague' }] });
            c.awaitingModel = false;
          }
        }

        const everything = JSON.stringify(c.transcript);
        for (const text of said) assert.ok(everything.includes(JSON.stringify(customerText(text).text).slice(1, -1)), `the customer's words are kept: ${text}`);
        for (const result of results) assert.ok(everything.includes(result), `a tool result is kept word for word: ${result}`);
        if (c.transcript.length)
          assert.deepEqual(
            transcriptProblems(c.transcript).filter((p) => !p.includes('have no tool_result yet')),
            [],
          );
      }),
      { numRuns: 300 },
    );
  });
});

describe('the transcript check', () => {
  it('names each rule a conversation breaks', () => {
    const problems = transcriptProblems([
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
      { role: 'assistant', content: [] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x' },
          { type: 'tool_result', tool_use_id: 'nobody', content: 'r' },
        ],
      },
    ]);
    assert.ok(problems.some((p) => /must start with the user/.test(p)));
    assert.ok(problems.some((p) => /two assistant messages in a row/.test(p)));
    assert.ok(problems.some((p) => /empty content/.test(p)));
    assert.ok(problems.some((p) => /tool_result nobody answers no tool_use/.test(p)));
  });

  it('refuses a tool_result that is not first in the next user message', () => {
    const problems = transcriptProblems([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_order', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Customer message:\nhello' },
          { type: 'tool_result', tool_use_id: 't1', content: 'r' },
        ],
      },
    ]);
    assert.ok(problems.some((p) => /tool_use t1 is not answered by a tool_result first/.test(p)));
  });

  it("repairs a tool_use left without its result with an error result, changing no one's words", () => {
    const broken: MessageParam[] = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'looking' },
          { type: 'tool_use', id: 't1', name: 'get_order', input: {} },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ];
    const repaired = repairTranscript(broken);
    assert.deepEqual(transcriptProblems(repaired), []);
    // The two assistant messages are one turn, as the API reads them; the tool_use gets its result next.
    assert.deepEqual(repaired[1], {
      role: 'assistant',
      content: [
        { type: 'text', text: 'looking' },
        { type: 'tool_use', id: 't1', name: 'get_order', input: {} },
        { type: 'text', text: 'done' },
      ],
    });
    assert.deepEqual(repaired[2], {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't1', content: 'This tool call was not run, so it has no result.', is_error: true }],
    });
  });
});

describe('what each documented reply means', () => {
  const r = (content: unknown[], stop_reason: StopReason | null): ModelReply => ({ id: 'm', model: 'm', usage, content: content as ContentBlock[], stop_reason });
  const use = { type: 'tool_use', id: 't1', name: 'write_notes', input: { found: ['half of a'] } };

  it('an empty end_turn stores nothing and asks again', () => {
    assert.equal(assistantMessage(r([], 'end_turn')), null);
    assert.deepEqual(planReply(r([], 'end_turn')), { kind: 'empty' });
  });

  it('a tool call cut off by max_tokens is answered with an error and never run', () => {
    const plan = planReply(r([use], 'max_tokens'));
    assert.equal(plan.kind, 'continue');
    assert.deepEqual(plan.kind === 'continue' && plan.results, [{ type: 'tool_result', tool_use_id: 't1', content: CUT_OFF_TOOL_USE, is_error: true }]);
  });

  it('pause_turn is continued from where it stopped; the continuation joins the same assistant message', () => {
    const transcript: MessageParam[] = [{ role: 'user', content: 'hi' }];
    appendAssistant(transcript, assistantMessage(r([{ type: 'text', text: 'part one' }], 'pause_turn'))!);
    assert.deepEqual(planReply(r([{ type: 'text', text: 'part one' }], 'pause_turn')), { kind: 'continue', results: [], shrinkContext: false });
    appendAssistant(transcript, assistantMessage(r([{ type: 'text', text: 'part two' }], 'end_turn'))!);
    assert.equal(transcript.length, 2);
    assert.deepEqual(transcriptProblems(transcript), []);
  });

  it('model_context_window_exceeded shrinks the context before the next call', () => {
    const plan = planReply(r([{ type: 'text', text: 'so far' }], 'model_context_window_exceeded'));
    assert.deepEqual(plan, { kind: 'continue', results: [], shrinkContext: true });
  });

  it('a refusal goes to a person; stop_sequence ends the turn like end_turn', () => {
    assert.equal(planReply(r([], 'refusal')).kind, 'refused');
    assert.deepEqual(planReply(r([{ type: 'text', text: 'bye' }], 'stop_sequence')), { kind: 'reply', text: 'bye' });
  });

  it('keeps thinking, redacted thinking and unknown blocks exactly as returned', () => {
    const odd = { type: 'server_tool_use_of_the_future', id: 's1', payload: { deep: [1, 2] } };
    const message = assistantMessage(
      r([{ type: 'thinking', thinking: 't', signature: 'sig' }, { type: 'redacted_thinking', data: 'd' }, odd, { type: 'text', text: 'hi', citations: null }], 'end_turn'),
    );
    assert.deepEqual(message, {
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 't', signature: 'sig' }, { type: 'redacted_thinking', data: 'd' }, odd, { type: 'text', text: 'hi' }],
    });
  });

  it('runs every tool_use of one reply', () => {
    const plan = planReply(r([use, { ...use, id: 't2' }], 'tool_use'));
    assert.deepEqual(plan.kind === 'run_tools' && plan.uses.map((u) => u.id), ['t1', 't2']);
  });
});
