import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { BetaContextManagementConfig } from '@anthropic-ai/sdk/resources/beta/messages/messages';

/** Tool results kept word for word by clearing (docs/architecture.md: KEEP_RECENT). */
export const KEEP_RECENT = 3;

import { STUB } from './wire';

/** Steps between clearing batches: clearing rewrites the prefix, so it is done rarely and in bulk. */
export const CLEAR_EVERY = 10;

/** The prompt cache's lifetime (the API's default ephemeral TTL is five minutes). */
export const CACHE_TTL_MS = 5 * 60_000;

/** The tool_use_id of every tool result in the transcript, oldest first. */
export function toolResultIds(messages: readonly MessageParam[]): string[] {
  const ids: string[] = [];
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_result') ids.push(block.tool_use_id);
  }
  return ids;
}

/** The ids a clearing batch clears: every tool result but the last `keepRecent`. */
export function idsToClear(messages: readonly MessageParam[], keepRecent = KEEP_RECENT): string[] {
  const ids = toolResultIds(messages);
  return ids.slice(0, Math.max(0, ids.length - Math.max(0, keepRecent)));
}

/**
 * A copy of the transcript in which the tool results named in `clearedIds` carry the STUB
 * instead of their content. Each keeps its tool_use_id and is_error, so every tool request
 * still has its matching result; the input is never mutated (the workflow keeps everything).
 */
export function applyClearing(messages: readonly MessageParam[], clearedIds: Iterable<string>): MessageParam[] {
  const cleared = new Set(clearedIds);
  return messages.map((message): MessageParam => {
    if (typeof message.content === 'string') return { ...message };
    const content = message.content.map((block): ContentBlockParam =>
      block.type === 'tool_result' && cleared.has(block.tool_use_id) ? { ...block, content: STUB } : { ...block },
    );
    // Same role, same block types: only result contents changed.
    return { ...message, content } as MessageParam;
  });
}

/** The clear_old_results: all but the last `keepRecent` results replaced, as a copy. */
export function clearOldResults(messages: readonly MessageParam[], keepRecent = KEEP_RECENT): MessageParam[] {
  return applyClearing(messages, idsToClear(messages, keepRecent));
}

/** Why a clearing batch runs now: its turn in the schedule, the cache has gone cold anyway, or the context passed its budget. */
export type ClearingTrigger = 'batch' | 'cold_cache' | 'over_budget';

/** The schedule's inputs; times are workflow time in epoch milliseconds, passed in (no clock here). */
export interface ClearingSchedule {
  /** The step about to be sent (1 for the first model call). */
  step: number;
  /** The step at which the last batch ran, 0 if none has. */
  lastBatchStep: number;
  /** Steps between batches; 0 turns the schedule off. */
  clearEvery: number;
  /** When the previous model call was made, null before the first. */
  lastModelCallAt: number | null;
  now: number;
  cacheTtlMs: number;
  /** Optional budget: also batch when this step would send more than `clearAboveTokens`. */
  clearAboveTokens?: number;
  /** Tokens this step would send with the current cleared set (needed with clearAboveTokens). */
  contextTokens?: number;
}

/**
 * Whether a clearing batch runs before this step. Clearing breaks the prompt cache from the
 * first changed result onwards, so it runs every `clearEvery` steps, not every call; and also
 * whenever more than the cache TTL has passed since the last call, because then the whole
 * prefix is paid for again anyway and clearing costs nothing extra. With a token budget it
 * also runs when the context would pass it, which bounds the peak without clearing every call.
 */
export function clearingTrigger(schedule: ClearingSchedule): ClearingTrigger | null {
  const { step, lastBatchStep, clearEvery, lastModelCallAt, now, cacheTtlMs } = schedule;
  if (clearEvery > 0 && step - lastBatchStep >= clearEvery) return 'batch';
  if (lastModelCallAt !== null && now - lastModelCallAt > cacheTtlMs) return 'cold_cache';
  const { clearAboveTokens, contextTokens } = schedule;
  if (clearAboveTokens !== undefined && contextTokens !== undefined && contextTokens > clearAboveTokens) return 'over_budget';
  return null;
}

/** The request field for the API's own context editing, used instead of hand edits when thinking is on. */
export type ContextManagement = BetaContextManagementConfig;

/** Defaults for context editing: clear past 30,000 input tokens, and only when it frees 10,000 (a batch, not a trickle). */
export const CONTEXT_EDIT_DEFAULTS = { triggerInputTokens: 30_000, clearAtLeastTokens: 10_000 } as const;

/**
 * The `context_management` field (beta `context-management-2025-06-27`) that makes the API
 * clear old tool results itself, keeping the last `keepRecent`. With extended thinking the
 * provider knows how to keep earlier reasoning blocks valid, which hand edits cannot.
 * `clear_at_least` makes each clearing big enough to be worth the cache it breaks.
 */
export function contextManagementEdits(
  keepRecent = KEEP_RECENT,
  options: { triggerInputTokens?: number; clearAtLeastTokens?: number; excludeTools?: string[] } = {},
): ContextManagement {
  const trigger = options.triggerInputTokens ?? CONTEXT_EDIT_DEFAULTS.triggerInputTokens;
  const atLeast = options.clearAtLeastTokens ?? CONTEXT_EDIT_DEFAULTS.clearAtLeastTokens;
  return {
    edits: [
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'input_tokens', value: trigger },
        keep: { type: 'tool_uses', value: keepRecent },
        clear_at_least: { type: 'input_tokens', value: atLeast },
        ...(options.excludeTools?.length ? { exclude_tools: [...options.excludeTools] } : {}),
      },
    ],
  };
}
