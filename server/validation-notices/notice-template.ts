/**
 * The one template of the validation notice: the CFPB's Model Form B-1 (appendix B to 12 CFR
 * part 1006) and its Spanish version, in words. It answers the notice's content as plain
 * sections; html.ts, pdf.ts and text.ts only lay them out, so every format says the same
 * thing, in the same order, in the same words.
 */
import type { NoticeAccount, NoticeData, NoticeLanguage } from './notice-data';

/** A run of text; `strong` is bold, `date`/`amount` are values filled in (bold on the form). */
export type Run = { text: string; strong?: boolean; /** Set on the English form's Spanish sentence, so a screen reader speaks it in Spanish. */ lang?: 'es' };
export type Line = Run[];

export interface ItemRow {
  label: string;
  /** Cents, with its sign on the form: `+` interest and fees, `-` payments. */
  amount: number;
  sign: '' | '+' | '-';
}

export interface AccountSection {
  intro: Line;
  as_of: ItemRow;
  between: string;
  rows: ItemRow[];
  total: ItemRow;
}

export interface NoticeContent {
  lang: NoticeLanguage;
  title: string;
  collector_lines: string[];
  to_label: string;
  consumer_lines: string[];
  reference_label: string;
  reference: string;
  date_label: string;
  date: string;
  opening: Line;
  information_heading: string;
  accounts: AccountSection[];
  /** The sum of several accounts; null for one. */
  grand_total: ItemRow | null;
  dispute_heading: string;
  dispute_items: Line[];
  else_heading: string;
  else_items: Line[];
  form: {
    heading: string;
    mail_to_label: string;
    mail_to: string[];
    from_lines: string[];
    respond_heading: string;
    check_all: string;
    dispute_because: string;
    choices: { key: 'not_mine' | 'wrong_amount' | 'other' | 'original_creditor' | 'spanish'; label: string; group: 'dispute' | 'request' }[];
    enclosed: string;
    payable: Line;
  };
}

const DATE_LOCALE: Record<NoticeLanguage, string> = { en: 'en-US', es: 'es-US' };

export function formatDate(day: string, lang: NoticeLanguage): string {
  const options: Intl.DateTimeFormatOptions = { timeZone: 'UTC', year: 'numeric', month: 'long', day: 'numeric' };
  return new Intl.DateTimeFormat(DATE_LOCALE[lang], options).format(new Date(`${day}T00:00:00.000Z`));
}

export const formatMoney = (cents: number): string => `$${(Math.abs(cents) / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

const CFPB = 'www.cfpb.gov/debt-collection';

interface Words {
  title: string;
  to: string;
  reference: string;
  date: string;
  opening: (collector: string, creditor: string) => Line;
  information: string;
  had: (account: NoticeAccount) => Line;
  as_of: (date: string) => string;
  between: (date: string) => string;
  interest: string;
  fees: string;
  payments: string;
  total: string;
  all_total: string;
  dispute_heading: string;
  dispute: (ends: string, online: string | null) => Line[];
  else_heading: string;
  else_items: (ends: string, online: string | null) => Line[];
  form_heading: string;
  mail_to: string;
  respond: string;
  check_all: string;
  because: string;
  not_mine: string;
  wrong_amount: string;
  other: string;
  original_creditor: string;
  spanish: string | null;
  enclosed: string;
  payable: (collector: string, reference: string) => Line;
}

const b = (text: string): Run => ({ text, strong: true });
const t = (text: string): Run => ({ text });

const EN: Words = {
  title: 'Validation notice',
  to: 'To:',
  reference: 'Reference:',
  date: 'Date:',
  opening: (collector, creditor) => [b(collector), t(' is a debt collector. We are trying to collect a debt that you owe to '), b(creditor), t('. We will use any information you give us to help collect the debt.')],
  information: 'Our information shows:',
  had: (account) => [t(`You had ${account.product ? `${/^[aeiou]/i.test(account.product) ? 'an' : 'a'} ${account.product}` : 'an account'} from `), b(account.creditor_then), t(' with account number '), b(account.reference), t('.')],
  as_of: (date) => `As of ${date}, you owed:`,
  between: (date) => `Between ${date} and today:`,
  interest: 'You were charged this amount in interest:',
  fees: 'You were charged this amount in fees:',
  payments: 'You paid or were credited this amount toward the debt:',
  total: 'Total amount of the debt now:',
  all_total: 'Total amount of the debts now:',
  dispute_heading: 'How can you dispute the debt?',
  dispute: (ends, online) => [
    [b('Call or write to us by '), b(ends), b(', to dispute all or part of the debt.'), t(' If you do not, we will assume that our information is correct.')],
    [
      b('If you write to us by '),
      b(ends),
      t(', we must stop collection on any amount you dispute until we send you information that shows you owe the debt. You may use the form below or write to us without the form. You may also include supporting documents.'),
      ...(online ? [t(' We accept disputes electronically at '), b(online), t('.')] : []),
    ],
  ],
  else_heading: 'What else can you do?',
  else_items: (ends, online) => [
    [
      b('Write to ask for the name and address of the original creditor, if different from the current creditor.'),
      t(' If you write by '),
      b(ends),
      t(', we must stop collection until we send you that information. You may use the form below or write to us without the form.'),
      ...(online ? [t(' We accept such requests electronically at '), b(online), t('.')] : []),
    ],
    [b('Go to '), b(CFPB), t(' to learn more about your rights under federal law. For instance, you have the right to stop or limit how we contact you.')],
    [b('Contact us about your payment options.')],
    [{ text: 'Póngase en contacto con nosotros para solicitar una copia de este formulario en español.', strong: true, lang: 'es' }],
  ],
  form_heading: 'How do you want to respond?',
  mail_to: 'Mail this form to:',
  respond: 'How do you want to respond?',
  check_all: 'Check all that apply:',
  because: 'I want to dispute the debt because I think:',
  not_mine: 'This is not my debt.',
  wrong_amount: 'The amount is wrong.',
  other: 'Other (please describe on reverse or attach additional information).',
  original_creditor: 'I want you to send me the name and address of the original creditor.',
  spanish: 'Quiero este formulario en español.',
  enclosed: 'I enclosed this amount:',
  payable: (collector, reference) => [t('Make your check payable to '), b(collector), t('. Include the reference number '), b(reference), t('.')],
};

const ES: Words = {
  title: 'Aviso de validación',
  to: 'Para:',
  reference: 'Referencia:',
  date: 'Fecha:',
  opening: (collector, creditor) => [b(collector), t(' es un cobrador de deudas. Estamos tratando de cobrar una deuda que usted le debe a '), b(creditor), t('. Usaremos cualquier información que usted nos dé para ayudar a cobrar la deuda.')],
  information: 'Nuestra información indica que:',
  had: (account) => [t(`Usted tenía una cuenta${account.product ? ` (${account.product})` : ''} de `), b(account.creditor_then), t(' con el número de cuenta '), b(account.reference), t('.')],
  as_of: (date) => `Al ${date}, usted debía:`,
  between: (date) => `Entre el ${date} y hoy:`,
  interest: 'Se le cobró esta cantidad en intereses:',
  fees: 'Se le cobró esta cantidad en cargos:',
  payments: 'Usted pagó o se le acreditó esta cantidad a la deuda:',
  total: 'Cantidad total de la deuda ahora:',
  all_total: 'Cantidad total de las deudas ahora:',
  dispute_heading: '¿Cómo puede usted disputar la deuda?',
  dispute: (ends, online) => [
    [b('Llámenos o escríbanos antes del '), b(ends), b(' para disputar toda o parte de la deuda.'), t(' Si no lo hace, asumiremos que nuestra información es correcta.')],
    [
      b('Si nos escribe antes del '),
      b(ends),
      t(', debemos dejar de cobrar cualquier cantidad que usted dispute hasta que le enviemos información que demuestre que usted debe la deuda. Puede usar el formulario a continuación o puede escribirnos sin el formulario. También puede incluir documentos de respaldo.'),
      ...(online ? [t(' Aceptamos disputas electrónicamente en '), b(online), t('.')] : []),
    ],
  ],
  else_heading: '¿Qué más puede hacer usted?',
  else_items: (ends, online) => [
    [
      b('Escríbanos para pedirnos el nombre y la dirección del acreedor original, si es diferente del acreedor actual.'),
      t(' Si nos escribe antes del '),
      b(ends),
      t(', debemos dejar de cobrar hasta que le enviemos esa información. Puede usar el formulario a continuación o puede escribirnos sin el formulario.'),
      ...(online ? [t(' Aceptamos este tipo de solicitudes electrónicamente en '), b(online), t('.')] : []),
    ],
    [b('Visite '), b(CFPB), t(' para obtener más información sobre sus derechos según la ley federal. Por ejemplo, usted tiene derecho a impedir o limitar la forma en que nos comunicamos con usted.')],
    [b('Comuníquese con nosotros para conocer sus opciones de pago.')],
  ],
  form_heading: '¿Cómo desea responder?',
  mail_to: 'Envíe este formulario por correo a:',
  respond: '¿Cómo desea responder?',
  check_all: 'Marque todas las opciones que correspondan:',
  because: 'Quiero disputar la deuda porque creo que:',
  not_mine: 'Esta no es mi deuda.',
  wrong_amount: 'La cantidad es incorrecta.',
  other: 'Otra razón (por favor, describa la razón al reverso o adjunte información adicional).',
  original_creditor: 'Quiero que me envíen el nombre y la dirección del acreedor original.',
  spanish: null,
  enclosed: 'Adjunto esta cantidad:',
  payable: (collector, reference) => [t('Haga su cheque pagadero a '), b(collector), t('. Incluya el número de referencia '), b(reference), t('.')],
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, es: ES };

function accountSection(words: Words, account: NoticeAccount, lang: NoticeLanguage): AccountSection {
  const { itemization } = account;
  const day = formatDate(itemization.itemization_date, lang);
  return {
    intro: words.had(account),
    as_of: { label: words.as_of(day), amount: itemization.amount, sign: '' },
    between: words.between(day),
    rows: [
      { label: words.interest, amount: itemization.interest, sign: '+' },
      { label: words.fees, amount: itemization.fees, sign: '+' },
      { label: words.payments, amount: itemization.payments_and_credits, sign: '-' },
    ],
    total: { label: words.total, amount: itemization.amount + itemization.interest + itemization.fees - itemization.payments_and_credits, sign: '' },
  };
}

/** The notice's content in its language. */
export function noticeContent(data: NoticeData): NoticeContent {
  const lang = data.language;
  const words = WORDS[lang];
  const ends = formatDate(data.ends_on, lang);
  const { collector, consumer } = data;
  const collectorLines = [collector.name, ...collector.address, ...(collector.phone ? [collector.phone] : []), ...(collector.email ? [collector.email] : [])];
  const accounts = data.accounts.map((account) => accountSection(words, account, lang));
  const total = accounts.reduce((sum, section) => sum + section.total.amount, 0);
  return {
    lang,
    title: words.title,
    collector_lines: collectorLines,
    to_label: words.to,
    consumer_lines: [consumer.name, ...consumer.address],
    reference_label: words.reference,
    reference: data.reference,
    date_label: words.date,
    date: formatDate(data.sent_on, lang),
    opening: words.opening(collector.name, data.current_creditor),
    information_heading: words.information,
    accounts,
    grand_total: accounts.length > 1 ? { label: words.all_total, amount: total, sign: '' } : null,
    dispute_heading: words.dispute_heading,
    dispute_items: words.dispute(ends, data.dispute_online),
    else_heading: words.else_heading,
    else_items: words.else_items(ends, data.dispute_online),
    form: {
      heading: words.form_heading,
      mail_to_label: words.mail_to,
      mail_to: [collector.name, ...collector.address],
      from_lines: [consumer.name, ...consumer.address],
      respond_heading: words.respond,
      check_all: words.check_all,
      dispute_because: words.because,
      choices: [
        { key: 'not_mine', label: words.not_mine, group: 'dispute' },
        { key: 'wrong_amount', label: words.wrong_amount, group: 'dispute' },
        { key: 'other', label: words.other, group: 'dispute' },
        { key: 'original_creditor', label: words.original_creditor, group: 'request' },
        ...(words.spanish ? [{ key: 'spanish' as const, label: words.spanish, group: 'request' as const }] : []),
      ],
      enclosed: words.enclosed,
      payable: words.payable(collector.name, data.reference),
    },
  };
}

export const lineText = (line: Line): string => line.map((run) => run.text).join('');
export const signed = (row: ItemRow): string => `${row.sign === '-' ? '– ' : row.sign === '+' ? '+ ' : ''}${formatMoney(row.amount)}`;
