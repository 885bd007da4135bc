import { createConnection, createServer, type Server, type Socket } from 'node:net';

// A TCP proxy that can play "the database went away": put it between casework and Postgres and
// cut() refuses new connections (nothing listens, so clients get ECONNREFUSED as from a stopped
// server) and drops the open ones; resume() listens again on the same port. The real server is
// never touched, so other users of it see nothing. Open connections are dropped one of two ways,
// because clients meet both and handle them differently (node-postgres raises an 'error' event
// on a reset socket, only 'end' on a closed one): 'reset' destroys them at once, as a crashed
// host or a broken network does; 'close' ends them, as a server shutting down does.

/** How cut() drops open connections. */
export type CutMode = 'reset' | 'close';

/** What a FaultProxy has done so far. */
export interface FaultProxyCounts {
  /** Client connections accepted and forwarded. */
  accepted: number;
  /** Open connections destroyed by a cut. */
  destroyed: number;
  /** Cuts so far. */
  cuts: number;
}

/** A proxy between clients and one TCP target that can be cut and resumed. */
export interface FaultProxy {
  /** The port clients connect to. */
  port: number;
  /** True while cut (refusing and dropping connections). */
  readonly isCut: boolean;
  readonly counts: FaultProxyCounts;
  /** Stops listening and drops every open connection ('reset' by default); resolves once the port is closed. */
  cut(mode?: CutMode): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  /** Closes for good. */
  close(): Promise<void>;
}

/** Where a FaultProxy listens and what it forwards to. */
export interface FaultProxyOptions {
  /** Port to listen on (0 picks a free one, kept across cuts). */
  port: number;
  host?: string;
  target: { host: string; port: number };
}

/** Starts a fault proxy listening on options.port and forwarding to options.target. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const host = options.host ?? '127.0.0.1';
  // Each forwarded connection: the client's socket and the one to the target.
  const open = new Map<Socket, Socket>();
  const counts: FaultProxyCounts = { accepted: 0, destroyed: 0, cuts: 0 };
  let server: Server | undefined;
  let port = options.port;
  let closed = false;

  const forward = (client: Socket) => {
    counts.accepted += 1;
    const upstream = createConnection(options.target);
    open.set(client, upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const listen = () =>
    new Promise<void>((resolvePromise, reject) => {
      const next = createServer(forward);
      next.once('error', reject);
      next.listen(port, host, () => {
        next.off('error', reject);
        const address = next.address();
        if (address && typeof address === 'object') port = address.port;
        server = next;
        resolvePromise();
      });
    });

  const stopListening = async (mode: CutMode) => {
    const current = server;
    server = undefined;
    const closing = current ? new Promise<void>((r) => current.close(() => r())) : Promise.resolve();
    for (const [client, upstream] of open) {
      // Dropped here, the way `mode` says, not by the pair's own close handlers.
      client.removeAllListeners('close');
      upstream.removeAllListeners('close');
      client.unpipe();
      upstream.unpipe();
      upstream.destroy();
      if (mode === 'close') {
        client.end();
        // A peer that never answers the FIN must not hold the port's close. Not unref'd: a
        // peer whose own socket is unref'd (an idle pg client) would otherwise leave nothing to
        // run the timer, and the close would never resolve.
        setTimeout(() => client.destroy(), 1_000);
      } else {
        client.resetAndDestroy();
      }
      counts.destroyed += 1;
    }
    open.clear();
    await closing;
  };

  await listen();
  return {
    get port() {
      return port;
    },
    get isCut() {
      return server === undefined;
    },
    counts,
    async cut(mode: CutMode = 'reset') {
      if (!server) return;
      counts.cuts += 1;
      await stopListening(mode);
    },
    async resume() {
      if (server || closed) return;
      await listen();
    },
    async close() {
      closed = true;
      await stopListening('close');
    },
  };
}
