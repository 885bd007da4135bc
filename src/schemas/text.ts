// What text casework accepts at its gates: only what Postgres stores as sent. A NUL byte
// fails every insert ("invalid byte sequence for encoding UTF8: 0x00") and a lone UTF-16
// surrogate is silently replaced on the way to UTF-8, so either, accepted at the gate, fails or
// alters the run later, far from the caller who could fix it. Pure: the workflow may use it.

/** C0 control characters other than tab, newline and carriage return (line breaks in mail are CRLF). */
// eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** Any control character: an id has no line breaks or tabs either. */
// eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
const CONTROL_IN_ID = /[\u0000-\u001F\u007F]/;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Characters that show nothing: whitespace, format characters (zero-width space and joiners,
 * word joiner, byte-order mark, bidi marks, soft hyphen), and the Hangul and Braille blanks.
 */
const INVISIBLE = /^[\s\p{Cf}\u115F\u1160\u3164\uFFA0\u2800]*$/u;

/** Why a piece of free text cannot be stored as sent, or undefined when it can. */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'contains a NUL byte (\\u0000), which Postgres cannot store';
  if (CONTROL_IN_TEXT.test(value)) return 'contains a control character (only tab and line breaks are allowed)';
  if (LONE_SURROGATE.test(value)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

/**
 * Characters a person cannot see or that reorder what they see: format characters (zero-width
 * space and joiners, word joiner, byte-order mark, bidi embeddings, overrides and isolates, soft
 * hyphen, tag characters), the combining grapheme joiner, variation selectors, the Hangul and
 * Braille blanks, and every space but the plain one. Two ids that differ only by these look the
 * same to an operator, so an id may hold none of them.
 */
const UNSEEN_IN_ID = /[\p{Cf}\p{Zl}\p{Zp}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u115F\u1160\u3164\uFFA0\u2800]|\p{Variation_Selector}|\u034F/u;

/** Why an identifier cannot be used as sent, or undefined when it can. */
export function idProblem(value: string): string | undefined {
  if (!value.trim()) return 'must not be blank or whitespace only';
  if (value.includes('\u0000')) return 'contains a NUL byte (\\u0000), which Postgres cannot store';
  if (CONTROL_IN_ID.test(value)) return 'contains a control character';
  if (LONE_SURROGATE.test(value)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  const unseen = UNSEEN_IN_ID.exec(value);
  if (unseen)
    return `contains an invisible, bidi or non-plain space character (U+${unseen[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}), which a person reading the id cannot see`;
  if (value !== value.trim()) return 'starts or ends with a space';
  return undefined;
}

/** True when text shows nothing at all: empty, whitespace or invisible characters only. */
export function isInvisible(value: string): boolean {
  return INVISIBLE.test(value);
}
