import type { ContentBlock, MessageParam, StopReason, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';

/** Token usage of one model call, in the Messages API's own snake_case fields. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** USD prices. Cache writes and reads are priced as multiples of the uncached input price, as the API bills them. */
export interface PriceTable {
  input_per_mtok: number;
  output_per_mtok: number;
  cache_write_multiplier: number;
  cache_read_multiplier: number;
  /** One-hour cache writes (cache_control ttl "1h"); absent means the API's 2x. */
  cache_write_1h_multiplier?: number;
}

/** What the model activity is asked to do; `purpose` picks the prompt family in the offline model. */
export type ModelPurpose = 'investigate' | 'compact' | 'bulk_read' | 'supersede';

/** One Messages API request, JSON-safe so it can cross the workflow/activity boundary. */
export interface ModelRequest {
  purpose: ModelPurpose;
  system: TextBlockParam[];
  tools: Tool[];
  messages: MessageParam[];
  max_tokens: number;
  /** When set, the reply must be a JSON object matching this schema (structured output). */
  output_schema?: Record<string, unknown>;
  /** Extra top-level request fields, e.g. `thinking` or `context_management`. */
  extra?: Record<string, unknown>;
}

/** One Messages API reply: content blocks, stop reason and usage, exactly as the API shapes them. */
export interface ModelReply {
  id: string;
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  usage: TokenUsage;
}

/** Zero usage, the identity for adding usages. */
export const NO_USAGE: TokenUsage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

/** Adds two usages field by field. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
    cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens,
  };
}
