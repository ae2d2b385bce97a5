// QR codes for a terminal, so `identity-cli login` can show the otpauth:// URI of a TOTP
// enrollment (spec: Endpoints, totp/enroll returns one_time.totp). Encoding is uqr's.
import { encode } from 'uqr';

// The QR standard asks for a 4-module light margin; a terminal's own background cannot be
// relied on to be light, so the margin is drawn.
const QUIET_ZONE = 4;

/**
 * dark (default): plain Unicode half blocks for a dark background, light modules drawn as block
 * glyphs in the (light) text colour; survives copying into a file.
 * light: the same for a light background, dark modules drawn in the (dark) text colour.
 * ansi: explicit ANSI black and white, correct on any terminal theme that shows colours.
 */
export type QrStyle = 'dark' | 'light' | 'ansi';
export const QR_STYLES: readonly QrStyle[] = ['dark', 'light', 'ansi'];

export interface TerminalQrOptions {
  style?: QrStyle;
}

/** Rows of modules including the quiet zone; true is dark. */
export function qrModules(text: string): boolean[][] {
  return encode(text, { ecc: 'M', border: QUIET_ZONE }).data;
}

// Which modules a glyph paints in the text colour: light ones on a dark terminal, dark ones on a
// light terminal. key: top module painted?, bottom module painted?
const GLYPHS: Record<string, string> = {
  '11': '\u2588', // both: full block
  '10': '\u2580', // top only: upper half block
  '01': '\u2584', // bottom only: lower half block
  '00': ' ',
};

function plainCell(topDark: boolean, bottomDark: boolean, paintDark: boolean): string {
  const paint = (dark: boolean) => (dark === paintDark ? 1 : 0);
  return GLYPHS[`${paint(topDark)}${paint(bottomDark)}`]!;
}

const ESC = '\u001b[';

function ansiCell(topDark: boolean, bottomDark: boolean): string {
  // Upper half block: foreground paints the top module, background the bottom one.
  return `${ESC}${topDark ? 30 : 97};${bottomDark ? 40 : 107}m\u2580`;
}

/** Two module rows per text line, one module per column; lines joined with '\n'. */
export function renderTerminalQr(text: string, opts: TerminalQrOptions = {}): string {
  const style = opts.style ?? 'dark';
  const rows = qrModules(text);
  const lines: string[] = [];
  for (let y = 0; y < rows.length; y += 2) {
    const top = rows[y]!;
    // An odd last row is paired with light modules, i.e. more quiet zone.
    const bottom = rows[y + 1] ?? top.map(() => false);
    let line = '';
    for (let x = 0; x < top.length; x++) {
      const t = top[x]!;
      const b = bottom[x]!;
      line += style === 'ansi' ? ansiCell(t, b) : plainCell(t, b, style === 'light');
    }
    lines.push(style === 'ansi' ? `${line}${ESC}0m` : line);
  }
  return lines.join('\n');
}
