import { z } from 'zod';
import type { BetaCompact20260112Edit, BetaContextManagementConfig } from '@anthropic-ai/sdk/resources/beta/messages/messages';

// Anthropic's server-side context management, as the installed SDK (@anthropic-ai/sdk
// BetaContextManagementConfig) and the documentation shape it: `context_management.edits` holds
// tool-result clearing (clear_tool_uses_20250919) and thinking clearing (clear_thinking_20251015),
// both under the beta `context-management-2025-06-27`, and compaction (compact_20260112) under
// `compact-2026-01-12`, whose trigger defaults to 150,000 input tokens and may not be set under
// 50,000 (platform.claude.com/docs/en/build-with-claude/compaction). The schema below is strict
// the way the API is: an unknown field, a wrong type or an out-of-range value is refused.

/** The beta header of context editing (clear_tool_uses, clear_thinking). */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

/** The beta header of server-side compaction. */
export const COMPACTION_BETA = 'compact-2026-01-12';

/** The lowest compaction trigger the API accepts. */
export const COMPACTION_MIN_TRIGGER = 50_000;

/** The compaction trigger when none is given. */
export const COMPACTION_DEFAULT_TRIGGER = 150_000;

const count = z.number().int().nonnegative();
const inputTokens = z.strictObject({ type: z.literal('input_tokens'), value: count });
const toolUses = z.strictObject({ type: z.literal('tool_uses'), value: count });

const clearToolUses = z.strictObject({
  type: z.literal('clear_tool_uses_20250919'),
  trigger: z.union([inputTokens, toolUses]).optional(),
  keep: toolUses.optional(),
  clear_at_least: inputTokens.nullable().optional(),
  exclude_tools: z.array(z.string()).nullable().optional(),
  clear_tool_inputs: z
    .union([z.boolean(), z.array(z.string())])
    .nullable()
    .optional(),
});

const clearThinking = z.strictObject({
  type: z.literal('clear_thinking_20251015'),
  keep: z
    .union([z.strictObject({ type: z.literal('thinking_turns'), value: z.number().int().positive() }), z.strictObject({ type: z.literal('all') }), z.literal('all')])
    .optional(),
});

const compact = z.strictObject({
  type: z.literal('compact_20260112'),
  trigger: z
    .strictObject({
      type: z.literal('input_tokens'),
      value: z.number().int().min(COMPACTION_MIN_TRIGGER, `the compaction trigger must be at least ${COMPACTION_MIN_TRIGGER} input tokens`),
    })
    .nullable()
    .optional(),
  instructions: z.string().nullable().optional(),
  pause_after_compaction: z.boolean().optional(),
});

/** The `context_management` request field, as strict as the API. */
export const contextManagementSchema = z.strictObject({ edits: z.array(z.discriminatedUnion('type', [clearToolUses, clearThinking, compact])).optional() });

/**
 * What is wrong with a `context_management` field, as the API would say it, or [] when it is
 * well formed. `thinkingEnabled` says whether the request turns extended thinking on.
 */
export function contextManagementProblems(value: unknown, thinkingEnabled: boolean): string[] {
  const parsed = contextManagementSchema.safeParse(value);
  if (!parsed.success) return parsed.error.issues.map((issue) => `context_management.${issue.path.join('.')}: ${issue.message}`);
  const edits = parsed.data.edits ?? [];
  const problems: string[] = [];
  const types = edits.map((e) => e.type);
  for (const type of new Set(types)) if (types.filter((t) => t === type).length > 1) problems.push(`context_management.edits: ${type} is given more than once`);
  const thinking = types.indexOf('clear_thinking_20251015');
  if (thinking > 0) problems.push('context_management.edits: clear_thinking_20251015 must come first');
  if (thinking >= 0 && !thinkingEnabled) problems.push('context_management.edits: clear_thinking_20251015 needs extended thinking enabled');
  return problems;
}

/** The beta headers a `context_management` field needs. */
export function betasFor(config: BetaContextManagementConfig): string[] {
  const types = new Set((config.edits ?? []).map((e) => e.type));
  const betas: string[] = [];
  if (types.has('clear_tool_uses_20250919') || types.has('clear_thinking_20251015')) betas.push(CONTEXT_MANAGEMENT_BETA);
  if (types.has('compact_20260112')) betas.push(COMPACTION_BETA);
  return betas;
}

/** The compaction edit: the API summarises the conversation once a request passes `triggerInputTokens` (at least 50,000). */
export function compactionEdit(options: { triggerInputTokens?: number; instructions?: string; pauseAfterCompaction?: boolean } = {}): BetaCompact20260112Edit {
  const trigger = options.triggerInputTokens ?? COMPACTION_DEFAULT_TRIGGER;
  if (!Number.isInteger(trigger) || trigger < COMPACTION_MIN_TRIGGER)
    throw new RangeError(`the compaction trigger must be a whole number of at least ${COMPACTION_MIN_TRIGGER} input tokens, not ${trigger}`);
  return {
    type: 'compact_20260112',
    trigger: { type: 'input_tokens', value: trigger },
    ...(options.instructions ? { instructions: options.instructions } : {}),
    ...(options.pauseAfterCompaction !== undefined ? { pause_after_compaction: options.pauseAfterCompaction } : {}),
  };
}
