import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { z } from 'zod';
import { mapPgError } from '../../db/errors';
import type { Principal } from '../auth';
import { csrfTokenOf } from './csrf';
import type { ConsoleSecrets } from './secrets';
import { cookiesOf, randomToken, SESSION_COOKIE, type Flash, type Session, type SessionStore } from './session';

// Console sessions in Postgres (migrations/026_console_sessions.sql): any console replica signs
// a person in, any other serves their next request, and signing out on one ends the session on
// all. Only the SHA-256 of the cookie's token is stored. Every request touches `last_seen` in
// the same statement that reads the row, so a session costs one round trip per request.

/** How long sessions last: idle, and at most from sign-in. */
export interface SessionLifetimes {
  idleMs: number;
  absoluteMs: number;
}

const PrincipalJson = z.object({
  label: z.string(),
  anyCustomer: z.boolean(),
  customers: z.array(z.string()),
  approvers: z.array(z.string()),
  support: z.boolean(),
});

const FlashJson = z.object({ kind: z.enum(['ok', 'error']), text: z.string() });

const SessionRow = z.object({
  principal: PrincipalJson,
  person: z.string(),
  last_seen: z.date(),
  expires_at: z.date(),
  flash: FlashJson.nullable(),
});

/** A cookie token's shape: what randomToken() makes; anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest();

function principalJson(principal: Principal): z.infer<typeof PrincipalJson> {
  return { ...principal, customers: [...principal.customers], approvers: [...principal.approvers] };
}

function principalOf(json: z.infer<typeof PrincipalJson>): Principal {
  return { ...json, customers: new Set(json.customers), approvers: new Set(json.approvers) };
}

async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    // A Postgres outage answers 503 (retry), never a signed-out page: the session is still there.
    throw mapPgError(error);
  }
}

/** Sessions kept in Postgres; `now` is injectable for tests of expiry. */
export function postgresSessions(pool: Pool, options: { secrets: ConsoleSecrets; lifetimes: SessionLifetimes; now?: () => number }): SessionStore {
  const { secrets, lifetimes } = options;
  const now = options.now ?? Date.now;
  const sessionOf = (id: string, row: z.infer<typeof SessionRow>): Session => ({
    id,
    principal: principalOf(row.principal),
    person: row.person,
    csrf: csrfTokenOf(secrets.current.csrf, id),
    lastSeen: row.last_seen.getTime(),
    expiresAt: row.expires_at.getTime(),
    ...(row.flash ? { flash: row.flash } : {}),
  });
  return {
    async create(principal, person) {
      const at = now();
      const id = randomToken();
      const expiresAt = at + lifetimes.absoluteMs;
      await run(async () => {
        // Sweeping here keeps the table to the sessions that can still be used, without a job.
        await pool.query('DELETE FROM console_sessions WHERE expires_at <= $1 OR last_seen <= $2', [new Date(at), new Date(at - lifetimes.idleMs)]);
        await pool.query(
          `INSERT INTO console_sessions (token_sha256, principal, person, created_at, last_seen, expires_at)
           VALUES ($1, $2, $3, $4, $4, $5)`,
          [hashOf(id), JSON.stringify(principalJson(principal)), person, new Date(at), new Date(expiresAt)],
        );
      });
      return { id, principal, person, csrf: csrfTokenOf(secrets.current.csrf, id), lastSeen: at, expiresAt };
    },
    async of(req, { takeFlash = false } = {}) {
      const id = cookiesOf(req)[SESSION_COOKIE];
      if (!id || !TOKEN_SHAPE.test(id)) return undefined;
      const at = now();
      const { rows } = await run(() =>
        pool.query(
          `WITH live AS (
             SELECT token_sha256, flash FROM console_sessions
             WHERE token_sha256 = $1 AND expires_at > $2 AND last_seen > $3
             FOR UPDATE
           )
           UPDATE console_sessions s
              SET last_seen = GREATEST(s.last_seen, $2), flash = CASE WHEN $4 THEN NULL ELSE s.flash END
             FROM live
            WHERE s.token_sha256 = live.token_sha256
          RETURNING s.principal, s.person, s.last_seen, s.expires_at, live.flash`,
          [hashOf(id), new Date(at), new Date(at - lifetimes.idleMs), takeFlash],
        ),
      );
      const row: unknown = rows[0];
      return row === undefined ? undefined : sessionOf(id, SessionRow.parse(row));
    },
    async end(id) {
      await run(() => pool.query('DELETE FROM console_sessions WHERE token_sha256 = $1', [hashOf(id)]));
    },
    async flash(id, flash: Flash) {
      await run(() => pool.query('UPDATE console_sessions SET flash = $2 WHERE token_sha256 = $1', [hashOf(id), JSON.stringify(flash)]));
    },
  };
}
