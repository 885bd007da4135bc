import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { LogEntry } from '../schemas/transcript-log';
import { blocksOf, bodyOf } from './references';

// Whole messages back from the transcript log, for the readers that need every word of a run
// kept by reference: the refund note's evidence, the console's inbox and timeline. Pure.

/**
 * The messages of the log's message entries, in entry order: consecutive blocks of one role
 * make one message, as the transcript appends them. Other kinds of entry are left out.
 */
export function messagesOfEntries(entries: readonly LogEntry[]): MessageParam[] {
  const messages: { role: MessageParam['role']; content: ContentBlockParam[] }[] = [];
  for (const entry of [...entries].sort((a, b) => a.seq - b.seq)) {
    if (entry.kind !== 'message' || !entry.role || entry.role === 'system') continue;
    const last = messages[messages.length - 1];
    if (last && last.role === entry.role) last.content.push(entry.body as ContentBlockParam);
    else messages.push({ role: entry.role, content: [entry.body as ContentBlockParam] });
  }
  return messages as MessageParam[];
}

/** The highest entry number in a skeleton; 0 when none of its blocks is numbered yet. */
export function highestSeq(messages: readonly MessageParam[]): number {
  return messages.reduce((max, m) => blocksOf(m).reduce((n, b) => Math.max(n, b.seq ?? 0), max), 0);
}

/** The lowest entry number in a skeleton; null when none of its blocks is numbered yet. */
function lowestSeq(messages: readonly MessageParam[]): number | null {
  let low: number | null = null;
  for (const m of messages) for (const b of blocksOf(m)) if (b.seq !== undefined && (low === null || b.seq < low)) low = b.seq;
  return low;
}

/**
 * The whole transcript of a run kept by reference: the messages compacted out of its skeleton
 * (entries numbered before the skeleton's first), then the skeleton with every numbered block
 * replaced by its whole body. `entries` are the log's message entries plus those the run has
 * numbered but not written yet (its pending queue); a block numbered but found in neither keeps
 * its preview. Blocks not numbered yet are whole in the skeleton already.
 */
export function wholeTranscript(skeleton: readonly MessageParam[], entries: readonly LogEntry[]): MessageParam[] {
  const bySeq = new Map(entries.filter((e) => e.kind === 'message').map((e) => [e.seq, e]));
  const first = lowestSeq(skeleton);
  const prefix = messagesOfEntries([...bySeq.values()].filter((e) => first === null || e.seq < first));
  const tail = skeleton.map((message) =>
    typeof message.content === 'string'
      ? message
      : ({
          role: message.role,
          content: blocksOf(message).map((block) => {
            const whole = block.seq === undefined ? undefined : bySeq.get(block.seq);
            return whole ? (whole.body as ContentBlockParam) : bodyOf(block);
          }),
        } as MessageParam),
  );
  return [...prefix, ...tail];
}
