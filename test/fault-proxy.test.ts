import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { startFaultProxy, type FaultProxy } from '../src/dev/fault-proxy';

// The fault proxy the soak puts between casework and Postgres, against a plain echo server.

function echoServer(): Promise<{ server: Server; port: number }> {
  return new Promise((resolvePromise) => {
    const server = createServer((socket) => socket.pipe(socket));
    server.listen(0, '127.0.0.1', () => resolvePromise({ server, port: (server.address() as { port: number }).port }));
  });
}

function connect(port: number): Promise<Socket> {
  return new Promise((resolvePromise, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => resolvePromise(socket));
    socket.once('error', reject);
  });
}

function roundTrip(socket: Socket, text: string): Promise<string> {
  return new Promise((resolvePromise) => {
    socket.once('data', (chunk) => resolvePromise(chunk.toString()));
    socket.write(text);
  });
}

/** How an open socket ended: 'error:<code>' when reset, 'end' when closed. */
function ending(socket: Socket): Promise<string> {
  return new Promise((resolvePromise) => {
    socket.once('error', (error: NodeJS.ErrnoException) => resolvePromise(`error:${error.code}`));
    socket.once('end', () => resolvePromise('end'));
  });
}

describe('fault proxy', () => {
  let echo: { server: Server; port: number };
  let proxy: FaultProxy;

  before(async () => {
    echo = await echoServer();
    proxy = await startFaultProxy({ port: 0, target: { host: '127.0.0.1', port: echo.port } });
  });
  after(async () => {
    await proxy.close();
    echo.server.close();
  });

  it('forwards bytes both ways to its target', async () => {
    const socket = await connect(proxy.port);
    assert.equal(await roundTrip(socket, 'ping'), 'ping');
    socket.destroy();
  });

  it('refuses new connections while cut, as a stopped server does, and accepts them again on the same port after resume', async () => {
    const port = proxy.port;
    await proxy.cut();
    assert.equal(proxy.isCut, true);
    await assert.rejects(connect(port), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED');
    await proxy.resume();
    assert.equal(proxy.port, port);
    const socket = await connect(port);
    assert.equal(await roundTrip(socket, 'back'), 'back');
    socket.destroy();
  });

  it('resets open connections on a reset cut', async () => {
    const socket = await connect(proxy.port);
    await roundTrip(socket, 'x');
    const ended = ending(socket);
    await proxy.cut('reset');
    assert.equal(await ended, 'error:ECONNRESET');
    await proxy.resume();
  });

  it('closes open connections cleanly on a close cut, as a server shutting down does', async () => {
    const socket = await connect(proxy.port);
    await roundTrip(socket, 'x');
    const ended = ending(socket);
    await proxy.cut('close');
    assert.equal(await ended, 'end');
    socket.destroy();
    await proxy.resume();
  });

  it('counts the connections it forwarded and the ones a cut dropped', async () => {
    const before = { ...proxy.counts };
    const socket = await connect(proxy.port);
    await roundTrip(socket, 'x');
    socket.on('error', () => undefined);
    await proxy.cut();
    await proxy.resume();
    assert.equal(proxy.counts.accepted, before.accepted + 1);
    assert.equal(proxy.counts.destroyed, before.destroyed + 1);
    assert.equal(proxy.counts.cuts, before.cuts + 1);
  });
});
