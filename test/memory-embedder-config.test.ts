import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runReindexCommand } from '../src/main/commands/memory-reindex';
import { loadConfig } from '../src/config';
import { selectEmbedder } from '../src/memory/select-embedder';
import { LOCAL_MODEL_ID } from '../src/memory/model-files';
import type { Pool } from 'pg';

// Which embedder memory uses is configuration: the local model unless told otherwise.

describe('choosing the embedder', () => {
  it('uses the local MiniLM model by default, and none when embeddings are off', () => {
    assert.equal(selectEmbedder(loadConfig({}))?.id, LOCAL_MODEL_ID);
    assert.equal(selectEmbedder(loadConfig({ CASEWORK_EMBEDDINGS: 'off' })), undefined);
  });

  it('names a hosted model by API shape, model and length, so switching re-embeds', () => {
    const voyage = selectEmbedder(loadConfig({ CASEWORK_EMBEDDINGS: 'voyage', CASEWORK_EMBEDDINGS_API_KEY: 'k' }));
    assert.equal(voyage?.id, 'voyage:voyage-3.5');
    const local = selectEmbedder(
      loadConfig({
        CASEWORK_EMBEDDINGS: 'openai',
        CASEWORK_EMBEDDINGS_MODEL: 'nomic-embed-text',
        CASEWORK_EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1',
        CASEWORK_EMBEDDINGS_DIMENSIONS: '256',
      }),
    );
    assert.equal(local?.id, 'openai:nomic-embed-text@256');
  });

  it('says what is missing for a hosted embedder, and refuses an unknown one', () => {
    assert.throws(() => selectEmbedder(loadConfig({ CASEWORK_EMBEDDINGS: 'voyage' })), /CASEWORK_EMBEDDINGS=voyage needs CASEWORK_EMBEDDINGS_API_KEY/);
    assert.throws(() => selectEmbedder(loadConfig({ CASEWORK_EMBEDDINGS: 'openai' })), /needs CASEWORK_EMBEDDINGS_MODEL/);
    assert.throws(() => loadConfig({ CASEWORK_EMBEDDINGS: 'cohere' }), /CASEWORK_EMBEDDINGS/);
  });

  it('`memory reindex` explains itself when embeddings are off or the flags are wrong', async () => {
    const lines: string[] = [];
    const pool = {} as Pool;
    assert.equal(await runReindexCommand([], { admin: pool, app: pool, embedder: undefined, out: (l) => lines.push(l) }), 2);
    assert.match(lines.at(-1)!, /CASEWORK_EMBEDDINGS=off/);
    assert.equal(await runReindexCommand(['--all'], { admin: pool, app: pool, embedder: undefined, out: (l) => lines.push(l) }), 2);
    assert.match(lines.at(-1)!, /usage: casework memory reindex/);
  });
});
