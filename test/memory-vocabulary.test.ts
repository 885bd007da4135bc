import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anyWordQuery } from '../src/memory/search';
import { synonymsFor, widenQuery } from '../src/memory/vocabulary';

// The vocabulary that widens a question before it is searched: whole words and phrases only,
// plurals included, never the words the question already uses.

describe('the support vocabulary', () => {
  it('adds the other words of each group a question uses, plurals included', () => {
    assert.deepEqual(synonymsFor('drop off the packages at my apartment'), ['flat', 'parcel', 'packet']);
    assert.equal(widenQuery('is the elevator broken?'), 'is the elevator broken? lift damaged faulty defective');
  });

  it('matches whole words only and leaves a question with no known word unchanged', () => {
    assert.deepEqual(synonymsFor('the flatbed truck was on time'), []);
    assert.equal(widenQuery('order 4471'), 'order 4471');
  });

  it('searches phrases as phrases in the full-text query', () => {
    assert.equal(anyWordQuery('a safe place'), 'safe or place or "fallback spot" or "hiding place" or hidden');
  });
});
