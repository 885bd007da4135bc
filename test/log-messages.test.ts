import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { highestSeq, messagesOfEntries, wholeTranscript } from '../src/context/log-messages';
import { numberBlocks } from '../src/context/references';

// A run kept by reference carries a skeleton of previews; the readers that show tool results
// rebuild its whole transcript from the transcript log's entries.

const big = 'Tracking scan at the depot, bag sealed. '.repeat(20);
const transcript: MessageParam[] = [
  { role: 'user', content: 'Order 5102 never came.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_tracking_events', input: { order_id: '5102' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: big }] },
  { role: 'assistant', content: [{ type: 'text', text: 'It was left at the door.' }] },
  { role: 'user', content: 'It was not.' },
];

test('the log entries of a transcript give back its messages, one per run of blocks of one role, other kinds left out', () => {
  const { entries } = numberBlocks(transcript, 1);
  const withStep = [...entries, { seq: 99, kind: 'step' as const, body: { step: 1 }, tokens: 0 }];
  assert.deepEqual(messagesOfEntries(withStep.reverse()), [
    { role: 'user', content: [{ type: 'text', text: 'Order 5102 never came.' }] },
    transcript[1],
    transcript[2],
    transcript[3],
    { role: 'user', content: [{ type: 'text', text: 'It was not.' }] },
  ]);
});

test('a skeleton with its compacted prefix gone comes back whole: the prefix from the log, each numbered block its whole body, unnumbered blocks as they are', () => {
  const numbered = numberBlocks(transcript.slice(0, 4), 1);
  // Compaction dropped the first two messages; the customer's newest words are not numbered yet.
  const skeleton = [...numbered.messages.slice(2), transcript[4]!];
  const preview = (skeleton[0]!.content as { content: string }[])[0]!.content;
  assert.ok(preview.length < big.length, 'the skeleton holds a preview');
  assert.equal(highestSeq(skeleton), 4);
  const whole = wholeTranscript(skeleton, numbered.entries);
  assert.deepEqual(whole, [
    { role: 'user', content: [{ type: 'text', text: 'Order 5102 never came.' }] },
    transcript[1],
    transcript[2],
    transcript[3],
    { role: 'user', content: 'It was not.' },
  ]);
  // A numbered block the log does not have keeps its preview rather than vanishing.
  assert.equal((wholeTranscript(skeleton, numbered.entries.slice(0, 2))[2]!.content as { content: string }[])[0]!.content, preview);
});
