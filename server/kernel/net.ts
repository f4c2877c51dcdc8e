import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Whether `port` can be listened on at `host` right now; any other failure than the port being
 * taken (a host that is not ours, no permission) is thrown.
 */
export function portIsFree(port: number, host = '0.0.0.0'): Promise<boolean> {
  return new Promise((resolveFree, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolveFree(false) : reject(error)));
    server.listen(port, host, () => server.close(() => resolveFree(true)));
  });
}
