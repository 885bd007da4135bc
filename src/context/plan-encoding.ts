import type { LayoutMessage } from '../schemas/transcript-log';

// The compact wire form of a step plan's numbers. Every plan
// goes into the history, so the live tail's layout and the cleared results travel as short
// strings of entry numbers instead of arrays of objects and tool_use id strings. Numbers are
// written as runs — the distance from the last number written, then `.count` when several
// follow one another — because a skeleton's entries mostly climb by one. Pure.

/** A plan string that does not decode: the plan and the encoder disagree. */
export class PlanEncodingError extends Error {
  override name = 'PlanEncodingError';
}

const ROLE_CHAR: Record<string, string> = { user: 'u', assistant: 'a' };
const ROLE_OF: Record<string, LayoutMessage['role']> = { u: 'user', a: 'assistant' };

/** Writes `seqs` as runs after `prev`; returns the text and the last number written. */
function writeRuns(seqs: readonly number[], prev: number): { text: string; last: number } {
  const runs: string[] = [];
  let i = 0;
  while (i < seqs.length) {
    const start = seqs[i]!;
    let count = 1;
    while (i + count < seqs.length && seqs[i + count] === start + count) count += 1;
    runs.push(count > 1 ? `${start - prev}.${count}` : `${start - prev}`);
    prev = start + count - 1;
    i += count;
  }
  return { text: runs.join(','), last: prev };
}

/** Reads runs written by writeRuns after `prev`; returns the numbers and the last one. */
function readRuns(text: string, prev: number): { seqs: number[]; last: number } {
  const seqs: number[] = [];
  if (text === '') return { seqs, last: prev };
  for (const run of text.split(',')) {
    const match = /^(-?\d+)(?:\.(\d+))?$/.exec(run);
    if (!match) throw new PlanEncodingError(`"${run}" is not a run of entry numbers`);
    const start = prev + Number(match[1]);
    const count = match[2] === undefined ? 1 : Number(match[2]);
    if (count < 2 && match[2] !== undefined) throw new PlanEncodingError(`"${run}" counts fewer than two entries`);
    for (let k = 0; k < count; k++) seqs.push(start + k);
    prev = start + count - 1;
  }
  return { seqs, last: prev };
}

/** Entry numbers as runs, e.g. [4, 5, 6, 9] → "4.3,3". */
export function encodeSeqs(seqs: readonly number[]): string {
  return writeRuns(seqs, 0).text;
}

/** The entry numbers of an encodeSeqs string. */
export function decodeSeqs(text: string): number[] {
  return readRuns(text, 0).seqs;
}

/** A layout as one string: each message its role letter then its entries' runs, counted on from the message before, e.g. "u1a1.2u1". */
export function encodeLayout(layout: readonly LayoutMessage[]): string {
  let prev = 0;
  let text = '';
  for (const message of layout) {
    const role = ROLE_CHAR[message.role];
    if (!role) throw new PlanEncodingError(`a layout message has the role "${message.role}", which the Messages API's messages never have`);
    const written = writeRuns(message.seqs, prev);
    text += role + written.text;
    prev = written.last;
  }
  return text;
}

/** The layout of an encodeLayout string. */
export function decodeLayout(text: string): LayoutMessage[] {
  if (!/^([ua][-0-9.,]*)*$/.test(text)) throw new PlanEncodingError(`"${text.slice(0, 80)}" is not a layout`);
  const layout: LayoutMessage[] = [];
  let prev = 0;
  for (const [, role, runs] of text.matchAll(/([ua])([^ua]*)/g)) {
    const read = readRuns(runs!, prev);
    layout.push({ role: ROLE_OF[role!]!, seqs: read.seqs });
    prev = read.last;
  }
  return layout;
}
