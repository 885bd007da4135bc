import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kindOf } from '../src/errors';
import { createLocalEmbedder } from '../src/memory/embed-local';
import { createThreadedEmbedder } from '../src/memory/embed-thread';
import { cosine } from '../src/memory/embedder';

// The local model in a worker thread: the same model, id and vectors as in this thread, so
// notes embedded either way are searched together; and a missing model is the same clear error.

describe('the local embedder in a worker thread', () => {
  const threaded = createThreadedEmbedder();
  after(() => threaded.close());

  it('gives the same vectors as the model in this thread, for notes and for questions, under the same id', async () => {
    const inThread = createLocalEmbedder();
    const notes = ['Deliveries to my flat must go to Block B, not the main gate', 'Email me rather than phoning'];
    const [a, b] = [await threaded.embed(notes, 'document'), await inThread.embed(notes, 'document')];
    assert.equal(a.length, 2);
    a.forEach((v, i) => assert.ok(cosine(v, b[i]!) > 0.9999, `note ${i}`));
    const [q] = await threaded.embed(['where should the driver leave her packages?'], 'query');
    const [p] = await inThread.embed(['where should the driver leave her packages?'], 'query');
    assert.ok(cosine(q!, p!) > 0.9999);
    assert.equal(threaded.id, inThread.id);
    assert.equal(threaded.dimensions, 384);
    assert.ok(threaded.offThread);
  });

  it('answers requests made at once, each with its own vectors', async () => {
    const texts = ['parcel left with a neighbour', 'refund for a broken lamp', 'call me after noon'];
    const vectors = await Promise.all(texts.map((t) => threaded.embed([t], 'document').then(([v]) => v!)));
    const [again] = await threaded.embed([texts[1]!], 'document');
    assert.ok(cosine(vectors[1]!, again!) > 0.9999);
    assert.ok(cosine(vectors[0]!, vectors[1]!) < 0.9);
  });

  it('fails a missing model as unavailable, saying how to install it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'casework-no-model-'));
    const missing = createThreadedEmbedder({ modelsDir: empty, install: false });
    try {
      await assert.rejects(missing.embed(['x'], 'document'), (error: Error) => {
        assert.equal(kindOf(error), 'unavailable');
        assert.match(error.message, /npm run setup:embeddings/);
        return true;
      });
    } finally {
      await missing.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
