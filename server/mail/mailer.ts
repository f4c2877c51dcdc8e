/**
 * E-mail through nodemailer: SMTP when SMTP_URL is set; otherwise nodemailer's JSON transport,
 * whose messages are written to the log, so that a laptop without a mail server still shows
 * what would have been sent.
 */
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../kernel/config';

export interface Mail {
  /** Default: the deployment's MAIL_FROM (messages to the organization itself). */
  from?: string;
  replyTo?: string;
  /** Our own Message-ID, as the log keeps it. */
  messageId?: string;
  to: string;
  subject: string;
  text: string;
  /** Extra headers (a debtor's e-mail: RFC 8058's List-Unsubscribe and List-Unsubscribe-Post). */
  headers?: Record<string, string>;
}

export type SendMail = (mail: Mail) => Promise<void>;

export function createMailer(config: Config, logger: Logger): SendMail {
  const transport = config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : nodemailer.createTransport({ jsonTransport: true });
  return async (mail) => {
    const { from, replyTo, messageId, ...rest } = mail;
    const info = await transport.sendMail({ ...rest, from: from ?? config.mailFrom, ...(replyTo ? { replyTo } : {}), ...(messageId ? { messageId } : {}) });
    if (config.smtpUrl) logger.info({ to: mail.to, subject: mail.subject, messageId: info.messageId }, 'e-mail sent');
    else logger.info({ mail: JSON.parse(String((info as unknown as { message: unknown }).message)) }, 'e-mail (no SMTP_URL set, so logged instead of sent)');
  };
}
