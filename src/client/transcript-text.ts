import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { resultText } from '../context/references';
import { customerWords } from '../context/wire';
import type { LogEntry } from '../schemas/transcript-log';

// `casework transcript`'s text: every entry of the conversation in order, its words unchanged.

/** Who wrote a block, as an operator reads it. */
function headerOf(entry: LogEntry, block: ContentBlockParam, toolNames: Map<string, string>): string {
  const at = `#${entry.seq}`;
  switch (block.type) {
    case 'text':
      if (entry.role === 'assistant') return `${at} assistant`;
      return customerWords(block.text) !== undefined ? `${at} customer` : `${at} casework (to the model)`;
    case 'tool_use':
      return `${at} tool call ${block.name} (${block.id})`;
    case 'tool_result':
      return `${at} tool result ${toolNames.get(block.tool_use_id) ?? 'unknown tool'} (${block.tool_use_id})${block.is_error ? ' error' : ''}`;
    case 'thinking':
    case 'redacted_thinking':
      return `${at} assistant ${block.type}`;
    default:
      return `${at} ${entry.role} ${block.type}`;
  }
}

function bodyText(block: ContentBlockParam): string {
  switch (block.type) {
    case 'text':
      return customerWords(block.text) ?? block.text;
    case 'tool_use':
      return JSON.stringify(block.input ?? {});
    case 'tool_result':
      return resultText(block.content);
    case 'thinking':
      return block.thinking;
    case 'redacted_thinking':
      return '(redacted)';
    default:
      return JSON.stringify(block);
  }
}

/** The message entries as text: a header line per entry, then its words exactly as written. */
export function transcriptLines(entries: readonly LogEntry[]): string[] {
  const toolNames = new Map<string, string>();
  const lines: string[] = [];
  for (const entry of entries) {
    if (entry.kind !== 'message') continue;
    const block = entry.body as ContentBlockParam;
    if (block.type === 'tool_use') toolNames.set(block.id, block.name);
    lines.push(headerOf(entry, block, toolNames), bodyText(block), '');
  }
  return lines;
}
