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

/** Why an identifier cannot be used as sent, or undefined when it can. */
export function idProblem(value: string): string | undefined {
  if (!value.trim()) return 'must not be blank or whitespace only';
  if (value.includes('\u0000')) return 'contains a NUL byte (\\u0000), which Postgres cannot store';
  if (CONTROL_IN_ID.test(value)) return 'contains a control character';
  if (LONE_SURROGATE.test(value)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

/** True when text shows nothing at all: empty, whitespace or invisible characters only. */
export function isInvisible(value: string): boolean {
  return INVISIBLE.test(value);
}
