import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBodyText } from '../../server/http';
import { verifyCaseworkWebhook } from '../../desk/webhook-client';

// A receiver for casework's generic outbound webhook (CASEWORK_DESKS=webhook), for the capacity
// bench: it stands where a support desk would, verifies each delivery's signature, answers 200,
// and notes when each reply arrived on this process's clock, so the bench times a follow-up from
// the moment it is sent to the moment the customer's reply reaches the desk.

/** One reply as the desk received it. */
export interface ReceivedReply {
  deliveryId: string;
  workflowId: string;
  sequence: number;
  /** performance.now() when it arrived. */
  at: number;
}

/** The running receiver. */
export interface ReplyReceiver {
  url: string;
  /** Distinct replies (by delivery id) received for `workflowId`, oldest first. */
  replies(workflowId: string): ReceivedReply[];
  /** Resolves with reply number `sequence` of `workflowId` once it arrives; rejects after `timeoutMs`. */
  waitFor(workflowId: string, sequence: number, timeoutMs: number): Promise<ReceivedReply>;
  /** Deliveries refused for a bad signature or body. */
  refused(): number;
  close(): Promise<void>;
}

/** Starts the receiver on 127.0.0.1 (a free port), checking signatures with `secret`. */
export async function startReplyReceiver(secret: string): Promise<ReplyReceiver> {
  const byWorkflow = new Map<string, ReceivedReply[]>();
  const seen = new Set<string>();
  const waiters = new Map<string, (reply: ReceivedReply) => void>();
  let refused = 0;
  const server = createServer((req, res) => {
    void readBodyText(req, 1_000_000).then(
      (body) => {
        const ok = verifyCaseworkWebhook({
          secret,
          timestamp: req.headers['x-casework-timestamp'] as string | undefined,
          signature: req.headers['x-casework-signature'] as string | undefined,
          body,
          now: new Date(),
          windowSeconds: 300,
        });
        const post = ok ? (JSON.parse(body) as { id: string; type: string; workflow_id: string; sequence: number }) : undefined;
        if (!post) {
          refused += 1;
          res.writeHead(401).end();
          return;
        }
        if (post.type === 'casework.reply' && !seen.has(post.id)) {
          seen.add(post.id);
          const reply = { deliveryId: post.id, workflowId: post.workflow_id, sequence: post.sequence, at: performance.now() };
          const list = byWorkflow.get(post.workflow_id) ?? [];
          list.push(reply);
          byWorkflow.set(post.workflow_id, list);
          const key = `${post.workflow_id}#${post.sequence}`;
          waiters.get(key)?.(reply);
          waiters.delete(key);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
      () => {
        refused += 1;
        res.writeHead(400).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/desk`,
    replies: (workflowId) => [...(byWorkflow.get(workflowId) ?? [])],
    refused: () => refused,
    waitFor(workflowId, sequence, timeoutMs) {
      const already = byWorkflow.get(workflowId)?.find((r) => r.sequence === sequence);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(`${workflowId}#${sequence}`);
          reject(new Error(`no reply ${sequence} from ${workflowId} reached the desk within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        waiters.set(`${workflowId}#${sequence}`, (reply) => {
          clearTimeout(timer);
          resolve(reply);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
