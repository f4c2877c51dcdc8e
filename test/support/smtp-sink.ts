/**
 * A real SMTP server on a random local port that keeps every message it is given (RFC 5321's
 * plain dialogue, no TLS, no auth): the service's mailer talks to it as to any mail server, and a
 * test reads what went over the wire.
 */
import { createServer, type Server, type Socket } from 'node:net';

export interface CaughtMail {
  from: string;
  to: string[];
  /** The message as sent: headers, a blank line, the body (quoted-printable or not, as the mailer chose). */
  raw: string;
}

export interface SmtpSink {
  url: string;
  messages: CaughtMail[];
  /** The messages to `address`. */
  to(address: string): CaughtMail[];
  close(): Promise<void>;
}

function serve(socket: Socket, messages: CaughtMail[]): void {
  let buffer = '';
  let data: string[] | undefined;
  let envelope: { from: string; to: string[] } = { from: '', to: [] };
  const reply = (line: string) => socket.write(`${line}\r\n`);
  reply('220 sink.test ESMTP');
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (data) {
        if (line === '.') {
          messages.push({ ...envelope, raw: data.join('\r\n') });
          data = undefined;
          envelope = { from: '', to: [] };
          reply('250 2.0.0 kept');
        } else data.push(line.startsWith('..') ? line.slice(1) : line);
        continue;
      }
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') socket.write('250-sink.test\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n');
      else if (verb === 'HELO') reply('250 sink.test');
      else if (verb === 'MAIL') (envelope.from = /<([^>]*)>/.exec(line)?.[1] ?? ''), reply('250 2.1.0 ok');
      else if (verb === 'RCPT') envelope.to.push(/<([^>]*)>/.exec(line)?.[1] ?? ''), reply('250 2.1.5 ok');
      else if (verb === 'DATA') (data = []), reply('354 end with .');
      else if (verb === 'QUIT') reply('221 bye'), socket.end();
      else reply('250 ok');
    }
  });
  socket.on('error', () => undefined);
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: CaughtMail[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serve(socket, messages);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: (address) => messages.filter((message) => message.to.includes(address)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A message's text body, decoded from quoted-printable when it was sent so. */
export function bodyOf(mail: CaughtMail): string {
  const split = mail.raw.indexOf('\r\n\r\n');
  const headers = mail.raw.slice(0, split);
  const body = mail.raw.slice(split + 4);
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(headers)) return body;
  const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}
