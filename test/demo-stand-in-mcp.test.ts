import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../src/config';
import { runDemo } from '../src/dev/demo/run';

// `npm run demo -- --shop stand-in` shows the shop's MCP tools at work, against the MCP stand-in
// (a test double of a shop's MCP server; the offline investigator plays the model, which cannot
// run here): the read-only warranty lookup is called, the money-moving store credit is not called
// on the model's word but filed for a person, and is called once after the approval.

test('the stand-in demo uses a read-only MCP tool, holds the money-moving one for approval, then calls it once', { timeout: 300_000 }, async () => {
  const lines: string[] = [];
  const config = loadConfig({ ...process.env, ANTHROPIC_API_KEY: '' });
  const result = await runDemo(config, (line) => lines.push(line), { shop: 'stand-in' });
  const out = lines.join('\n');
  assert.match(out, /MCP: the shop's MCP server is a stand-in \(a test double\) at \S+: mcp_shop_issue_store_credit \(money-moving\), mcp_shop_lookup_warranty \(read-only\)/);
  assert.match(out, /MCP stand-in so far: lookup_warranty answered 1 time\(s\); issue_store_credit called 0 time\(s\), 0 credit\(s\) issued/);
  assert.match(out, /mcp_shop_issue_store_credit moves money, so casework did not call it on the model's word: request mcpreq_\S+ waits for a person \(0 calls made\)/);
  assert.match(out, /after the approval: issue_store_credit called 1 time\(s\), 1 credit\(s\) issued \(sc_1 of £15\.00\)/);
  assert.equal(result.mcp?.lastReply, 'Order 5102 is covered by Trailpeak 2-year cover until 2027-03-01. Store credit of £15.00 has been added to your account.');
});
