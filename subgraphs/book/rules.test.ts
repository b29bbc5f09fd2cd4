import { isbnProblem, normalizeIsbn, toIsbn13 } from './isbn';
import { centsOfJsonNumber as centsFromJsonNumber, centsText as centsToDecimalText, fromCents as centsToJsonNumber, toCents as centsFromDecimal } from '../../platform/money';
import { MAX_CENTS } from './dto';

describe('ISBN rules', () => {
  it('normalizes separators and the X check digit', () => {
    expect(normalizeIsbn('978-0 14-143951-8')).toBe('9780141439518');
    expect(normalizeIsbn('3-16-148410-x')).toBe('316148410X');
  });

  it.each(['9780141439518', '9791090636071', '0141439513', '316148410X', '0198534531'])('accepts %s', (isbn) => {
    expect(isbnProblem(isbn)).toBeUndefined();
  });

  it.each([
    ['9780141439519', 'checkDigit'],
    ['0141439512', 'checkDigit'],
    ['1234567890128', 'format'],
    ['31614841X0', 'format'],
    ['97801414395', 'format'],
  ])('refuses %s (%s)', (isbn, problem) => {
    expect(isbnProblem(isbn)).toBe(problem);
  });

  it('gives an ISBN-10 its ISBN-13 form and leaves an ISBN-13 alone', () => {
    expect(toIsbn13('0141439513')).toBe('9780141439518');
    expect(toIsbn13('316148410X')).toBe('9783161484100');
    expect(toIsbn13('9791090636071')).toBe('9791090636071');
  });
});

describe('money in cents', () => {
  it.each([
    [19.99, 1999],
    [4.35, 435],
    [1.15, 115],
    [0.07, 7],
    [0.1, 10],
    [12.5, 1250],
    [3, 300],
    [99999999.99, MAX_CENTS],
  ])('reads the JSON number %p as %p cents', (value, cents) => {
    expect(centsFromJsonNumber(value)).toBe(cents);
  });

  it('refuses more than two decimals, exponent forms and non-finite numbers', () => {
    expect(centsFromJsonNumber(-1)).toBe(-100);
    for (const value of [1.005, 0.001, 1e-7, 1e21, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(centsFromJsonNumber(value)).toBeUndefined();
    }
  });

  it('reads DECIMAL values from both databases', () => {
    expect(centsFromDecimal('19.90')).toBe(1990);
    expect(centsFromDecimal(19.9)).toBe(1990);
    expect(centsFromDecimal('0.07')).toBe(7);
    expect(centsFromDecimal(5)).toBe(500);
    expect(() => centsFromDecimal('1.234')).toThrow();
  });

  it('writes cents back without floating-point drift', () => {
    expect(centsToDecimalText(435)).toBe('4.35');
    expect(centsToDecimalText(7)).toBe('0.07');
    expect(centsToDecimalText(MAX_CENTS)).toBe('99999999.99');
    expect(centsToJsonNumber(30)).toBe(0.3);
    expect(JSON.stringify({ price: centsToJsonNumber(10 + 20) })).toBe('{"price":0.3}');
  });
});
