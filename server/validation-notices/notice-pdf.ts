/**
 * The validation notice as a PDF, with pdfkit (pure JavaScript: it works from `npm ci` alone,
 * no browser): US Letter, the template's sections in the form's order, the itemization with its
 * amounts aligned, and the response form below a dashed tear-off line (on a page of its own when
 * it does not fit). Helvetica's WinAnsi encoding covers Spanish (á, é, ñ, ¿, ¡) and the en dash.
 */
import PDFDocument from 'pdfkit';
import { signed, type ItemRow, type Line, type NoticeContent } from './notice-template';

const MARGIN = 54;
const WIDTH = 612 - 2 * MARGIN;
const AMOUNT_WIDTH = 90;
const REGULAR = 'Helvetica';
const BOLD = 'Helvetica-Bold';

type Doc = PDFKit.PDFDocument;

const BOTTOM = 792 - MARGIN;

/** A new page when fewer than `height` points are left: a bullet or a row is never split from its marker. */
function ensure(doc: Doc, height: number): void {
  if (doc.y + height > BOTTOM) doc.addPage();
}

/** The height of a line of runs in `width` (bold counted as bold: the widest case). */
const heightOf = (doc: Doc, runs: Line, width: number, size = 10.5) => doc.font(BOLD).fontSize(size).heightOfString(runs.map((run) => run.text).join(''), { width, lineGap: 1.5 });

/** A line of runs, bold where the template says, wrapped in `width` from `x` (the current y). */
function writeLine(doc: Doc, runs: Line, x: number, width: number, size = 10.5): void {
  doc.fontSize(size);
  runs.forEach((run, index) => {
    doc.font(run.strong ? BOLD : REGULAR);
    const last = index === runs.length - 1;
    if (index === 0) doc.text(run.text, x, doc.y, { width, continued: !last, lineGap: 1.5 });
    else doc.text(run.text, { continued: !last, lineGap: 1.5 });
  });
  doc.font(REGULAR);
}

function heading(doc: Doc, text: string): void {
  // A heading keeps at least its first few lines with it.
  ensure(doc, 130);
  doc.moveDown(0.8);
  doc.font(BOLD).fontSize(12.5).text(text, MARGIN, doc.y, { width: WIDTH });
  const y = doc.y + 2;
  doc.moveTo(MARGIN, y).lineTo(MARGIN + WIDTH, y).lineWidth(1.2).stroke();
  doc.y = y + 6;
  doc.font(REGULAR).fontSize(10.5);
}

/** A label with its amount at the right edge; a total is bold above a rule. */
function amountRow(doc: Doc, item: ItemRow, x: number, style: 'plain' | 'total' = 'plain'): void {
  ensure(doc, 20);
  const y = doc.y;
  if (style === 'total') doc.moveTo(x, y - 2).lineTo(MARGIN + WIDTH, y - 2).lineWidth(0.8).stroke();
  doc.font(style === 'total' ? BOLD : REGULAR).fontSize(10.5);
  doc.text(item.label, x, y, { width: MARGIN + WIDTH - x - AMOUNT_WIDTH - 8 });
  const after = doc.y;
  doc.text(signed(item), MARGIN + WIDTH - AMOUNT_WIDTH, y, { width: AMOUNT_WIDTH, align: 'right' });
  doc.y = Math.max(after, doc.y) + 3;
  doc.font(REGULAR);
}

function bullets(doc: Doc, items: Line[]): void {
  for (const item of items) {
    ensure(doc, heightOf(doc, item, WIDTH - 16) + 4);
    const y = doc.y;
    doc.font(REGULAR).fontSize(10.5).text('•', MARGIN + 4, y);
    doc.y = y;
    writeLine(doc, item, MARGIN + 16, WIDTH - 16);
    doc.moveDown(0.35);
  }
}

function checkbox(doc: Doc, label: string, x: number): void {
  const y = doc.y;
  doc.rect(x, y + 1, 9, 9).lineWidth(0.9).stroke();
  doc.font(REGULAR).fontSize(10.5).text(label, x + 16, y, { width: MARGIN + WIDTH - x - 16 });
  doc.moveDown(0.3);
}

function responseForm(doc: Doc, content: NoticeContent): void {
  const { form } = content;
  // About 250 points: below the dashed line, or on a page of its own.
  ensure(doc, 270);
  doc.moveDown(1);
  const cut = doc.y;
  doc.save().moveTo(MARGIN, cut).lineTo(MARGIN + WIDTH, cut).dash(4, { space: 3 }).lineWidth(1).stroke().undash().restore();
  doc.y = cut + 12;
  const top = doc.y;
  doc.font(BOLD).fontSize(10.5).text(form.mail_to_label, MARGIN, top, { width: WIDTH / 2 - 10 });
  doc.font(REGULAR).text(form.mail_to.join('\n'), { width: WIDTH / 2 - 10 });
  const left = doc.y;
  doc.font(REGULAR).text(form.from_lines.join('\n'), MARGIN + WIDTH / 2, top, { width: WIDTH / 2 });
  doc.font(BOLD).text(`${content.reference_label} `, { continued: true }).font(REGULAR).text(content.reference);
  doc.y = Math.max(left, doc.y) + 6;
  doc.font(BOLD).fontSize(13).text(form.respond_heading, MARGIN, doc.y, { width: WIDTH });
  doc.font(REGULAR).fontSize(10.5).text(form.check_all, MARGIN, doc.y + 2, { width: WIDTH });
  doc.moveDown(0.4);
  doc.font(BOLD).text(form.dispute_because, MARGIN, doc.y, { width: WIDTH });
  doc.moveDown(0.2);
  for (const choice of form.choices.filter((c) => c.group === 'dispute')) checkbox(doc, choice.label, MARGIN + 12);
  doc.moveDown(0.3);
  for (const choice of form.choices.filter((c) => c.group === 'request')) checkbox(doc, choice.label, MARGIN);
  checkbox(doc, `${form.enclosed}  $ ______________`, MARGIN);
  doc.moveDown(0.2);
  writeLine(doc, form.payable, MARGIN, WIDTH);
}

/** The notice's PDF. `createdAt` is written as its creation date, so the bytes depend on the notice alone. */
export function noticePdf(content: NoticeContent, createdAt: Date): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'LETTER',
    margin: MARGIN,
    lang: content.lang === 'es' ? 'es-US' : 'en-US',
    info: { Title: `${content.title} – ${content.collector_lines[0]}`, Author: content.collector_lines[0]!, Creator: content.collector_lines[0]!, CreationDate: createdAt, ModDate: createdAt },
    displayTitle: true,
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  // The collector (left) and the consumer (right), as on the form's top.
  const top = doc.y;
  doc.font(BOLD).fontSize(11).text(content.collector_lines[0]!, MARGIN, top, { width: WIDTH / 2 - 10 });
  doc.font(REGULAR).fontSize(10).text(content.collector_lines.slice(1).join('\n'), { width: WIDTH / 2 - 10 });
  const left = doc.y;
  const right = MARGIN + WIDTH / 2 + 20;
  doc.font(BOLD).fontSize(10).text(`${content.date_label} `, right, top, { continued: true }).font(REGULAR).text(content.date);
  doc.font(BOLD).text(`${content.reference_label} `, { continued: true }).font(REGULAR).text(content.reference);
  doc.moveDown(0.6);
  doc.font(BOLD).text(content.to_label, right, doc.y);
  doc.font(REGULAR).text(content.consumer_lines.join('\n'), right, doc.y, { width: WIDTH / 2 - 20 });
  doc.y = Math.max(left, doc.y) + 18;

  doc.font(BOLD).fontSize(15).text(content.title, MARGIN, doc.y, { width: WIDTH });
  doc.moveDown(0.4);
  writeLine(doc, content.opening, MARGIN, WIDTH, 11);

  heading(doc, content.information_heading);
  for (const section of content.accounts) {
    ensure(doc, 150);
    writeLine(doc, section.intro, MARGIN, WIDTH);
    doc.moveDown(0.3);
    amountRow(doc, section.as_of, MARGIN);
    doc.font(REGULAR).fontSize(10.5).text(section.between, MARGIN, doc.y, { width: WIDTH });
    doc.moveDown(0.2);
    for (const row of section.rows) amountRow(doc, row, MARGIN + 14);
    doc.moveDown(0.2);
    amountRow(doc, section.total, MARGIN, 'total');
    doc.moveDown(0.5);
  }
  if (content.grand_total) amountRow(doc, content.grand_total, MARGIN, 'total');

  heading(doc, content.dispute_heading);
  bullets(doc, content.dispute_items);
  heading(doc, content.else_heading);
  bullets(doc, content.else_items);

  responseForm(doc, content);
  doc.end();
  return done;
}
