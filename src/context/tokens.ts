import type { ContentBlockParam, MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';

// Offline token estimates. They count the text a block carries, not its JSON framing, so a
// tool result's size is the size of what the tool returned; the benchmark and the cache
// simulator size their synthetic transcripts with these same functions.

/** Tokens assumed for a block the estimator cannot read as text (images, documents). */
export const OPAQUE_BLOCK_TOKENS = 1_600;

/**
 * Offline token estimate: about four characters a token, the usual rule of thumb for English
 * and JSON. Used where no API `usage` exists (the offline model, benchmarks, size budgets).
 */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

/** Estimated tokens of one content block: its text, tool input or result content. */
export function estimateBlockTokens(block: ContentBlockParam): number {
  switch (block.type) {
    case 'text':
      return estimateTokens(block.text);
    case 'tool_use':
      return estimateTokens(block.name) + estimateTokens(JSON.stringify(block.input ?? {}));
    case 'tool_result': {
      const content = block.content;
      if (content === undefined) return 0;
      if (typeof content === 'string') return estimateTokens(content);
      return content.reduce((sum, part) => sum + estimateBlockTokens(part as ContentBlockParam), 0);
    }
    case 'thinking':
      return estimateTokens(block.thinking);
    case 'redacted_thinking':
      return estimateTokens(block.data);
    default:
      return OPAQUE_BLOCK_TOKENS;
  }
}

/** Estimated tokens of one message. */
export function estimateMessageTokens(message: MessageParam): number {
  if (typeof message.content === 'string') return estimateTokens(message.content);
  return message.content.reduce((sum, block) => sum + estimateBlockTokens(block), 0);
}

/** Estimated tokens of a list of messages. */
export function estimateMessagesTokens(messages: readonly MessageParam[]): number {
  return messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
}

/** Estimated tokens of one tool definition: name, description and input schema. */
export function estimateToolTokens(tool: Tool): number {
  return estimateTokens(tool.name) + estimateTokens(tool.description ?? '') + estimateTokens(JSON.stringify(tool.input_schema));
}

/** Estimated tokens of the system prompt blocks. */
export function estimateSystemTokens(system: readonly TextBlockParam[]): number {
  return system.reduce((sum, block) => sum + estimateTokens(block.text), 0);
}

/** Estimated input tokens of a whole request: tools, system and messages. */
export function estimateRequestTokens(request: { system: readonly TextBlockParam[]; tools: readonly Tool[]; messages: readonly MessageParam[] }): number {
  return request.tools.reduce((sum, tool) => sum + estimateToolTokens(tool), 0) + estimateSystemTokens(request.system) + estimateMessagesTokens(request.messages);
}
