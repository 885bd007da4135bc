// The size cap every tool result shares with the model: past it the text is cut, and the cut
// says so in words, with what the whole was, so the model asks for less rather than reasons
// over a fragment it takes for the whole.

/** Characters of one tool result the model is sent at most (about 1,500 tokens). */
export const MAX_RESULT_CHARS = 6_000;

/** What follows a result cut at the cap. */
export function cutMarker(shown: number, total: number): string {
  return `\n[cut: this result is ${total} characters long and only the first ${shown} are shown; ask for less (a narrower question, or the next page) to see more]`;
}

/** `text` as the model may read it: whole when within `max` characters, else its start and the cut marker. */
export function capResult(text: string, max = MAX_RESULT_CHARS): string {
  if (text.length <= max) return text;
  // Never end on half of a surrogate pair: the cut would not be valid text.
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}${cutMarker(end, text.length)}`;
}
