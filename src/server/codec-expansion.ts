import { METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { expandForDisplay, hasReferences, referencedSeqs, type EntrySource } from '../context/display-expansion';
import type { TranscriptLog } from '../db/transcript-log';
import { CustomerErasedError, CUSTOMER_KEY_RECHECK_MS } from '../temporal/codec/customer-keys';

// The codec server's decoding for display: a decoded payload that refers into the transcript
// log is rewritten with what it refers to (src/context/display-expansion.ts). Which log is
// named by the payload's own label (the workflow id the worker's codec bound into it), never by
// anything the caller sends. One read of the whole log per investigation serves every payload
// of a page: reads are cached per workflow id, briefly (no longer than a customer key is
// cached, so an erasure shows within the same bound), in a bounded LRU, and concurrent
// requests share one read in flight.

const JSON_ENCODING = 'json/plain';
const utf8 = new TextEncoder();
const text = new TextDecoder();

/** How long one read of an investigation's log serves later payloads: at most as long as a customer key is cached. */
export const LOG_CACHE_TTL_MS = Math.min(5_000, CUSTOMER_KEY_RECHECK_MS);
/** Most investigations whose log reads are kept at once. */
export const LOG_CACHE_SIZE = 32;

interface Read {
  at: number;
  source: Promise<EntrySource>;
  /** The highest entry the read found: a payload naming a later one was written after it. */
  last: number;
}

/** How the expander reads: cached (the default) or every payload reading the log afresh (the bench's "before"). */
export interface ExpanderOptions {
  cache?: boolean;
  ttlMs?: number;
  maxWorkflows?: number;
  now?: () => number;
}

/** Counts, for the bench and the log: payloads expanded, log reads made. */
export interface ExpanderStats {
  expanded: number;
  logReads: number;
}

/** Expands decoded payloads for display from one database's transcript log. */
export class DisplayExpander {
  private readonly reads = new Map<string, Read>();
  private readonly cache: boolean;
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;
  readonly stats: ExpanderStats = { expanded: 0, logReads: 0 };

  constructor(
    private readonly log: TranscriptLog,
    options: ExpanderOptions = {},
  ) {
    this.cache = options.cache ?? true;
    this.ttlMs = options.ttlMs ?? LOG_CACHE_TTL_MS;
    this.max = options.maxWorkflows ?? LOG_CACHE_SIZE;
    this.now = options.now ?? Date.now;
  }

  /**
   * The payloads with every reference expanded; `workflowIds[i]` is the label payload i carried
   * (undefined: unlabelled, shown as it is). A payload that is not JSON, or holds no reference,
   * is returned untouched, byte for byte.
   */
  async expand(payloads: Payload[], workflowIds: readonly (string | undefined)[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload, i) => this.expandOne(payload, workflowIds[i])));
  }

  private async expandOne(payload: Payload, workflowId: string | undefined): Promise<Payload> {
    if (workflowId === undefined || !payload.data) return payload;
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || text.decode(encoding) !== JSON_ENCODING) return payload;
    let value: unknown;
    try {
      value = JSON.parse(text.decode(payload.data));
    } catch {
      return payload;
    }
    if (!hasReferences(value)) return payload;
    const source = await this.sourceFor(workflowId, referencedSeqs(value));
    this.stats.expanded++;
    return { metadata: { ...payload.metadata }, data: utf8.encode(JSON.stringify(expandForDisplay(value, source))) };
  }

  /** The investigation's entries: a fresh enough read that already holds every entry asked for, else a new read. */
  private async sourceFor(workflowId: string, seqs: readonly number[]): Promise<EntrySource> {
    const wanted = seqs.length ? Math.max(...seqs) : 0;
    const held = this.cache ? this.reads.get(workflowId) : undefined;
    if (held && this.now() - held.at < this.ttlMs && held.last >= wanted) {
      // Most recently used last, so the oldest read is the one dropped.
      this.reads.delete(workflowId);
      this.reads.set(workflowId, held);
      return held.source;
    }
    const read: Read = { at: this.now(), last: Number.POSITIVE_INFINITY, source: this.readLog(workflowId) };
    if (!this.cache) return read.source;
    this.reads.delete(workflowId);
    this.reads.set(workflowId, read);
    while (this.reads.size > this.max) this.reads.delete(this.reads.keys().next().value as string);
    // Until it lands, concurrent payloads share this read; then it knows how far it reached.
    read.source.then(
      (source) => {
        read.last = source.erasedOn ? Number.POSITIVE_INFINITY : Math.max(0, ...source.entries.keys());
      },
      () => {
        if (this.reads.get(workflowId) === read) this.reads.delete(workflowId);
      },
    );
    return read.source;
  }

  private async readLog(workflowId: string): Promise<EntrySource> {
    this.stats.logReads++;
    try {
      const entries = await this.log.all(workflowId);
      return { entries: new Map(entries.map((e) => [e.seq, e])) };
    } catch (error) {
      if (error instanceof CustomerErasedError) return { entries: new Map(), erasedOn: error.erasedAt };
      throw error;
    }
  }
}
