/**
 * Who an e-mail to a debtor is from, and where a reply goes. The From is the organization's
 * own name (FDCPA §807(14): its true name; settings `sender_name`, default the organization's
 * name), at its `sender_email`, else at the address of the deployment's `MAIL_FROM` (whose
 * display name, a deployment's, is never used for a debtor). A reply reaches the organization:
 * Reply-To is its `reply_to_email`, else its `contact_email` (default: its notification
 * e-mail), else the notification e-mail; with none, a reply goes to the From, which the
 * deployment must read (README). Decided when the message is written and kept on its row.
 */
import type { Settings } from '../settings/settings-keys';

export interface Sender {
  /** The From header as sent (before the encoding of any non-ASCII name). */
  from: string;
  /** The From's address alone (the Message-ID's domain). */
  address: string;
  replyTo: string | null;
}

/** The address of a From such as `Name <a@b>`, or the text itself. */
export function addressOf(mailbox: string): string {
  const angled = /<([^<>]+)>\s*$/.exec(mailbox);
  return (angled ? angled[1]! : mailbox).trim();
}

/** A display name as it goes on the wire: quoted only when RFC 5322 asks (as nodemailer writes it). */
const displayName = (name: string) => (/[()<>[\]:;@\\,."]/.test(name) ? `"${name.replace(/["\\]/g, (c) => `\\${c}`)}"` : name);

export function senderOf(settings: Settings & { organization_name: string; notification_email: string | null }, mailFrom: string): Sender {
  const address = settings.sender_email ?? addressOf(mailFrom);
  const name = settings.sender_name || settings.organization_name;
  return {
    from: name ? `${displayName(name)} <${address}>` : address,
    address,
    replyTo: settings.reply_to_email ?? settings.contact_email ?? settings.notification_email ?? null,
  };
}

/** The further headers of a message: its Message-ID (so the log can be matched to the wire), and RFC 8058's one-click unsubscribe. */
export function headersOf(id: string, sender: Sender, optOutUrl: string): Record<string, string> {
  const domain = sender.address.split('@')[1] ?? 'localhost';
  return {
    'Message-ID': `<${id}@${domain}>`,
    'List-Unsubscribe': `<${optOutUrl}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}
