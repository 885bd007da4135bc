import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BadRequestError } from '@anthropic-ai/sdk';
import { contextManagementEdits } from '../src/context/clearing';
import { COMPACTION_MIN_TRIGGER, compactionEdit, contextManagementProblems } from '../src/context/server-context';
import { createOfflineModel } from '../src/model/offline';
import type { ModelRequest } from '../src/schemas/model';

// Anthropic's server-side context editing and compaction: the request field as the installed
// SDK types it and the documentation bounds it, and the offline double that refuses a malformed
// one with the API's 400 instead of quietly accepting what the API would not.

const request = (extra: Record<string, unknown>): ModelRequest => ({
  purpose: 'investigate',
  system: [{ type: 'text', text: 'You investigate support cases.' }],
  tools: [],
  messages: [{ role: 'user', content: 'Customer message:\nWhere is order 5102?' }],
  max_tokens: 256,
  extra,
});

describe('server-side context management', () => {
  it('builds the documented compaction edit, and refuses a trigger under 50,000 input tokens', () => {
    assert.deepEqual(compactionEdit({ triggerInputTokens: 80_000, instructions: 'Keep order numbers.' }), {
      type: 'compact_20260112',
      trigger: { type: 'input_tokens', value: 80_000 },
      instructions: 'Keep order numbers.',
    });
    assert.deepEqual(compactionEdit().trigger, { type: 'input_tokens', value: 150_000 });
    assert.throws(() => compactionEdit({ triggerInputTokens: 30_000 }), /at least 50000 input tokens, not 30000/);
  });

  it('accepts what the SDK types and the documentation allow', () => {
    assert.deepEqual(contextManagementProblems(contextManagementEdits(3), false), []);
    assert.deepEqual(contextManagementProblems({ edits: [...contextManagementEdits(3).edits!, compactionEdit()] }, false), []);
    assert.deepEqual(
      contextManagementProblems({ edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 2 } }, ...contextManagementEdits(3).edits!] }, true),
      [],
    );
  });

  it('refuses what the API refuses, naming the field', () => {
    const cases: [unknown, boolean, RegExp][] = [
      [{ edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 3 }, keep_last: 3 }] }, false, /edits\.0.*keep_last/],
      [{ edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: '30000' } }] }, false, /edits\.0\.trigger/],
      [{ edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: COMPACTION_MIN_TRIGGER - 1 } }] }, false, /at least 50000/],
      [{ edits: [{ type: 'compact_20260113' }] }, false, /edits\.0\.type/],
      [{ edits: [...contextManagementEdits(3).edits!, { type: 'clear_thinking_20251015' }] }, true, /clear_thinking_20251015 must come first/],
      [{ edits: [{ type: 'clear_thinking_20251015' }] }, false, /needs extended thinking/],
      [{ edits: [compactionEdit(), compactionEdit()] }, false, /more than once/],
      [{ edit: [] }, false, /edit/],
    ];
    for (const [value, thinking, problem] of cases) assert.match(contextManagementProblems(value, thinking).join('; '), problem, JSON.stringify(value));
  });

  it("the offline double answers a well-formed field and refuses a malformed one with the API's 400", async () => {
    const model = createOfflineModel({ now: () => 0 });
    const reply = await model.create(request({ context_management: { edits: [compactionEdit({ triggerInputTokens: 60_000 })] } }));
    assert.ok(reply.content.length > 0);
    await assert.rejects(
      () => model.create(request({ context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 10_000 } }] } })),
      (error: unknown) => error instanceof BadRequestError && error.status === 400 && /compaction trigger must be at least 50000/.test(error.message),
    );
  });
});
