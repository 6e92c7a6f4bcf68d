import { AppError } from '../errors/index.js';
import { safe } from './ident.js';

function invalid(message: string): AppError {
  return new AppError('INVALID_QUERY', { message });
}

/** A cursor over the text of a logic tree or an `in` list. */
export class Cursor {
  pos = 0;
  constructor(readonly text: string) {}
  peek(): string | undefined {
    return this.text[this.pos];
  }
  eat(ch: string): boolean {
    if (this.text[this.pos] === ch) {
      this.pos++;
      return true;
    }
    return false;
  }
  expect(ch: string): void {
    if (!this.eat(ch)) throw invalid(`Expected "${ch}" at position ${this.pos + 1} of "${safe(this.text)}".`);
  }
  done(): boolean {
    return this.pos >= this.text.length;
  }
  /** A double-quoted value with \\ and \" escapes. */
  quoted(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      const ch = this.text[this.pos++];
      if (ch === undefined) throw invalid(`Unterminated quoted value in "${safe(this.text)}".`);
      if (ch === '"') return out;
      if (ch === '\\') {
        const next = this.text[this.pos++];
        if (next === undefined) throw invalid(`Unterminated quoted value in "${safe(this.text)}".`);
        out += next;
      } else out += ch;
    }
  }
  /** Text up to (not including) the first of `stops` at this level. */
  until(stops: string): string {
    const start = this.pos;
    while (this.pos < this.text.length && !stops.includes(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }
  /** A dotted word: letters, digits, _ (a column, operator or keyword). */
  word(): string {
    const start = this.pos;
    while (this.pos < this.text.length && /[A-Za-z0-9_]/.test(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }
}
