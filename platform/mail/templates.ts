/**
 * E-mail templates, two files per e-mail in a service's `mail/` folder: `<name>.txt` (its first line
 * `Subject: ...`, then the plain text) and `<name>.html`. Mustache fills them in; values are
 * HTML-escaped in the HTML part only. A piece several e-mails share is a partial, `_<piece>.txt` and
 * `_<piece>.html` beside them, included as `{{> piece}}`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Mustache from 'mustache';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export type TemplateData = Record<string, unknown>;

const SUBJECT_LINE = /^Subject: (.*)\r?\n/;
const verbatim = (value: unknown) => String(value);
const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** The five characters that matter in HTML text and quoted attributes (Mustache's own escape also rewrites `/` and `=`, which makes links unreadable in the source). */
const escapeHtml = (value: unknown) => String(value).replace(/[&<>"']/g, (char) => HTML_ENTITIES[char]);

export class MailTemplates {
  private readonly cache = new Map<string, { subject: string; text: string; html: string }>();
  private readonly files = new Map<string, string>();

  constructor(private readonly dir: string) {}

  /** Throws unless the template `name` exists, both files, its text starting with a subject line. */
  check(name: string): void {
    this.load(name);
  }

  render(name: string, data: TemplateData): RenderedMail {
    const template = this.load(name);
    return {
      subject: Mustache.render(template.subject, data, {}, { escape: verbatim }).replace(/\s+/g, ' ').trim(),
      text: Mustache.render(template.text, data, (piece) => this.file(`_${piece}.txt`), { escape: verbatim }),
      html: Mustache.render(template.html, data, (piece) => this.file(`_${piece}.html`), { escape: escapeHtml }),
    };
  }

  private file(name: string): string {
    let text = this.files.get(name);
    if (text === undefined) {
      text = fs.readFileSync(path.join(this.dir, name), 'utf8');
      this.files.set(name, text);
    }
    return text;
  }

  private load(name: string) {
    let template = this.cache.get(name);
    if (!template) {
      const text = this.file(`${name}.txt`);
      const subject = SUBJECT_LINE.exec(text);
      if (!subject) throw new Error(`The template ${name}.txt must start with a "Subject: " line`);
      template = { subject: subject[1], text: text.slice(subject[0].length), html: this.file(`${name}.html`) };
      this.cache.set(name, template);
    }
    return template;
  }
}
