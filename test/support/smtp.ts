/**
 * A real SMTP server on 127.0.0.1 for tests (RFC 5321's plain conversation over TCP: EHLO, HELO,
 * MAIL, RCPT, DATA, RSET, NOOP, QUIT; no STARTTLS, no AUTH), so that tests read what the
 * service's nodemailer put on the wire: the envelope, the headers (unfolded) and the body of each
 * message accepted. The app sends to it with `smtpUrl: smtp.url`, through its own mail job.
 */
import { createServer, type Server, type Socket } from 'node:net';

export interface Received {
  mailFrom: string;
  rcptTo: string[];
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  /** The body as sent (quoted-printable or base64 left as is), one character per byte. */
  body: string;
  /** The whole message as sent: headers, a blank line, the body (dot-stuffing undone), one character per byte. */
  raw: string;
}

export interface SmtpServer {
  url: string;
  received: Received[];
  /** Every message to `address` so far. */
  to(address: string): Received[];
  /** The first message to `address` that `test` accepts, waiting for it up to `ms`. */
  waitFor(address: string, test?: (message: Received) => boolean, ms?: number): Promise<Received>;
  close(): Promise<void>;
}

function parse(raw: string, mailFrom: string, rcptTo: string[]): Received {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { mailFrom, rcptTo, headers, body: split < 0 ? '' : raw.slice(split + 4), raw };
}

function converse(socket: Socket, received: Received[]): void {
  let buffer = '';
  let data: string[] | undefined;
  let mailFrom = '';
  let rcptTo: string[] = [];
  const say = (line: string) => socket.write(`${line}\r\n`);
  say('220 127.0.0.1 ESMTP test');
  socket.on('data', (chunk) => {
    // Bytes as they came (latin1 keeps each one), so that a character split across two
    // chunks is whole again when the message is decoded.
    buffer += chunk.toString('latin1');
    let end: number;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (data) {
        if (line === '.') {
          received.push(parse(data.join('\r\n'), mailFrom, rcptTo));
          data = undefined;
          say('250 2.0.0 accepted');
        } else {
          data.push(line.startsWith('..') ? line.slice(1) : line);
        }
        continue;
      }
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') say('250-127.0.0.1\r\n250-8BITMIME\r\n250 SMTPUTF8');
      else if (verb === 'HELO') say('250 127.0.0.1');
      else if (verb === 'MAIL') {
        mailFrom = /<([^>]*)>/.exec(line)?.[1] ?? '';
        rcptTo = [];
        say('250 2.1.0 ok');
      } else if (verb === 'RCPT') {
        rcptTo.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
        say('250 2.1.5 ok');
      } else if (verb === 'DATA') {
        data = [];
        say('354 go ahead');
      } else if (verb === 'QUIT') {
        say('221 2.0.0 bye');
        socket.end();
      } else if (verb === 'RSET') {
        mailFrom = '';
        rcptTo = [];
        say('250 ok');
      } else if (verb === 'NOOP') say('250 ok');
      else say('502 5.5.2 not implemented');
    }
  });
  socket.on('error', () => undefined);
}

export async function startSmtpServer(): Promise<SmtpServer> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    converse(socket, received);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const to = (address: string) => received.filter((message) => message.rcptTo.includes(address));
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    to,
    async waitFor(address, test = () => true, ms = 60_000) {
      const until = Date.now() + ms;
      for (;;) {
        const found = to(address).find(test);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no e-mail to ${address} within ${ms} ms (received: ${received.map((m) => m.rcptTo.join(',')).join('; ') || 'none'})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

/** Quoted-printable undone (soft breaks joined, `=XX` back to its byte), on text of one character per byte. */
const unquote = (text: string) => text.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
const utf8 = (bytes: string) => Buffer.from(bytes, 'latin1').toString('utf8');

/** The whole message as a reader sees it: quoted-printable undone, read as UTF-8. */
export function plainText(message: Received): string {
  return utf8(unquote(message.raw));
}

/** A message's body alone, read as UTF-8, decoded from quoted-printable when it was sent so. */
export function bodyOf(message: Received): string {
  const quoted = /quoted-printable/i.test(message.headers['content-transfer-encoding'] ?? '');
  return utf8(quoted ? unquote(message.body) : message.body);
}
