import type { Pool } from 'pg';
import { z } from 'zod';
import type { ApprovalAgeSource, ApprovalAges } from './metrics';

// How long refund requests have waited for a person, from the refund trail (refund_requests),
// not from this process's own events: it is right across restarts and replicas, and the row's
// requested_at is the very clock the workflow's reminder and automatic denial count from.
// The trail is scoped per customer by row-level security; this count spans every customer, so
// it runs with row_security off, which Postgres allows only to a role that bypasses it (the
// admin role that migrates). Any other role gets an error, counted, never a silent zero.

const AgesRow = z.object({ waiting: z.number().int(), oldest_seconds: z.number(), past_reminder: z.number().int() });

/** The statement behind the approval-age gauges; $1 is the reminder delay in seconds. */
export const APPROVAL_AGES_SQL = `SELECT count(*)::int AS waiting,
       COALESCE(EXTRACT(EPOCH FROM now() - min(requested_at)), 0)::float8 AS oldest_seconds,
       (count(*) FILTER (WHERE requested_at < now() - make_interval(secs => $1)))::int AS past_reminder
  FROM refund_requests
 WHERE status = 'awaiting_approval' AND expires_at > now()`;

/** Reads the approval ages with `admin`, at most once per `refreshMs`. */
export function approvalAgesFrom(admin: Pool, options: { reminderSeconds: number; refreshMs: number }): ApprovalAgeSource {
  let last: { at: number; ages: ApprovalAges } | undefined;
  let inflight: Promise<ApprovalAges> | undefined;
  const refresh = async (): Promise<ApprovalAges> => {
    const client = await admin.connect();
    try {
      await client.query('BEGIN READ ONLY');
      await client.query('SET LOCAL row_security = off');
      await client.query("SET LOCAL statement_timeout = '3s'");
      const { rows } = await client.query(APPROVAL_AGES_SQL, [options.reminderSeconds]);
      await client.query('COMMIT');
      const row = AgesRow.parse(rows[0]);
      const ages = { waiting: row.waiting, oldestSeconds: row.oldest_seconds, pastReminder: row.past_reminder };
      last = { at: Date.now(), ages };
      return ages;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
  return async () => {
    if (last && Date.now() - last.at < options.refreshMs) return last.ages;
    inflight ??= refresh().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
}
