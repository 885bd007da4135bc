// The Embedder port: turns text into vectors for recall by meaning. Adapters: the local
// MiniLM model (embed-local.ts, the default) and a hosted API over HTTP (embed-http.ts).

/** Whether a text is being stored or searched for: some hosted models embed the two differently. */
export type EmbedPurpose = 'document' | 'query';

/** A sentence-embedding model. Vectors are unit length, so a dot product is their cosine. */
export interface Embedder {
  /** Stored beside every vector it makes; a vector with another id is re-embedded by reindex. */
  readonly id: string;
  /** Length of every vector. */
  readonly dimensions: number;
  /** Shown wherever the embedder is named, e.g. "local all-MiniLM-L6-v2 (int8 ONNX on CPU)". */
  readonly label: string;
  /**
   * True when embed() leaves the event loop free while it works (a worker thread, a network
   * call), so a caller may start it before its own I/O; an in-thread model holds the loop.
   */
  readonly offThread?: boolean;
  /** One unit vector per text, in order. Batching is the adapter's business. */
  embed(texts: string[], purpose: EmbedPurpose): Promise<number[][]>;
}

/** Scales `v` to unit length (a zero vector stays zero). */
export function normalise(v: number[]): number[] {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm > 0 ? v.map((x) => x / norm) : v.map(() => 0);
}

/** Cosine of two unit vectors (their dot product). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) dot += a[i]! * b[i]!;
  return dot;
}
