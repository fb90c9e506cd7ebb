import { returnPreference } from '../../src/common';

describe('returnPreference (RFC 7240 `Prefer`, its `return` preference)', () => {
  it.each([
    ['return=minimal', 'minimal'],
    ['return=representation', 'representation'],
    // Names and values case-insensitively, with optional whitespace, a quoted value as its content.
    ['  Return = "MINIMAL" ', 'minimal'],
    // Other preferences and parameters beside it are ignored.
    ['respond-async, wait=10, return=minimal; foo="a,b"', 'minimal'],
    ['handling=lenient;return=minimal', undefined],
    // The first `return` counts; later ones are ignored.
    ['return=representation, return=minimal', 'representation'],
    ['return=minimal, return=representation', 'minimal'],
    // A comma or semicolon inside a quoted value separates nothing.
    ['foo="a, return=minimal", return=representation', 'representation'],
    ['foo="a \\" , return=minimal", return=representation', 'representation'],
  ])('%j → %s', (header, expected) => {
    expect(returnPreference(header)).toBe(expected);
  });

  it('reads a header sent on several lines as one list, in order', () => {
    expect(returnPreference(['respond-async', 'return=minimal'])).toBe('minimal');
    expect(returnPreference(['return=representation', 'return=minimal'])).toBe('representation');
  });

  it('is undefined without a header, without `return`, or with a value it does not know', () => {
    expect(returnPreference(undefined)).toBeUndefined();
    expect(returnPreference('')).toBeUndefined();
    expect(returnPreference('respond-async')).toBeUndefined();
    expect(returnPreference('return')).toBeUndefined();
    expect(returnPreference('return=minimalist')).toBeUndefined();
    expect(returnPreference('returns=minimal')).toBeUndefined();
  });
});
