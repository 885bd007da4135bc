import type { IncomingMessage } from 'node:http';
import { HttpError, readBodyText } from '../http';

// The console's forms arrive as application/x-www-form-urlencoded bodies: small, in POST
// bodies so nothing a customer said or is ever lands in a URL or a log line.

/** Largest form body accepted, in bytes: a reason or a corrected note is a few sentences. */
export const MAX_FORM_BYTES = 16 * 1024;

/** Reads a urlencoded form body of at most `limit` bytes; 413 when larger, 415 when not a form. */
export async function readForm(req: IncomingMessage, limit = MAX_FORM_BYTES): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new HttpError(415, 'the console accepts its own HTML forms only (application/x-www-form-urlencoded)');
  }
  return new URLSearchParams(await readBodyText(req, limit, 'the form'));
}

/** A required text field, trimmed and at most `max` characters, or 400 naming it. */
export function field(form: URLSearchParams, name: string, label: string, max = 2000): string {
  const value = (form.get(name) ?? '').trim();
  if (!value) throw new HttpError(400, `${label} is required`);
  if (value.length > max) throw new HttpError(400, `${label} is at most ${max} characters`);
  return value;
}
