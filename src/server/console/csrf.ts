import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../http';
import type { ConsoleSecrets } from './secrets';
import type { Session } from './session';

// Every form the console serves carries the session's CSRF token in a hidden field; every POST
// must send it back. A browser also says where a form came from (Origin): one from another
// site is refused before the token is even compared. SameSite=Strict already keeps the cookie
// off cross-site requests; this is the second lock.
// The token is an HMAC of the session's token under the console's key, not a stored secret:
// every replica computes the same one, it cannot be made without the key, and it dies with the
// session. One made under a payload key still in the keyring is accepted, so a key rotation
// does not refuse the forms already open.

/** The hidden field's name. */
export const CSRF_FIELD = 'csrf';

/** True when two tokens are equal, compared in constant time. */
function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Refuses (403) a form post whose Origin is another site's. */
export function checkOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new HttpError(403, 'the form came from an origin that is not a URL; reload the console and try again');
  }
  if (host !== req.headers.host) throw new HttpError(403, 'the form came from another site; casework only accepts its own forms');
}

/** The CSRF token of the session whose cookie holds `sessionToken`, under `key` (a console key's csrf). */
export function csrfTokenOf(key: Buffer, sessionToken: string): string {
  return createHmac('sha256', key).update(`csrf:${sessionToken}`, 'utf8').digest('base64url');
}

/** Refuses (403) a form without the session's CSRF token. */
export function checkCsrf(session: Session, form: URLSearchParams, secrets: ConsoleSecrets): void {
  const sent = form.get(CSRF_FIELD) ?? '';
  const valid = [...secrets.byId.values()].some((key) => sent !== '' && sameToken(sent, csrfTokenOf(key.csrf, session.id)));
  if (!valid) {
    throw new HttpError(403, 'the form is missing its security token or the token is stale; reload the page and submit again');
  }
}
