import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { z } from 'zod';
import { ConflictError, NotFoundError } from '../errors';
import type { BodyCodec, LogEntry, LogKind } from '../schemas/transcript-log';

// The transcript log (migrations/021_transcript_log.sql): every entry of an investigation
// written once, its body encoded by the payload codec (encrypted), read back by number; and
// beside it (migrations/022_model_replies.sql) each step's reply, kept once it is paid for.

const Row = z.object({
  seq: z.number().int(),
  kind: z.enum(['message', 'memory', 'agent_notes', 'case_notes', 'step']),
  role: z.enum(['user', 'assistant', 'system']).nullable(),
  body: z.instanceof(Buffer),
  sha256: z.string(),
  tokens: z.number().int(),
});

const KeptReply = z.object({ body: z.instanceof(Buffer), sha256: z.string() });

/** One model call, as Temporal names it: every attempt of the activity shares these. */
export interface ReplyKey {
  workflowId: string;
  runId: string;
  activityId: string;
}

/** An entry named by a plan is not in the log (another database, or deleted by retention). */
export class MissingEntryError extends NotFoundError {}

/** A different body was written for an entry already in the log: a bug, never overwritten. */
export class EntryConflictError extends ConflictError {}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
/** The body as JSON would carry it, for comparing a retried write with the stored one. */
const canonical = (value: unknown) => JSON.stringify(value ?? null);

/** How a write treats an entry whose number is taken by a different body. */
export type OnConflict = 'error' | 'keep-stored';

/** The first entry number no run of `workflowId` has written (1 for an investigation with no entries). */
export async function nextFreeSeq(pool: Pool, workflowId: string): Promise<number> {
  const { rows } = await pool.query<{ next: number }>('SELECT coalesce(max(seq), 0)::int + 1 AS next FROM transcript_log WHERE workflow_id = $1', [workflowId]);
  return z.number().int().positive().parse(rows[0]?.next);
}

/** The log of one database, through one codec. */
export class TranscriptLog {
  private readonly codec: BodyCodec;

  constructor(
    private readonly pool: Pool,
    codec: BodyCodec,
  ) {
    // A codec that keeps per-customer keys keeps them in this database (src/temporal/codec/body-codec.ts).
    this.codec = codec.forPool?.(pool) ?? codec;
  }

  /**
   * Writes entries of `workflowId`; an entry already there with the same body writes nothing
   * (a retried activity, a replay). A different body for a taken number is an
   * EntryConflictError naming it, or with `keep-stored` the stored entry wins and is returned.
   * Returns the stored entries that won over the ones given (empty unless `keep-stored`).
   */
  async write(workflowId: string, entries: readonly LogEntry[], onConflict: OnConflict = 'error'): Promise<LogEntry[]> {
    if (entries.length === 0) return [];
    const seqs = entries.map((e) => e.seq);
    if (new Set(seqs).size !== seqs.length) throw new EntryConflictError(`transcript entries of ${workflowId} repeat a number: ${seqs.join(', ')}`);
    const bodies = await Promise.all(entries.map((e) => this.codec.encode(e.body, { workflowId })));
    const { rows } = await this.pool.query<{ seq: number }>(
      `INSERT INTO transcript_log (workflow_id, seq, kind, role, body, sha256, tokens)
       SELECT $1, s, k, r, b, h, t FROM unnest($2::int[], $3::text[], $4::text[], $5::bytea[], $6::text[], $7::int[]) AS x(s, k, r, b, h, t)
       ON CONFLICT (workflow_id, seq) DO NOTHING
       RETURNING seq`,
      [workflowId, seqs, entries.map((e) => e.kind), entries.map((e) => e.role ?? null), bodies, bodies.map(sha256), entries.map((e) => e.tokens)],
    );
    const inserted = new Set(rows.map((r) => r.seq));
    const existing = entries.filter((e) => !inserted.has(e.seq));
    if (existing.length === 0) return [];
    const stored = await this.read(
      workflowId,
      existing.map((e) => e.seq),
    );
    const kept: LogEntry[] = [];
    existing.forEach((entry, i) => {
      const was = stored[i]!;
      if (was.kind === entry.kind && was.role === entry.role && canonical(was.body) === canonical(entry.body)) return;
      if (onConflict === 'keep-stored') {
        kept.push(was);
        return;
      }
      throw new EntryConflictError(`transcript entry ${entry.seq} of ${workflowId} is already written with a different ${entry.kind} body; entries are never overwritten`);
    });
    return kept;
  }

  /** The entries `seqs` of `workflowId`, in the order asked; a missing one is a MissingEntryError naming it. */
  async read(workflowId: string, seqs: readonly number[]): Promise<LogEntry[]> {
    if (seqs.length === 0) return [];
    const { rows } = await this.pool.query('SELECT seq, kind, role, body, sha256, tokens FROM transcript_log WHERE workflow_id = $1 AND seq = ANY($2::int[])', [
      workflowId,
      [...new Set(seqs)],
    ]);
    const found = new Map<number, LogEntry>();
    for (const raw of rows) {
      const row = Row.parse(raw);
      found.set(row.seq, await this.decodeRow(workflowId, row));
    }
    return seqs.map((seq) => {
      const entry = found.get(seq);
      if (!entry) throw new MissingEntryError(`transcript entry ${seq} of ${workflowId} is not in transcript_log`);
      return entry;
    });
  }

  /**
   * Every entry of `workflowId` (of the kinds given, all when none), in order; `from` and
   * `through` bound the numbers read (a reopened ticket's run reads from its own first number).
   */
  async all(workflowId: string, kinds?: readonly LogKind[], range: { from?: number; through?: number } = {}): Promise<LogEntry[]> {
    const { rows } = await this.pool.query(
      `SELECT seq, kind, role, body, sha256, tokens FROM transcript_log
        WHERE workflow_id = $1 AND ($2::text[] IS NULL OR kind = ANY($2::text[]))
          AND seq >= coalesce($3::int, 1) AND ($4::int IS NULL OR seq <= $4::int) ORDER BY seq`,
      [workflowId, kinds ? [...kinds] : null, range.from ?? null, range.through ?? null],
    );
    const entries: LogEntry[] = [];
    for (const raw of rows) entries.push(await this.decodeRow(workflowId, Row.parse(raw)));
    return entries;
  }

  /**
   * Keeps the model's reply to one model call (migrations/022), named by the activity that
   * asked: the first one kept wins, and the kept one is returned, so two attempts agree.
   */
  async keepReply<T>(call: ReplyKey, replySeq: number, reply: T): Promise<T> {
    const body = await this.codec.encode(reply, { workflowId: call.workflowId });
    const { rowCount } = await this.pool.query(
      `INSERT INTO model_replies (workflow_id, run_id, activity_id, reply_seq, body, sha256) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (workflow_id, run_id, activity_id) DO NOTHING`,
      [call.workflowId, call.runId, call.activityId, replySeq, body, sha256(body)],
    );
    if (rowCount === 1) return reply;
    const kept = await this.replyOf(call);
    if (kept === undefined) throw new MissingEntryError(`the reply kept for activity ${call.activityId} of ${call.workflowId} was neither written nor found in model_replies`);
    return kept as T;
  }

  /** The reply kept for one model call, or undefined when it has not been answered. */
  async replyOf(call: ReplyKey): Promise<unknown> {
    const { rows } = await this.pool.query('SELECT body, sha256 FROM model_replies WHERE workflow_id = $1 AND run_id = $2 AND activity_id = $3', [
      call.workflowId,
      call.runId,
      call.activityId,
    ]);
    if (rows.length === 0) return undefined;
    const row = KeptReply.parse(rows[0]);
    return this.checkedBody(row, `the reply kept for activity ${call.activityId} of ${call.workflowId}`);
  }

  private async decodeRow(workflowId: string, row: z.infer<typeof Row>): Promise<LogEntry> {
    const body = await this.checkedBody(row, `transcript entry ${row.seq} of ${workflowId}`);
    return { seq: row.seq, kind: row.kind, ...(row.role ? { role: row.role } : {}), body, tokens: row.tokens };
  }

  /** A stored body decoded, after its SHA-256 is checked against the one stored beside it. */
  private async checkedBody(row: { body: Buffer; sha256: string }, what: string): Promise<unknown> {
    const actual = sha256(row.body);
    if (actual !== row.sha256) throw new Error(`${what} is corrupt: its body hashes to ${actual}, not ${row.sha256}`);
    return this.codec.decode(row.body);
  }
}
