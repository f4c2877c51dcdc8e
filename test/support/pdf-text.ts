/**
 * The text a PDF shows, read from its bytes alone (no poppler, no browser: it runs on a fresh
 * machine): each content stream is inflated, and the strings of its text objects (`Tj`, `TJ`)
 * decoded from the standard fonts' WinAnsi encoding; fragments on one baseline are joined as
 * they are printed, lines by a space. Enough for what pdfkit writes with its built-in fonts.
 */
import { inflateSync } from 'node:zlib';

/** WinAnsi's 0x80-0x9F, where it differs from Latin-1. */
const WIN_ANSI: Record<number, string> = { 0x91: '‘', 0x92: '’', 0x93: '“', 0x94: '”', 0x95: '•', 0x96: '–', 0x97: '—', 0x85: '…', 0x80: '€' };

const decodeHex = (hex: string) =>
  Buffer.from(hex.replace(/\s+/g, ''), 'hex')
    .toJSON()
    .data.map((byte) => WIN_ANSI[byte] ?? String.fromCharCode(byte))
    .join('');

function streams(pdf: Buffer): string[] {
  const text = pdf.toString('latin1');
  const found: string[] = [];
  const pattern = /(?<!end)stream\r?\n/g;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text))) {
    const start = match.index + match[0].length;
    const end = text.indexOf('endstream', start);
    if (end < 0) break;
    const bytes = pdf.subarray(start, end);
    try {
      found.push(inflateSync(bytes).toString('latin1'));
    } catch {
      found.push(bytes.toString('latin1'));
    }
    pattern.lastIndex = end;
  }
  return found;
}

/** The PDF's text, pages in order, whitespace as printed between lines collapsed to one space. */
export function pdfText(pdf: Buffer): string {
  const out: string[] = [];
  let lastY: string | undefined;
  for (const content of streams(pdf)) {
    for (const block of content.match(/BT[\s\S]*?ET/g) ?? []) {
      const y = /\s(-?[\d.]+)\s+Tm/.exec(block)?.[1];
      const strings = [...block.matchAll(/\[([^\]]*)\]\s*TJ|<([0-9a-fA-F\s]*)>\s*Tj/g)].flatMap((m) =>
        m[1] !== undefined ? [...m[1].matchAll(/<([0-9a-fA-F\s]*)>/g)].map((s) => decodeHex(s[1]!)) : [decodeHex(m[2]!)],
      );
      if (strings.length === 0) continue;
      out.push(y !== undefined && y === lastY ? '' : ' ', strings.join(''));
      lastY = y;
    }
  }
  return out.join('').replace(/\s+/g, ' ').trim();
}

/** How many pages the PDF has. */
export const pdfPages = (pdf: Buffer): number => (pdf.toString('latin1').match(/\/Type\s*\/Page\b/g) ?? []).length;
