/**
 * The validation notice as an accessible HTML page: the template's sections in reading order,
 * real headings, the itemization as a table with its headers, the response form's choices as a
 * labelled list (or, in the Portal, as links into the dispute form), the page's language set.
 * Self-contained (one inline style sheet, no script), so it can be saved and printed.
 */
import { lineText, signed, type ItemRow, type Line, type NoticeContent } from './notice-template';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const run = (text: string, strong?: boolean) => (strong ? `<strong>${escape(text)}</strong>` : escape(text));
const line = (runs: Line) => runs.map((r) => (r.lang ? `<span lang="${r.lang}">${run(r.text, r.strong)}</span>` : run(r.text, r.strong))).join('');
const lines = (texts: string[]) => texts.map(escape).join('<br>');
const row = (item: ItemRow, total = false) =>
  `<tr${total ? ' class="total"' : ''}><th scope="row">${escape(item.label)}</th><td>${escape(signed(item))}</td></tr>`;

export type ResponseLinks = Partial<Record<NoticeContent['form']['choices'][number]['key'], string>>;

const STYLE = `
body{font-family:Helvetica,Arial,sans-serif;color:#111;max-width:46rem;margin:1.5rem auto;padding:0 1rem;line-height:1.45;font-size:1rem;overflow-wrap:anywhere}
header{display:flex;flex-wrap:wrap;justify-content:space-between;gap:1rem;margin-bottom:1.25rem}
address{font-style:normal}
h1{font-size:1.35rem;margin:0 0 .75rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem;border-bottom:2px solid #111;padding-bottom:.2rem}
h3{font-size:1rem;margin:1rem 0 .25rem}
table{border-collapse:collapse;width:100%;margin:.25rem 0 .75rem}
th{text-align:left;font-weight:normal;padding:.2rem .5rem .2rem 0}
td{text-align:right;white-space:nowrap;padding:.2rem 0;font-variant-numeric:tabular-nums}
tr.total th,tr.total td{font-weight:bold;border-top:1px solid #111}
tr.grand th,tr.grand td{font-weight:bold;border-top:2px solid #111;font-size:1.05rem}
.between{margin:.25rem 0 0}
ul.rights{padding-left:1.25rem}
ul.rights li{margin-bottom:.5rem}
.form{margin-top:2rem;border-top:2px dashed #111;padding-top:1rem}
.form ul{list-style:none;padding-left:0}
.form li{margin:.35rem 0}
.box{display:inline-block;width:.9em;height:.9em;border:1.5px solid #111;vertical-align:-.1em;margin-right:.5em}
.cols{display:flex;flex-wrap:wrap;gap:2rem}
a{color:#0b4f9c}
`;

export function noticeHtml(content: NoticeContent, links: ResponseLinks = {}): string {
  const accounts = content.accounts
    .map(
      (section) => `<section class="account">
<p>${line(section.intro)}</p>
<table>
<tbody>${row(section.as_of)}</tbody>
</table>
<p class="between">${escape(section.between)}</p>
<table>
<tbody>${section.rows.map((item) => row(item)).join('')}${row(section.total, true)}</tbody>
</table>
</section>`,
    )
    .join('\n');
  const grand = content.grand_total ? `<table><tbody><tr class="grand"><th scope="row">${escape(content.grand_total.label)}</th><td>${escape(signed(content.grand_total))}</td></tr></tbody></table>` : '';
  const choice = (key: NoticeContent['form']['choices'][number]['key'], label: string) =>
    links[key]
      ? `<li${key === 'spanish' ? ' lang="es"' : ''}><a href="${escape(links[key]!)}">${escape(label)}</a></li>`
      : `<li${key === 'spanish' && content.lang !== 'es' ? ' lang="es"' : ''}><span class="box" aria-hidden="true"></span>${escape(label)}</li>`;
  const { form } = content;
  return `<!doctype html>
<html lang="${content.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(content.title)} – ${escape(content.collector_lines[0]!)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<header>
<address aria-label="${escape(content.collector_lines[0]!)}"><strong>${escape(content.collector_lines[0]!)}</strong><br>${lines(content.collector_lines.slice(1))}</address>
<div>
<p><strong>${escape(content.to_label)}</strong><br>${lines(content.consumer_lines)}</p>
<p><strong>${escape(content.date_label)}</strong> ${escape(content.date)}<br><strong>${escape(content.reference_label)}</strong> ${escape(content.reference)}</p>
</div>
</header>
<h1>${escape(content.title)}</h1>
<p>${line(content.opening)}</p>
<h2>${escape(content.information_heading)}</h2>
${accounts}
${grand}
<h2>${escape(content.dispute_heading)}</h2>
<ul class="rights">${content.dispute_items.map((item) => `<li>${line(item)}</li>`).join('')}</ul>
<h2>${escape(content.else_heading)}</h2>
<ul class="rights">${content.else_items.map((item) => `<li>${line(item)}</li>`).join('')}</ul>
<section class="form" aria-labelledby="respond">
<div class="cols">
<p><strong>${escape(form.mail_to_label)}</strong><br>${lines(form.mail_to)}</p>
<p>${lines(form.from_lines)}<br><strong>${escape(content.reference_label)}</strong> ${escape(content.reference)}</p>
</div>
<h2 id="respond">${escape(form.respond_heading)}</h2>
<p>${escape(form.check_all)}</p>
<h3>${escape(form.dispute_because)}</h3>
<ul>${form.choices.filter((c) => c.group === 'dispute').map((c) => choice(c.key, c.label)).join('')}</ul>
<ul>${form.choices.filter((c) => c.group === 'request').map((c) => choice(c.key, c.label)).join('')}</ul>
<p><span class="box" aria-hidden="true"></span>${escape(form.enclosed)} $ ____________</p>
<p>${line(form.payable)}</p>
</section>
</main>
</body>
</html>
`;
}

/** The notice as the text of an e-mail: the same sections, one after another. */
export function noticeText(content: NoticeContent): string {
  const money = (item: ItemRow) => `${item.label} ${signed(item)}`;
  const { form } = content;
  return [
    content.title.toUpperCase(),
    '',
    content.collector_lines.join('\n'),
    '',
    `${content.to_label} ${content.consumer_lines.join(', ')}`,
    `${content.date_label} ${content.date}`,
    `${content.reference_label} ${content.reference}`,
    '',
    lineText(content.opening),
    '',
    content.information_heading,
    ...content.accounts.flatMap((section) => ['', lineText(section.intro), money(section.as_of), section.between, ...section.rows.map((item) => `  ${money(item)}`), money(section.total)]),
    ...(content.grand_total ? ['', money(content.grand_total)] : []),
    '',
    content.dispute_heading,
    ...content.dispute_items.map((item) => `- ${lineText(item)}`),
    '',
    content.else_heading,
    ...content.else_items.map((item) => `- ${lineText(item)}`),
    '',
    `${form.respond_heading} ${form.mail_to_label} ${form.mail_to.join(', ')}`,
    form.check_all,
    form.dispute_because,
    ...form.choices.filter((c) => c.group === 'dispute').map((c) => `[ ] ${c.label}`),
    ...form.choices.filter((c) => c.group === 'request').map((c) => `[ ] ${c.label}`),
    `[ ] ${form.enclosed} $`,
    lineText(form.payable),
  ].join('\n');
}
