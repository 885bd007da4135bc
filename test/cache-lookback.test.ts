import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ContentBlockParam, MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { buildContext, type BuiltContext } from '../src/context/build-context';
import { countBreakpoints, MAX_BREAKPOINTS, withoutCacheMarks } from '../src/context/cache-breakpoints';
import { breakpointProblem, createCacheCostModel, type CostBlock, type CostCall } from '../src/context/cache-cost';
import { DEFAULT_PRICES } from '../src/context/accounting';
import { idsToClear } from '../src/context/clearing';
import { estimateBlockTokens, estimateRequestTokens, estimateToolTokens, estimateTokens } from '../src/context/tokens';
import { canonicalJson, createPromptCache } from '../src/model/offline/cache';

// The API reads a cached prefix only at block boundaries within 20 blocks before one of the
// request's breakpoints. Over generated step shapes (replies with up to 16 parallel tool calls,
// text before them or not, results of any size, customer text after them, clearing batches now
// and then), every step that did not clear reads the whole previous request, both on the
// offline Messages stand-in's cache (src/model/offline/cache.ts) and on the exact cost model,
// which count the lookback as the documentation describes; and no request carries more than
// four breakpoints.

const chars = (tokens: number, letter: string) => letter.repeat(tokens * 4);
const system: TextBlockParam[] = [{ type: 'text', text: chars(1_500, 'r') }];
const tools: Tool[] = [{ name: 'lookup', description: chars(300, 'd'), input_schema: { type: 'object', properties: {} } }];
const opening: MessageParam = { role: 'user', content: [{ type: 'text', text: chars(80, 'o') }] };

interface Step {
  text: boolean;
  results: number[];
  customer: boolean;
  clear: boolean;
}

const stepShape = fc.record({
  text: fc.boolean(),
  results: fc.array(fc.integer({ min: 1, max: 900 }), { minLength: 1, maxLength: 16 }),
  customer: fc.boolean(),
  clear: fc.boolean(),
});

function stepMessages(n: number, step: Step): MessageParam[] {
  const ids = step.results.map((_, i) => `toolu_${n}_${i}`);
  const reply: ContentBlockParam[] = [
    ...(step.text ? [{ type: 'text' as const, text: `Checking step ${n}.` }] : []),
    ...ids.map((id) => ({ type: 'tool_use' as const, id, name: 'lookup', input: { n } })),
  ];
  const results: ContentBlockParam[] = step.results.map((tokens, i) => ({
    type: 'tool_result',
    tool_use_id: ids[i]!,
    content: chars(tokens, String.fromCharCode(97 + ((n + i) % 26))),
  }));
  return [
    { role: 'assistant', content: reply },
    { role: 'user', content: [...results, ...(step.customer ? [{ type: 'text' as const, text: `Customer message:\nany news at ${n}?` }] : [])] },
  ];
}

/** The request as the cost model sees it: one block per tool, system block and message block, identified by content and place. */
function costCall(request: BuiltContext, at: number): CostCall {
  const blocks: CostBlock[] = [];
  const push = (key: string, tokens: number, marked: unknown) =>
    blocks.push({ key, tokens, ...(marked ? { breakpoint: (marked as { ttl?: '1h' }).ttl === '1h' ? ('1h' as const) : ('5m' as const) } : {}) });
  for (const { cache_control, ...tool } of request.tools) push(`tool:${canonicalJson(tool)}`, estimateToolTokens(tool), cache_control);
  for (const { cache_control, ...block } of request.system) push(`system:${canonicalJson(block)}`, estimateTokens(block.text), cache_control);
  request.messages.forEach((m, i) =>
    (m.content as ContentBlockParam[]).forEach((b, j) => {
      const { cache_control, ...body } = b as ContentBlockParam & { cache_control?: unknown };
      push(`${j === 0 ? `message ${i} ${m.role}:` : 'block:'}${canonicalJson(body)}`, estimateBlockTokens(b), cache_control);
    }),
  );
  return { at, blocks };
}

/** The same request with today's former placement: the last tool, the rules and the last block only. */
function endOnly(request: BuiltContext): BuiltContext {
  const messages = withoutCacheMarks(request.messages);
  const last = messages.at(-1)!.content as ContentBlockParam[];
  last[last.length - 1] = { ...last.at(-1)!, cache_control: { type: 'ephemeral' } } as ContentBlockParam;
  return {
    tools: request.tools.map((t, i, all) => (i === all.length - 1 ? { ...t, cache_control: { type: 'ephemeral' } } : t)),
    system: request.system.map((b) => ({ ...b, cache_control: { type: 'ephemeral' } })),
    messages,
  };
}

/** Runs the steps; for every step that did not clear, the tokens read against the previous request's size, on both caches. */
function reads(steps: Step[], place: (r: BuiltContext) => BuiltContext = (r) => r) {
  const simulator = createPromptCache();
  const model = createCacheCostModel(DEFAULT_PRICES);
  const transcript: MessageParam[] = [opening];
  let cleared: string[] = [];
  let previous = 0;
  const out: { step: number; previous: number; simulator: number; model: number; breakpoints: number }[] = [];
  steps.forEach((step, i) => {
    const at = i * 30_000;
    if (i > 0 && step.clear) cleared = idsToClear(transcript, 3);
    const request = place(buildContext({ system, tools, messages: transcript, clearedIds: cleared }));
    const fromSimulator = simulator.account(request, at).cache_read_input_tokens;
    const fromModel = model.price(costCall(request, at)).read_tokens;
    if (i > 0 && !step.clear) out.push({ step: i + 1, previous, simulator: fromSimulator, model: fromModel, breakpoints: countBreakpoints(request) });
    previous = estimateRequestTokens(request);
    transcript.push(...stepMessages(i + 1, step));
  });
  return out;
}

describe('cache breakpoints survive the 20-block lookback', () => {
  it('a step that did not clear reads the whole previous request, however many blocks it added', () => {
    fc.assert(
      fc.property(fc.array(stepShape, { minLength: 2, maxLength: 8 }), (steps) => {
        for (const r of reads(steps)) {
          assert.ok(r.breakpoints <= MAX_BREAKPOINTS, `step ${r.step}: ${r.breakpoints} breakpoints`);
          assert.equal(r.simulator, r.previous, `step ${r.step}: the stand-in read ${r.simulator} of the previous ${r.previous}`);
          assert.equal(r.model, r.previous, `step ${r.step}: the cost model read ${r.model} of the previous ${r.previous}`);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('whatever the schedule asks (an hour TTL, no tail), a request carries at most four breakpoints with TTLs the API accepts', () => {
    fc.assert(
      fc.property(fc.array(stepShape, { minLength: 1, maxLength: 6 }), fc.constantFrom<'5m' | '1h'>('5m', '1h'), fc.boolean(), (steps, ttl, writeTail) => {
        const transcript: MessageParam[] = [opening];
        steps.forEach((step, i) => transcript.push(...stepMessages(i + 1, step)));
        const request = buildContext({ system, tools, messages: transcript, clearedIds: idsToClear(transcript, 3), cache: { ttl, writeTail } });
        const call = costCall(request, 0);
        assert.equal(breakpointProblem(call.blocks), null);
        assert.ok(countBreakpoints(request) <= MAX_BREAKPOINTS);
        assert.ok(call.blocks.filter((b) => b.breakpoint).every((b) => b.breakpoint === ttl));
      }),
      { numRuns: 100 },
    );
  });

  it('where a single breakpoint at the end read nothing but tools and rules after a reply with ten parallel calls', () => {
    const wide: Step = { text: true, results: Array(10).fill(200), customer: false, clear: false };
    const steps = [wide, wide, wide];
    const base = estimateToolTokens(tools[0]!) + 1_500;
    const before = reads(steps, endOnly);
    // 1 text + 10 tool_use + 10 results: 21 new blocks, one more than the lookback reaches.
    assert.deepEqual(
      before.map((r) => r.simulator),
      [base, base],
    );
    const after = reads(steps);
    assert.deepEqual(
      after.map((r) => r.simulator),
      after.map((r) => r.previous),
    );
  });
});
