import type { PoolClient } from 'pg';
import { AuditRow, parseRows, type AuditEntry } from './schemas';

// The audit trail: append-only for the application (it has no UPDATE or DELETE grant), and it
// names ids and counts, never a note's text, so it may outlive the memory it describes.

/** Records one read, correction or deletion of a customer's memory. */
export async function appendAudit(
  client: PoolClient,
  entry: { customerId: string; action: AuditEntry['action']; actor: string; target: string; detail?: Record<string, unknown>; at: string },
): Promise<void> {
  await client.query('INSERT INTO memory_audit (customer_id, action, actor, target, detail, at) VALUES ($1, $2, $3, $4, $5, $6)', [
    entry.customerId,
    entry.action,
    entry.actor,
    entry.target,
    JSON.stringify(entry.detail ?? {}),
    entry.at,
  ]);
}

/** The customer's audit trail, newest first. */
export async function listAudit(client: PoolClient, customerId: string, limit = 50): Promise<AuditEntry[]> {
  const { rows } = await client.query('SELECT audit_id, action, actor, target, detail, at FROM memory_audit WHERE customer_id = $1 ORDER BY at DESC, audit_id DESC LIMIT $2', [
    customerId,
    limit,
  ]);
  return parseRows(AuditRow, rows, 'memory audit');
}
