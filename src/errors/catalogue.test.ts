import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from './catalogue.js';
import * as areas from './codes/index.js';
import { renderErrorsDoc } from './doc.js';
import { AppError } from './index.js';

describe('error catalogue', () => {
  it('is documented: docs/errors.md matches the catalogue (run npm run docs:errors)', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(doc).toBe(renderErrorsDoc());
  });

  it('has UPPER_SNAKE codes, 4xx/5xx statuses (300 only where PostgREST answers it) and a next action for each', () => {
    // PostgREST answers 300 Multiple Choices when a call or an embed could mean several things.
    const MULTIPLE_CHOICES = ['AMBIGUOUS_FUNCTION', 'AMBIGUOUS_RELATION'];
    for (const [code, spec] of Object.entries(ERRORS)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]+$/);
      if (spec.status < 400) expect([code, spec.status]).toEqual([MULTIPLE_CHOICES.find((c) => c === code), 300]);
      else expect(spec.status).toBeGreaterThanOrEqual(400);
      expect(spec.status).toBeLessThan(600);
      expect(spec.nextActions.length).toBeGreaterThan(5);
    }
  });

  it('names each code in one area only (a spread would silently keep the last)', () => {
    const all = Object.values(areas).flatMap((group) => Object.keys(group));
    expect(all.length).toBe(new Set(all).size);
    expect(all.length).toBe(Object.keys(ERRORS).length);
  });

  it('takes the status from the catalogue, never from the throw site', () => {
    const err = new AppError('ALREADY_EXISTS', { message: 'Table "x" already exists.' });
    expect(err.toBody()).toEqual({
      statusCode: 409,
      error: 'ALREADY_EXISTS',
      message: 'Table "x" already exists.',
      nextActions: ERRORS.ALREADY_EXISTS.nextActions,
    });
  });

  it("lets only FUNCTION_RAISED carry a status of its own (a function's raise sqlstate 'PGRST'), and only 400-599", () => {
    expect(new AppError('FUNCTION_RAISED', { status: 402 }).status).toBe(402);
    expect(new AppError('FUNCTION_RAISED', { status: 200 }).status).toBe(400);
    expect(new AppError('INVALID_INPUT', { status: 402 }).status).toBe(400);
  });
});
