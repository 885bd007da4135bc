import type { Config } from '../config';
import { BadInputError } from '../errors';
import { createHttpEmbedder } from './embed-http';
import { createThreadedEmbedder } from './embed-thread';
import type { Embedder } from './embedder';

/** The embedder the configuration names: local MiniLM (in a worker thread) by default, a hosted API when configured, none when off. */
export function selectEmbedder(config: Config, options: { installLocal?: boolean } = {}): Embedder | undefined {
  switch (config.CASEWORK_EMBEDDINGS) {
    case 'off':
      return undefined;
    case 'local':
      // In a worker thread, so a burst of writes does not hold the worker's event loop.
      return createThreadedEmbedder({ install: options.installLocal ?? true });
    case 'voyage':
    case 'openai': {
      const model = config.CASEWORK_EMBEDDINGS_MODEL ?? (config.CASEWORK_EMBEDDINGS === 'voyage' ? 'voyage-3.5' : undefined);
      if (!model) throw new BadInputError('CASEWORK_EMBEDDINGS=openai needs CASEWORK_EMBEDDINGS_MODEL (the model the server serves)');
      if (config.CASEWORK_EMBEDDINGS === 'voyage' && !config.CASEWORK_EMBEDDINGS_API_KEY) {
        throw new BadInputError('CASEWORK_EMBEDDINGS=voyage needs CASEWORK_EMBEDDINGS_API_KEY');
      }
      return createHttpEmbedder({
        api: config.CASEWORK_EMBEDDINGS,
        model,
        apiKey: config.CASEWORK_EMBEDDINGS_API_KEY,
        baseUrl: config.CASEWORK_EMBEDDINGS_BASE_URL,
        dimensions: config.CASEWORK_EMBEDDINGS_DIMENSIONS,
        timeoutMs: config.CASEWORK_EMBEDDINGS_TIMEOUT_MS,
        retries: config.CASEWORK_EMBEDDINGS_RETRIES,
      });
    }
  }
}
