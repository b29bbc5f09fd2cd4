import http from 'node:http';
import { closeServer, listen } from './http';
import { waitFor } from '../test/wait';

describe('closing a server made by listen', () => {
  it('waits for a handler whose client went away, so what the handler uses stays open until it ends', async () => {
    const events: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let arrived = false;
    let clientGone = false;
    const listening = await listen(
      (_req, res) => {
        arrived = true;
        res.once('close', () => (clientGone = true));
        void gate.then(() => {
          events.push('handler ended');
          res.end('too late for the client');
        });
      },
      0,
      '127.0.0.1',
    );
    const request = http.get(`http://127.0.0.1:${listening.port}/`);
    request.on('error', () => {});
    await waitFor(() => arrived, { what: 'the request to reach its handler' });
    request.destroy();
    await waitFor(() => clientGone, { what: 'the server to see the client leave' });

    let serverClosed = false;
    listening.server.once('close', () => (serverClosed = true));
    const closed = listening.close().then(() => events.push('closed'));
    // The server itself has nothing left to wait for: only the handler is still under way.
    await waitFor(() => serverClosed, { what: 'the server to close its listener and connections' });
    release();
    await closed;
    expect(events).toEqual(['handler ended', 'closed']);
  });

  it('still closes within its grace period when a handler never ends', async () => {
    let arrived = false;
    const listening = await listen(
      () => {
        arrived = true;
      },
      0,
      '127.0.0.1',
    );
    const request = http.get(`http://127.0.0.1:${listening.port}/`);
    request.on('error', () => {});
    await waitFor(() => arrived, { what: 'the request to reach its handler' });
    request.destroy();
    await closeServer(listening.server, 200);
    expect(listening.server.listening).toBe(false);
  });
});
