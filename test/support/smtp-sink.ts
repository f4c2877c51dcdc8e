/**
 * A real SMTP server on 127.0.0.1 for tests: it speaks enough of RFC 5321 for nodemailer
 * (EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT; no STARTTLS, no AUTH) and keeps each message it
 * accepts. The app sends to it with `smtpUrl: sink.url`, through its own mail job.
 */
import { createServer, type Server, type Socket } from 'node:net';

export interface Received {
  from: string;
  to: string[];
  /** The message as sent: headers, a blank line, the body (quoted-printable or not, as the client chose). */
  data: string;
}

export interface SmtpSink {
  url: string;
  received: Received[];
  /** The first message to `to` that `test` accepts, waiting for it up to `ms`. */
  waitFor(to: string, test?: (message: Received) => boolean, ms?: number): Promise<Received>;
  /** The messages received so far to `address`. */
  to(address: string): Received[];
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setEncoding('utf8');
    let buffer = '';
    let inData = false;
    let current: Received = { from: '', to: [], data: '' };
    const say = (line: string) => socket.write(`${line}\r\n`);
    say('220 sink ESMTP');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffer.slice(0, end).replace(/\r\n\.\./g, '\r\n.');
          buffer = buffer.slice(end + 5);
          received.push(current);
          current = { from: '', to: [], data: '' };
          inData = false;
          say('250 OK');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') say('250 sink');
        else if (verb === 'MAIL') (current.from = /<([^>]*)>/.exec(line)?.[1] ?? ''), say('250 OK');
        else if (verb === 'RCPT') current.to.push(/<([^>]*)>/.exec(line)?.[1] ?? ''), say('250 OK');
        else if (verb === 'DATA') (inData = true), say('354 End data with <CR><LF>.<CR><LF>');
        else if (verb === 'RSET') (current = { from: '', to: [], data: '' }), say('250 OK');
        else if (verb === 'NOOP') say('250 OK');
        else if (verb === 'QUIT') say('221 Bye'), socket.end();
        else say('502 Command not implemented');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    async waitFor(to, test = () => true, ms = 60_000) {
      const until = Date.now() + ms;
      for (;;) {
        const found = received.find((message) => message.to.includes(to) && test(message));
        if (found) return found;
        if (Date.now() > until) throw new Error(`no e-mail to ${to} within ${ms} ms (received: ${received.map((m) => m.to.join(',')).join('; ') || 'none'})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    to: (address) => received.filter((message) => message.to.includes(address)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The text of a message as a reader sees it: quoted-printable soft breaks joined, `=3D` back to `=`. */
export function plainText(message: Received): string {
  return message.data.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A message's body alone, decoded from quoted-printable (as UTF-8) when it was sent so. */
export function bodyOf(message: Received): string {
  const split = message.data.indexOf('\r\n\r\n');
  const headers = message.data.slice(0, split);
  const body = message.data.slice(split + 4);
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(headers)) return body;
  const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}
