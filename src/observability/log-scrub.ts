import { redactSensitive } from '../memory/sensitive';

// Failure text in log lines. A failure's message is written by code, but code often quotes
// what it was given, and what an investigation is given is a customer's words: a tool that
// quotes the query it could not answer, a reply that would not parse, a desk's error body.
// Above debug level such text is cut down before it reaches a line: quoted prose is replaced by
// its size, and anything the memory privacy screen refuses (passwords, card numbers, codes,
// bank details, health asides) by what it was. What an engineer needs from a failure stays:
// the error's name, the words code wrote, HTTP statuses, ids and quoted identifiers.
// Pure.

/** Meta fields that hold a failure's text. Their strings, and every Error's message, are scrubbed. */
export const FAILURE_FIELDS: ReadonlySet<string> = new Set(['error', 'reason', 'problem', 'why', 'cause', 'failure']);

/** A failure text is cut to this many characters; the rest is counted, not shown. */
export const MAX_FAILURE_CHARS = 500;

// A quoted span: straight or curly double quotes, or single quotes that are not an apostrophe
// (no letter just outside them).
const QUOTED = /"([^"\n]*)"|“([^”\n]*)”|(?<![\p{L}\p{N}])'([^'\n]*)'(?![\p{L}\p{N}])/gu;
// Prose, not an identifier: what the span holds has whitespace in it.
const PROSE = /\s/;

/**
 * `text` as a log line may show it: quoted prose replaced by `[quoted: N chars]`, sentences
 * the privacy screen refuses by `[removed: what]`, and at most MAX_FAILURE_CHARS characters.
 */
export function scrubFailureText(text: string): string {
  const unquoted = text.replace(QUOTED, (span: string, ...groups: (string | undefined)[]) => {
    const inner = groups.slice(0, 3).find((g) => g !== undefined) ?? '';
    return PROSE.test(inner) ? `[quoted: ${inner.length} chars]` : span;
  });
  const screened = redactSensitive(unquoted);
  return screened.length > MAX_FAILURE_CHARS ? `${screened.slice(0, MAX_FAILURE_CHARS)}… [${screened.length - MAX_FAILURE_CHARS} more chars]` : screened;
}
