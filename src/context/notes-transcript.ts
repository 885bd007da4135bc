import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { CUSTOMER_PREFIX, ENTRY_MARK } from './wire';

// What the summariser reads when compaction turns the older part of a conversation into case
// notes: the conversation as plain text, one marked entry per block.

function asText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (b && typeof b === 'object' && 'text' in b ? String((b as { text: unknown }).text) : '')).join('\n');
}

// An entry line inside content must not pass for a header.
const unmark = (text: string) => text.replace(/^### /gm, '## ');

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/**
 * The conversation as plain text for the summariser, one entry per block in order, with tool
 * results named by their tool. Thinking blocks are left out: they are reasoning, not facts.
 */
export function renderTranscriptForNotes(messages: readonly MessageParam[]): string {
  const names = new Map<string, string>();
  const entries: string[] = [];
  for (const message of messages) {
    for (const block of blocksOf(message)) {
      if (block.type === 'text') {
        const customer = message.role === 'user' && block.text.startsWith(CUSTOMER_PREFIX);
        const who = message.role === 'assistant' ? 'assistant' : customer ? 'customer' : 'user';
        entries.push(`${ENTRY_MARK}${who}\n${unmark(customer ? block.text.slice(CUSTOMER_PREFIX.length) : block.text)}`);
      } else if (block.type === 'tool_use') {
        names.set(block.id, block.name);
        entries.push(`${ENTRY_MARK}tool call ${block.name} (${block.id})\n${unmark(JSON.stringify(block.input ?? {}))}`);
      } else if (block.type === 'tool_result') {
        const name = names.get(block.tool_use_id) ?? 'unknown_tool';
        entries.push(`${ENTRY_MARK}tool result ${name} (${block.tool_use_id})${block.is_error ? ' error' : ''}\n${unmark(asText(block.content))}`);
      }
    }
  }
  return entries.join('\n');
}
