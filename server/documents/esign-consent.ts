/**
 * The ESIGN consent a customer agrees to before signing (15 U.S.C. §7001(c)(1): before a
 * consumer's electronic signature stands for a written one, they consent affirmatively, having
 * been told their right to paper, how to withdraw and what they need to read the record). Each
 * wording has a version; a signature records the version its signer saw. A new wording is a new
 * entry with a new version, never an edit of one already shown.
 */
export interface EsignConsent {
  version: string;
  /** The box's label. */
  label: string;
  /** What the customer is told above the box. */
  text: string;
  /**
   * Whether the wording also asks consent to receive notices about the debt electronically
   * (12 CFR 1006.42(b), E-SIGN §7001(c)): a signature under it lets the validation notice be
   * e-mailed. A wording that does not say so never counts as that consent.
   */
  coversNotices: boolean;
}

const CONSENTS: EsignConsent[] = [
  {
    version: 'esign-2026-11',
    label: 'I agree to sign electronically',
    text:
      'By checking this box and typing your name, you agree to sign this document electronically, and that your electronic signature has the same effect as a handwritten one. ' +
      'You may ask us for a paper copy of this document at no charge, and you may withdraw this consent before you sign by contacting us. ' +
      'To read and keep this document you need a device that can open PDF files. Download the document to keep a copy.',
    coversNotices: false,
  },
  {
    version: 'esign-2026-12',
    label: 'I agree to sign electronically',
    text:
      'By checking this box and typing your name, you agree to sign this document electronically, and that your electronic signature has the same effect as a handwritten one. ' +
      'You also agree to receive notices about this debt, including the validation notice, electronically at your e-mail address instead of on paper. ' +
      'You may ask us for a paper copy of this document or of any notice at no charge, and you may withdraw this consent at any time by contacting us. ' +
      'To read and keep this document and our notices you need a device that can open PDF files and web pages. Download the document to keep a copy.',
    coversNotices: true,
  },
];

/** The wordings whose signature is also a consent to electronic notices. */
export const NOTICE_CONSENT_VERSIONS: string[] = CONSENTS.filter((consent) => consent.coversNotices).map((consent) => consent.version);

/** The wording shown now. */
export const CURRENT_CONSENT: EsignConsent = CONSENTS[CONSENTS.length - 1]!;
