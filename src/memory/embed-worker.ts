import { parentPort, workerData } from 'node:worker_threads';
import { createLocalEmbedder, type LocalEmbedderOptions } from './embed-local';
import type { EmbedPurpose } from './embedder';

// The worker thread that runs the local model for embed-thread.ts: tokenising and the ONNX
// run happen here, so a burst of writes does not hold the worker's event loop (Temporal's
// heartbeats, other activities' I/O). One request at a time, in the order they arrive.

/** A request from the main thread. */
export interface EmbedRequest {
  id: number;
  texts: string[];
  purpose: EmbedPurpose;
}

/** The answer: vectors, or the error's message and whether it is the model being unavailable. */
export type EmbedResponse = { id: number; vectors: number[][] } | { id: number; error: string; unavailable: boolean };

if (parentPort) {
  const port = parentPort;
  const embedder = createLocalEmbedder(workerData as LocalEmbedderOptions);
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (request: EmbedRequest) => {
    queue = queue.then(async () => {
      try {
        port.postMessage({ id: request.id, vectors: await embedder.embed(request.texts, request.purpose) } satisfies EmbedResponse);
      } catch (error) {
        const e = error as Error & { kind?: string };
        port.postMessage({ id: request.id, error: e.message, unavailable: e.kind === 'unavailable' } satisfies EmbedResponse);
      }
    });
  });
}
