import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { createPromptCache, emptyCacheState, simulateCache, type CacheableRequest } from '../src/model/offline/cache';
import { buildContext, estimateToolTokens } from '../src/context';

const chars = (tokens: number, letter = 'x') => letter.repeat(tokens * 4);
const system: TextBlockParam[] = [{ type: 'text', text: chars(1_500, 'r') }];
const tools: Tool[] = [{ name: 'tool', description: chars(500, 'd'), input_schema: { type: 'object', properties: {} } }];

function request(messages: MessageParam[], clearedIds: string[] = []): CacheableRequest {
  return buildContext({ system, tools, messages, clearedIds });
}

const opening: MessageParam = { role: 'user', content: [{ type: 'text', text: chars(100, 'c') }] };
const step = (n: number): MessageParam[] => [
  { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}`, name: 'tool', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: chars(2_000, String(n)) }] },
];

describe('the offline prompt-cache simulator', () => {
  it('writes the whole marked prefix on the first call and reads it on the next', () => {
    const cache = createPromptCache();
    const first = cache.account(request([opening]), 0);
    const total = first.input_tokens + first.cache_creation_input_tokens + first.cache_read_input_tokens;
    assert.equal(first.cache_read_input_tokens, 0);
    assert.equal(first.cache_creation_input_tokens, total);
    const second = cache.account(request([opening, ...step(1)]), 30_000);
    assert.equal(second.cache_read_input_tokens, total);
    assert.equal(second.cache_creation_input_tokens, 2_000 + 1 + 1); // the tool_use and its result
    assert.equal(second.input_tokens, 0);
  });

  it('reports an expired prefix as a new write, after the TTL', () => {
    const cache = createPromptCache({ ttlMs: 300_000 });
    cache.account(request([opening]), 0);
    const cold = cache.account(request([opening, ...step(1)]), 300_001);
    assert.equal(cold.cache_read_input_tokens, 0);
  });

  it('refreshes an entry on every hit, like the API', () => {
    const cache = createPromptCache({ ttlMs: 300_000 });
    const same = request([opening]);
    cache.account(same, 0);
    cache.account(same, 250_000);
    assert.ok(cache.account(same, 500_000).cache_read_input_tokens > 0);
  });

  it('pays again from the first changed block when an earlier result is cleared', () => {
    const cache = createPromptCache();
    const messages = [opening, ...step(1), ...step(2)];
    cache.account(request(messages), 0);
    const cleared = cache.account(request(messages, ['t1']), 1_000);
    // Everything before the cleared result is still cached: the tools, the rules, the opening and
    // the call it answered (the clearing frontier's breakpoint marked its end); nothing after it.
    const toolUse = 1 + 1; // the tool_use block: its name and its empty input
    assert.equal(cleared.cache_read_input_tokens, tools.reduce((n, tool) => n + estimateToolTokens(tool), 0) + 1_500 + 100 + toolUse);
  });

  it('caches nothing below the minimum cacheable length', () => {
    const small: CacheableRequest = { system: [{ type: 'text', text: 'short', cache_control: { type: 'ephemeral' } }], tools: [], messages: [] };
    const { usage } = simulateCache(emptyCacheState(), small, 0, { minCacheableTokens: 1_024 });
    assert.deepEqual(usage, { input_tokens: 2, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it('caches nothing without breakpoints, and leaves the given state unchanged', () => {
    const state = emptyCacheState();
    const plain: CacheableRequest = { system, tools, messages: [opening] };
    const { usage } = simulateCache(state, plain, 0, {}, 7);
    assert.equal(usage.cache_creation_input_tokens, 0);
    assert.equal(usage.output_tokens, 7);
    assert.deepEqual(state, { entries: {} });
  });
});
