import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { parseCaseNotes } from '../src/activities/compaction';
import { createLogger } from '../src/observability/logging';
import { MAX_FAILURE_CHARS, scrubFailureText } from '../src/observability/log-scrub';

// A failure's message is written by code, but code quotes what it was given, and what an
// investigation is given is a customer's words. The lines below are what the worker writes
// for a failure (the SDK logs "Activity failed" with the error; casework's workflows log
// `error: failureText(...)`), through the same logger the Temporal runtime is given.

const CUSTOMER = 'my parcel never came and the courier left it at Block C';

function linesAt(level: 'debug' | 'info'): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger({ CASEWORK_LOG_LEVEL: level, CASEWORK_LOG_FORMAT: 'json' }, (line) => lines.push(line)) };
}

describe('failure text in log lines', () => {
  test('an activity failure quoting the customer is logged with the quote replaced by its size', () => {
    const { lines, logger } = linesAt('info');
    const error = ApplicationFailure.retryable(`No policy matches "${CUSTOMER}". Policies exist for: refunds, delivery.`, 'ToolError');
    logger.warn('Activity failed', { error, workflowId: 'investigation-T-1001', activityType: 'search_policies' });
    const [line = ''] = lines;
    assert.ok(!line.includes('Block C'), line);
    const record = JSON.parse(line) as { error: { name: string; message: string }; workflowId: string };
    assert.equal(record.error.message, `No policy matches [quoted: ${CUSTOMER.length} chars]. Policies exist for: refunds, delivery.`);
    assert.equal(record.error.name, 'ApplicationFailure', "the error's name stays");
    assert.equal(record.workflowId, 'investigation-T-1001', 'ids stay');
  });

  test("a workflow's failure text (a string field) and a warning's own message are scrubbed too", () => {
    const { lines, logger } = linesAt('info');
    logger.error(`could not record "${CUSTOMER}"`, { error: `Not saved: Login priya.k@example.com, pw hunter2`, reason: `the model said “${CUSTOMER}”` });
    const [line = ''] = lines;
    for (const secret of ['hunter2', 'Block C']) assert.ok(!line.includes(secret), `${secret} in ${line}`);
    const record = JSON.parse(line) as { msg: string; error: string; reason: string };
    assert.equal(record.error, '[removed: password]');
    assert.match(record.reason, /^the model said \[quoted: \d+ chars\]$/);
    assert.match(record.msg, /^could not record \[quoted: \d+ chars\]$/);
  });

  test("what an engineer needs stays: statuses, identifiers in quotes, apostrophes, code's own words", () => {
    for (const text of [
      'Postgres is unreachable (connection lost); retry shortly',
      'the voyage embeddings API refused the key (HTTP 401: invalid api key); check CASEWORK_EMBEDDINGS_API_KEY',
      "the customer's order can't be found; 'T-1001' isn't open",
      'transcript entry 12 of investigation-T-1001 is corrupt: its body hashes to ab12, not cd34',
    ]) {
      assert.equal(scrubFailureText(text), text);
    }
    assert.equal(
      scrubFailureText('400 {"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}'),
      '400 {"type":"error","error":{"type":"invalid_request_error","message":[quoted: 28 chars]}}',
    );
  });

  test('card numbers and codes are removed even unquoted, and a long failure is cut with a count', () => {
    assert.equal(scrubFailureText('card 4111 1111 1111 1111 was declined'), '[removed: card number]');
    const long = `payment failed: ${'x'.repeat(2 * MAX_FAILURE_CHARS)}`;
    const scrubbed = scrubFailureText(long);
    assert.equal(scrubbed, `${long.slice(0, MAX_FAILURE_CHARS)}… [${long.length - MAX_FAILURE_CHARS} more chars]`);
  });

  test('at debug level, for a developer on a laptop, failures are logged verbatim', () => {
    const { lines, logger } = linesAt('debug');
    logger.debug('tool failed', { error: new Error(`No policy matches "${CUSTOMER}"`) });
    assert.ok(lines[0]!.includes(CUSTOMER));
  });

  test("a compaction reply that is not JSON fails without quoting the reply's text", () => {
    const reply = { content: [{ type: 'text' as const, text: `Summary: ${CUSTOMER}` }], stop_reason: 'end_turn' as const };
    assert.throws(
      () => parseCaseNotes(reply as Parameters<typeof parseCaseNotes>[0]),
      (error: Error) => /^compaction reply is not JSON \(\d+ chars of text, starting with "S"\)$/.test(error.message) && !error.message.includes('Block C'),
    );
  });
});
