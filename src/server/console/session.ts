import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Principal } from '../auth';

// Console sessions: a signed-in person's principal (from the API key they signed in with, which
// is never kept), their name for the audit trail and approvals, and the session's CSRF token.
// Kept in Postgres (session-store.ts), so every console replica sees the same sessions. The
// cookie carries only a random token: HttpOnly, SameSite=Strict, and Secure over TLS.

/** The session cookie's name. */
export const SESSION_COOKIE = 'casework_console';

/** One signed-in person. */
export interface Session {
  /** The cookie's random token: kept in the browser, only its hash on the server. */
  id: string;
  principal: Principal;
  /** Who the person said they are; the approver name when the key decides as one person. */
  person: string;
  /** The CSRF token the session's forms carry (csrf.ts). */
  csrf: string;
  lastSeen: number;
  /** When the session ends however busy it is (ms since the epoch). */
  expiresAt: number;
  /** One message for the next page (what the last form did), then cleared. */
  flash?: { kind: 'ok' | 'error'; text: string };
}

/** What the next page says about the last form. */
export type Flash = NonNullable<Session['flash']>;

/** Where sessions live. */
export interface SessionStore {
  create(principal: Principal, person: string): Promise<Session>;
  /**
   * The session a request's cookie names, if it exists, is not idle too long and has not
   * outlived its absolute lifetime; touching it. With `takeFlash` its message is handed over
   * and cleared (a page will show it).
   */
  of(req: IncomingMessage, options?: { takeFlash?: boolean }): Promise<Session | undefined>;
  /** Ends the session on every replica. */
  end(id: string): Promise<void>;
  /** Keeps one message for the session's next page. */
  flash(id: string, flash: Flash): Promise<void>;
}

/** The cookies of a request, by name (the first of each). */
export function cookiesOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (name && !(name in out)) out[name] = pair.slice(eq + 1).trim();
  }
  return out;
}

/** True when the request reached casework over TLS (directly, or through a proxy that says so). */
export function overTls(req: IncomingMessage): boolean {
  return Boolean((req.socket as TLSSocket).encrypted) || req.headers['x-forwarded-proto'] === 'https';
}

/** The Set-Cookie value for a session id (or an expired one to sign out). */
export function sessionCookie(id: string | null, secure: boolean): string {
  const parts = [`${SESSION_COOKIE}=${id ?? ''}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict'];
  if (id === null) parts.push('Max-Age=0');
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** A random token of `bytes` bytes, URL-safe. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
