import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';

export const TEMPLATE_KEYS = ['verification', 'reset-password', 'magic-link'] as const;
export type TemplateKey = (typeof TEMPLATE_KEYS)[number];

export interface Template {
  key: TemplateKey;
  subject: string;
  text: string;
  html: string | null;
  /** false: the built-in text (no row stored). */
  custom: boolean;
  updatedAt: string | null;
}

/** The built-in auth emails; {{code}}, {{minutes}} and {{email}} are filled in when sent. */
export const DEFAULTS: Record<TemplateKey, { subject: string; text: string }> = {
  verification: {
    subject: 'Your verification code: {{code}}',
    text: 'Your verification code is {{code}}.\n\nIt is valid for {{minutes}} minutes. If you did not sign up, ignore this email.\n',
  },
  'reset-password': {
    subject: 'Your password reset code: {{code}}',
    text: 'Your password reset code is {{code}}.\n\nIt is valid for {{minutes}} minutes. If you did not ask to reset your password, ignore this email: your password stays as it is.\n',
  },
  'magic-link': {
    subject: 'Your sign-in code: {{code}}',
    text: 'Your sign-in code is {{code}}.\n\nIt is valid for {{minutes}} minutes. If you did not ask to sign in, ignore this email.\n',
  },
};

/** The auth code purposes each template serves. */
const BY_PURPOSE: Record<string, TemplateKey> = {
  verify_email: 'verification',
  reset_password: 'reset-password',
  sign_in: 'magic-link',
};

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Fills {{name}} placeholders; in HTML the values are escaped. Unknown names stay as written. */
export function fill(template: string, vars: Record<string, string>, html = false): string {
  return template.replace(/\{\{\s*([a-z]+)\s*\}\}/g, (whole, name: string) => {
    const v = vars[name];
    if (v === undefined) return whole;
    return html ? v.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!) : v;
  });
}

/** The templates of the auth emails, stored in the database, with a preview. */
export class TemplateStore {
  constructor(private readonly db: Db) {}

  private check(key: string): TemplateKey {
    if (!(TEMPLATE_KEYS as readonly string[]).includes(key))
      throw new AppError('TEMPLATE_NOT_FOUND', {
        message: `No template "${key}"; the templates are ${TEMPLATE_KEYS.join(', ')}.`,
      });
    return key as TemplateKey;
  }

  async get(key: string): Promise<Template> {
    const k = this.check(key);
    const { rows } = await this.db.query<{ subject: string; text: string; html: string | null; updated_at: Date }>(
      'select subject, text, html, updated_at from email.templates where key = $1',
      [k],
    );
    const r = rows[0];
    return r
      ? {
          key: k,
          subject: r.subject,
          text: r.text,
          html: r.html,
          custom: true,
          updatedAt: new Date(r.updated_at).toISOString(),
        }
      : { key: k, ...DEFAULTS[k], html: null, custom: false, updatedAt: null };
  }

  async list(): Promise<Template[]> {
    return Promise.all(TEMPLATE_KEYS.map((k) => this.get(k)));
  }

  async put(key: string, t: { subject: string; text: string; html?: string | null }): Promise<Template> {
    const k = this.check(key);
    await this.db.query(
      `insert into email.templates (key, subject, text, html) values ($1, $2, $3, $4)
       on conflict (key) do update set subject = excluded.subject, text = excluded.text, html = excluded.html, updated_at = now()`,
      [k, t.subject, t.text, t.html ?? null],
    );
    return this.get(k);
  }

  /** Back to the built-in text. */
  async reset(key: string): Promise<Template> {
    const k = this.check(key);
    await this.db.query('delete from email.templates where key = $1', [k]);
    return this.get(k);
  }

  /** The mail a template makes with these values (stored or given, for a preview before saving). */
  async render(
    key: string,
    vars: Record<string, string>,
    draft?: { subject: string; text: string; html?: string | null },
  ): Promise<{ subject: string; text: string; html: string | null }> {
    const t = draft ?? (await this.get(key));
    this.check(key);
    return {
      subject: fill(t.subject, vars).replace(/[\r\n]+/g, ' '),
      text: fill(t.text, vars),
      html: t.html ? fill(t.html, vars, true) : null,
    };
  }

  /** For the auth service: the mail of a code purpose, from the stored template; null for the built-in one. */
  async forPurpose(
    purpose: string,
    vars: Record<string, string>,
  ): Promise<{ subject: string; text: string; html?: string } | null> {
    const key = BY_PURPOSE[purpose];
    if (!key) return null;
    const t = await this.get(key);
    if (!t.custom) return null;
    const r = await this.render(key, vars, t);
    return { subject: r.subject, text: r.text, ...(r.html ? { html: r.html } : {}) };
  }
}
