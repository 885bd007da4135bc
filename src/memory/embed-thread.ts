import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { UnavailableError } from '../errors';
import { localEmbedderIdentity, type LocalEmbedderOptions } from './embed-local';
import type { Embedder } from './embedder';
import type { EmbedRequest, EmbedResponse } from './embed-worker';

// The local model off the event loop. Tokenising and the ONNX run take tens of milliseconds a
// batch on this kind of machine, and in-thread they hold the process: while a burst of notes
// is embedded, no heartbeat, timer or query answer is handled. Here they run in one worker
// thread (started on first use, not keeping the process alive); the main thread only posts
// texts and receives vectors. Same model, same id, same vectors as createLocalEmbedder.

/** The local embedder running in a worker thread; `close()` stops the thread. */
export function createThreadedEmbedder(options: LocalEmbedderOptions = {}): Embedder & { close(): Promise<void> } {
  const identity = localEmbedderIdentity();
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, { resolve: (vectors: number[][]) => void; reject: (error: Error) => void }>();

  const failAll = (error: Error) => {
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
    worker = undefined;
  };
  const start = (): Worker => {
    // Compiled, the worker is embed-worker.js beside this file; under tsx (tests, scripts),
    // embed-worker.ts, registering tsx's require hook in the thread first (tsx is there then).
    const js = join(__dirname, 'embed-worker.js');
    const thread = existsSync(js)
      ? new Worker(js, { workerData: options })
      : new Worker(`require('tsx/cjs'); require(${JSON.stringify(join(__dirname, 'embed-worker.ts'))});`, { eval: true, workerData: options });
    thread.unref();
    thread.on('message', (response: EmbedResponse) => {
      const waiter = pending.get(response.id);
      if (!waiter) return;
      pending.delete(response.id);
      if ('vectors' in response) waiter.resolve(response.vectors);
      else waiter.reject(response.unavailable ? new UnavailableError(response.error) : new Error(response.error));
    });
    thread.on('error', (error) => failAll(new UnavailableError(`the embedding thread failed: ${error.message}`, { cause: error })));
    thread.on('exit', (code) => {
      if (worker === thread) failAll(new UnavailableError(`the embedding thread stopped (exit code ${code})`));
    });
    return thread;
  };

  return {
    ...identity,
    label: `${identity.label}, in a worker thread`,
    offThread: true,
    embed(texts, purpose) {
      if (!texts.length) return Promise.resolve([]);
      worker ??= start();
      const id = nextId++;
      const thread = worker;
      return new Promise<number[][]>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        // The thread is referenced only while it owes an answer, so an idle one never keeps the process up.
        thread.ref();
        thread.postMessage({ id, texts, purpose } satisfies EmbedRequest);
      }).finally(() => {
        if (!pending.size) thread.unref();
      });
    },
    async close() {
      const thread = worker;
      worker = undefined;
      if (thread) await thread.terminate();
    },
  };
}
