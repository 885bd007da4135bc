/** What one retention run removed, per store: rows deleted and seconds taken (stores emptied together share their time). */
export interface RetentionReport {
  stores: Partial<Record<'transcript_log' | 'model_replies' | 'customer_payloads' | 'payload_blobs' | 'memory_cases', { rows: number; seconds: number }>>;
}

/** The retention workflow's one input: nothing is needed, the settings are the worker's. */
export type RetentionInput = Record<string, never>;
