import type { ContentBlock, ContentBlockParam, MessageParam, TextBlockParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { labelCustomerText } from './wire';

/** The reply's content as request params (drops response-only fields so it can be sent back). */
export function toParams(content: ContentBlock[]): ContentBlockParam[] {
  return content.map((block): ContentBlockParam => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'tool_use':
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      case 'thinking':
        return { type: 'thinking', thinking: block.thinking, signature: block.signature };
      case 'redacted_thinking':
        return { type: 'redacted_thinking', data: block.data };
      default:
        return block;
    }
  });
}

/** The tool_use blocks of a reply, in order. */
export function toolUses(content: ContentBlock[]): ToolUseBlock[] {
  return content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}

/** The reply's text, blocks joined by blank lines. */
export function replyText(content: ContentBlock[]): string {
  return content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n\n')
    .trim();
}

/** A customer's message as a text block, labelled so the model can tell it from tool output. */
export function customerText(message: string): TextBlockParam {
  return { type: 'text', text: labelCustomerText(message) };
}

/**
 * The user message that follows a tool-using reply: every tool_result first (the API requires
 * them to lead), then any customer messages that arrived meanwhile.
 */
export function toolResultMessage(results: ToolResultBlockParam[], customerMessages: string[]): MessageParam {
  return { role: 'user', content: [...results, ...customerMessages.map(customerText)] };
}

/** The text blocks of `messages`, one per line: what the conversation says, without tool traffic. */
export function textOfMessages(messages: readonly MessageParam[]): string {
  return messages.flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])))).join('\n');
}
