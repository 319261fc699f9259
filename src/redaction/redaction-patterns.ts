/**
 * The redaction patterns of workflows-v1 §3, as hand-written scanners rather than regular
 * expressions: a backtracking regex engine (V8's) retried at every start position can take
 * quadratic time on a long run of near-matches (a 1 MiB message of digits or of local-part
 * characters without an `@`). Every scanner here reads each character a bounded number of
 * times, so redacting a message costs time linear in its length whatever it holds.
 *
 * - `email`: a local part, `@`, and a domain of at least two labels ending in a letters-only
 *   top-level label (`ana.maria+shop@mail.example.co.uk`).
 * - `phone`: 8 to 15 digits, with an optional leading `+`, and spaces, dots, dashes or
 *   parentheses between them (`+33 (0)6 12 34 56 78`, `0612.34.56.78`). A date written
 *   `2026-11-20` or `20.11.2026` is not a phone number.
 * - `payment_card`: 13 to 19 digits, optionally grouped by single spaces or dashes, passing the
 *   Luhn check (`4111 1111 1111 1111`).
 * - `iban`: a two-letter country code, two check digits and 11 to 30 letters or digits, written
 *   whole or in groups of four separated by single spaces, passing the ISO 13616 mod-97 check
 *   (`DE89 3704 0044 0532 0130 00`).
 *
 * A match never starts or ends inside a word: the characters around it are not letters or
 * digits (`order12345678` is not a phone number).
 */
export const REDACTION_PATTERNS = ['email', 'phone', 'payment_card', 'iban'] as const;
export type RedactionPattern = (typeof REDACTION_PATTERNS)[number];

/** What an erased span is replaced by. */
export const REDACTED = '[redacted]';

/** A span of a text, in UTF-16 code units: [start, end). */
export interface Span {
  start: number;
  end: number;
}

const code = (text: string, i: number) => text.charCodeAt(i);
const isDigitCode = (c: number) => c >= 48 && c <= 57;
const isAsciiLetterCode = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Whether the character at `i` is a letter or digit of any script (false outside the text). */
function isWordAt(text: string, i: number): boolean {
  if (i < 0 || i >= text.length) return false;
  const c = code(text, i);
  if (c < 128) return isDigitCode(c) || isAsciiLetterCode(c);
  // A surrogate pair: test the whole code point (from either half).
  const start = c >= 0xdc00 && c <= 0xdfff && i > 0 ? i - 1 : i;
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(start)!));
}

// ---- email ------------------------------------------------------------------------------

const LOCAL_SPECIALS = new Set(['.', '_', '%', '+', '-']);
const isLocalAt = (text: string, i: number) =>
  isAsciiLetterCode(code(text, i)) || isDigitCode(code(text, i)) || LOCAL_SPECIALS.has(text[i]);
const isDomainAt = (text: string, i: number) =>
  isAsciiLetterCode(code(text, i)) || isDigitCode(code(text, i)) || text[i] === '-' || text[i] === '.';

function isDomain(domain: string): boolean {
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  for (const label of labels)
    if (label.length === 0 || label.length > 63 || label.startsWith('-') || label.endsWith('-')) return false;
  const top = labels[labels.length - 1];
  return top.length >= 2 && /^[A-Za-z]+$/.test(top);
}

function emailSpans(text: string, out: Span[]): void {
  let floor = 0; // a local part never reaches back into the previous match
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > floor && isLocalAt(text, start - 1)) start--;
    while (start < at && text[start] === '.') start++;
    if (start === at || isWordAt(text, start - 1)) continue;
    let end = at + 1;
    while (end < text.length && isDomainAt(text, end)) end++;
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--;
    if (!isDomain(text.slice(at + 1, end)) || isWordAt(text, end)) continue;
    out.push({ start, end });
    floor = end;
    at = end - 1;
  }
}

// ---- phone ------------------------------------------------------------------------------

const PHONE_SEPARATORS = new Set([' ', '.', '-', '(', ')']);
/** Separator characters allowed in a row between two digits (`) - ` is three). */
const MAX_SEPARATOR_RUN = 3;
const DATE = /^(\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{4})$/;

function phoneSpans(text: string, out: Span[]): void {
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const startsHere =
      (isDigitCode(code(text, i)) || c === '+' || c === '(') && !isWordAt(text, i - 1) && text[i - 1] !== '+';
    if (!startsHere) {
      i++;
      continue;
    }
    let end = i + (c === '+' ? 1 : 0);
    let digits = 0;
    let lastDigitEnd = -1;
    let separators = 0;
    while (end < text.length) {
      if (isDigitCode(code(text, end))) {
        digits++;
        separators = 0;
        lastDigitEnd = end + 1;
      } else if (PHONE_SEPARATORS.has(text[end]) && separators < MAX_SEPARATOR_RUN) {
        separators++;
      } else break;
      end++;
    }
    if (lastDigitEnd === -1) {
      i = end > i ? end : i + 1;
      continue;
    }
    // The number ends at its last digit, or just after a closing parenthesis that follows it.
    let stop = lastDigitEnd;
    const opened = text.slice(i, stop).split('(').length - text.slice(i, stop).split(')').length;
    if (opened > 0 && text[stop] === ')') stop++;
    const candidate = text.slice(i, stop);
    if (digits >= 8 && digits <= 15 && !isWordAt(text, stop) && !DATE.test(candidate))
      out.push({ start: i, end: stop });
    i = Math.max(end, i + 1);
  }
}

// ---- payment card (Luhn) ----------------------------------------------------------------

/** Whether digits[from, to) (values 0-9) pass the Luhn check. */
function luhnOf(digits: ArrayLike<number>, from: number, to: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = to - 1; i >= from; i--) {
    let d = digits[i];
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Whether a string of digits passes the Luhn check. */
export function passesLuhn(digits: string): boolean {
  return luhnOf(
    Array.from(digits, (c) => c.charCodeAt(0) - 48),
    0,
    digits.length,
  );
}

/**
 * Runs of digit groups separated by single spaces or dashes: for each run, the text offsets of
 * its groups and its digits (values 0-9) with each group's first index (and one past the end).
 */
function digitRuns(
  text: string,
  each: (starts: number[], ends: number[], digits: number[], firstDigit: number[]) => void,
): void {
  let i = 0;
  while (i < text.length) {
    if (!isDigitCode(code(text, i)) || isWordAt(text, i - 1)) {
      i++;
      continue;
    }
    const starts: number[] = [];
    const ends: number[] = [];
    const digits: number[] = [];
    const firstDigit: number[] = [];
    let at = i;
    for (;;) {
      starts.push(at);
      firstDigit.push(digits.length);
      while (at < text.length && isDigitCode(code(text, at))) digits.push(code(text, at++) - 48);
      ends.push(at);
      const sep = text[at];
      if ((sep === ' ' || sep === '-') && isDigitCode(code(text, at + 1))) at++;
      else break;
    }
    firstDigit.push(digits.length);
    each(starts, ends, digits, firstDigit);
    i = at + 1;
  }
}

/**
 * Luhn sums of every range of a run in constant time: per parity of the index, prefix sums of
 * the digits as they are and as doubled (a range's digit is doubled when its distance to the
 * range's last digit is odd).
 */
function luhnRanges(digits: number[]): (from: number, to: number) => boolean {
  const n = digits.length;
  const plain = [new Int32Array(n + 1), new Int32Array(n + 1)];
  const doubled = [new Int32Array(n + 1), new Int32Array(n + 1)];
  for (let j = 0; j < n; j++) {
    const d = digits[j];
    const dd = d * 2 > 9 ? d * 2 - 9 : d * 2;
    const p = j % 2;
    plain[p][j + 1] = plain[p][j] + d;
    doubled[p][j + 1] = doubled[p][j] + dd;
    plain[1 - p][j + 1] = plain[1 - p][j];
    doubled[1 - p][j + 1] = doubled[1 - p][j];
  }
  return (from, to) => {
    const q = (to - 1) % 2;
    const sum = plain[q][to] - plain[q][from] + doubled[1 - q][to] - doubled[1 - q][from];
    return sum % 10 === 0;
  };
}

function cardSpans(text: string, out: Span[]): void {
  digitRuns(text, (starts, ends, digits, firstDigit) => {
    const passes = luhnRanges(digits);
    let first = 0;
    while (first < starts.length) {
      // The longest candidate starting at this group: 13 to 19 digits passing Luhn.
      let best = -1;
      for (let last = first; last < starts.length; last++) {
        const count = firstDigit[last + 1] - firstDigit[first];
        if (count > 19) break;
        if (count >= 13 && passes(firstDigit[first], firstDigit[last + 1])) best = last;
      }
      if (best >= 0 && !isWordAt(text, ends[best])) {
        out.push({ start: starts[first], end: ends[best] });
        first = best + 1;
      } else first++;
    }
  });
}

// ---- IBAN (ISO 13616) -------------------------------------------------------------------

/** Whether an IBAN without spaces (letters in either case) passes the ISO 13616 mod-97 check. */
export function passesIbanCheck(iban: string): boolean {
  const upper = iban.toUpperCase();
  const rearranged = upper.slice(4) + upper.slice(0, 4);
  let remainder = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = code(rearranged, i);
    if (isDigitCode(c)) remainder = (remainder * 10 + (c - 48)) % 97;
    else if (c >= 65 && c <= 90) remainder = (remainder * 100 + (c - 55)) % 97;
    else return false;
  }
  return remainder === 1;
}

const isAlnumAt = (text: string, i: number) =>
  i >= 0 && i < text.length && (isDigitCode(code(text, i)) || isAsciiLetterCode(code(text, i)));

function ibanSpans(text: string, out: Span[]): void {
  let i = 0;
  while (i + 4 <= text.length) {
    const head =
      isAsciiLetterCode(code(text, i)) &&
      isAsciiLetterCode(code(text, i + 1)) &&
      isDigitCode(code(text, i + 2)) &&
      isDigitCode(code(text, i + 3)) &&
      !isWordAt(text, i - 1);
    if (!head) {
      i++;
      continue;
    }
    // Read up to 34 characters, written whole or in the paper format (groups of four separated
    // by single spaces, the last one shorter), noting where each group ends.
    let compact = '';
    let group = 0;
    let at = i;
    let best = -1;
    while (at < text.length && compact.length < 34) {
      if (isAlnumAt(text, at)) {
        compact += text[at];
        group++;
        at++;
        const groupEnds = !isAlnumAt(text, at);
        if (groupEnds && compact.length >= 15 && !isWordAt(text, at) && passesIbanCheck(compact)) best = at;
      } else if (text[at] === ' ' && group === 4 && isAlnumAt(text, at + 1)) {
        group = 0;
        at++;
      } else break;
    }
    if (best > 0) {
      out.push({ start: i, end: best });
      i = best;
    } else i++;
  }
}

// ---- spans and replacement --------------------------------------------------------------

const SCANNERS: Record<RedactionPattern, (text: string, out: Span[]) => void> = {
  email: emailSpans,
  phone: phoneSpans,
  payment_card: cardSpans,
  iban: ibanSpans,
};

/** Every occurrence of `needle` (exact, case-sensitive), left to right, not overlapping. */
function exactSpans(text: string, needle: string, out: Span[]): void {
  if (needle.length === 0) return;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    out.push({ start: at, end: at + needle.length });
}

/** What to erase: the spans of these patterns, and every occurrence of an exact text. */
export interface RedactionRule {
  patterns: readonly RedactionPattern[];
  text?: string;
}

/** The spans of `text` that `rule` erases, sorted, overlapping or touching spans merged. */
export function findSpans(text: string, rule: RedactionRule): Span[] {
  const found: Span[] = [];
  for (const pattern of new Set(rule.patterns)) SCANNERS[pattern](text, found);
  if (rule.text !== undefined) exactSpans(text, rule.text, found);
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Span[] = [];
  for (const span of found) {
    const last = merged[merged.length - 1];
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

/** `text` with each span replaced by REDACTED. */
export function replaceSpans(text: string, spans: readonly Span[]): string {
  if (spans.length === 0) return text;
  let out = '';
  let from = 0;
  for (const span of spans) {
    out += text.slice(from, span.start) + REDACTED;
    from = span.end;
  }
  return out + text.slice(from);
}

/** `text` with what `rule` finds replaced by REDACTED (the same text when nothing is found). */
export function redactText(text: string, rule: RedactionRule): string {
  return replaceSpans(text, findSpans(text, rule));
}
