import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

// Signing in to the codec server from a browser. The Temporal web UI sends no Authorization
// header where it has no single sign-on (a dev server, a plain compose deployment), but with
// "Include cross-origin credentials" on (TEMPORAL_CODEC_INCLUDE_CREDENTIALS=true) its calls
// carry the codec server's cookies. So an operator signs in once at the codec server's own page
// with its token, and the cookie it sets stands for the token. The cookie is signed with a key
// derived from the token, so every replica accepts it without shared state, and changing the
// token signs everyone out.

/** The codec server's session cookie. */
export const CODEC_COOKIE = 'casework_codec';

/** How long a codec sign-in lasts. */
export const CODEC_SESSION_SECONDS = 12 * 60 * 60;

const b64url = (bytes: Buffer) => bytes.toString('base64url');

/** The signing key: derived from the token, never the token itself. */
function signingKey(token: string): Buffer {
  return createHash('sha256').update(`casework codec session\0${token}`).digest();
}

function mac(token: string, expires: number): Buffer {
  return createHmac('sha256', signingKey(token)).update(`v1.${expires}`).digest();
}

/** A session value for `token` that expires `CODEC_SESSION_SECONDS` after `now` (ms). */
export function sessionValue(token: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + CODEC_SESSION_SECONDS;
  return `v1.${expires}.${b64url(mac(token, expires))}`;
}

/** Why a session value does not stand for `token`, or undefined when it does. */
export function sessionProblem(value: string, token: string, now = Date.now()): 'malformed' | 'expired' | 'forged' | undefined {
  const match = /^v1\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!match) return 'malformed';
  const expires = Number(match[1]);
  const given = Buffer.from(match[2]!, 'base64url');
  const expected = mac(token, expires);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
  return expires * 1000 <= now ? 'expired' : undefined;
}

/** The codec session cookie a request carries, if any. */
export function sessionCookieOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === CODEC_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** True when the request came over TLS, directly or through a proxy that says so. */
function overTls(req: IncomingMessage): boolean {
  return Boolean((req.socket as TLSSocket).encrypted) || req.headers['x-forwarded-proto'] === 'https';
}

/**
 * The Set-Cookie header for a session (or, with null, one that ends it). SameSite=Lax: the web
 * UI on the same host (another port is the same site) sends it with its codec calls; a page of
 * another site never does.
 */
export function codecCookie(req: IncomingMessage, value: string | null): string {
  const parts = [`${CODEC_COOKIE}=${value ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${value ? CODEC_SESSION_SECONDS : 0}`];
  if (overTls(req)) parts.push('Secure');
  return parts.join('; ');
}

/** The origin the request was addressed to (its own page's origin), from the Host header. */
export function ownOrigin(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  return host ? `${overTls(req) ? 'https' : 'http'}://${host}` : undefined;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The sign-in page: one field, the codec server's token; `note` says what happened last. */
export function signInPage(options: { note?: string; signedIn?: boolean; namespace?: string }): string {
  const note = options.note ? `<p role="status">${escape(options.note)}</p>` : '';
  const form = options.signedIn
    ? `<p>This browser is signed in to the codec server. In the Temporal web UI, open the Codec Server setting, give this server's address and turn on
  "Include cross-origin credentials"; the UI's calls then carry this sign-in.</p>
  <form method="post" action="sign-out"><button type="submit">Sign out</button></form>`
    : `<form method="post" action="sign-in">
    <label for="token">Codec server token (CASEWORK_CODEC_SERVER_TOKEN)</label>
    <input type="password" id="token" name="token" autocomplete="current-password" required>
    <button type="submit">Sign in</button>
  </form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>casework codec server</title></head>
<body>
  <h1>casework codec server${options.namespace ? ` · namespace ${escape(options.namespace)}` : ''}</h1>
  ${note}
  ${form}
</body></html>`;
}

/** Headers for the sign-in page: nothing runs, nothing frames it, nothing is cached. */
export const SIGN_IN_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  // Not no-referrer: under it a browser sends "Origin: null" with the form, and the sign-in could not tell its own page from another.
  'referrer-policy': 'same-origin',
});
