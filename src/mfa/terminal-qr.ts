// QR codes for a terminal, so `identity-cli login` can show the otpauth:// URI of a TOTP
// enrollment (spec: Endpoints, totp/enroll returns one_time.totp). Encoding is uqr's.
import { encode } from 'uqr';

// The QR standard asks for a 4-module light margin; a terminal's own background cannot be
// relied on to be light, so the margin is drawn.
const QUIET_ZONE = 4;

export interface TerminalQrOptions {
  /**
   * false (default): plain Unicode half blocks, light modules drawn as block glyphs, which reads
   * correctly on the usual light-on-dark terminal and survives copying into a file.
   * true: explicit ANSI black and white, correct on any terminal theme.
   */
  ansi?: boolean;
}

/** Rows of modules including the quiet zone; true is dark. */
export function qrModules(text: string): boolean[][] {
  return encode(text, { ecc: 'M', border: QUIET_ZONE }).data;
}

const PLAIN: Record<string, string> = {
  // key: top module dark?, bottom module dark?
  '00': '\u2588', // both light: full block in the (light) foreground colour
  '01': '\u2580', // top light, bottom dark: upper half block
  '10': '\u2584', // top dark, bottom light: lower half block
  '11': ' ',
};

const ESC = '\u001b[';

function ansiCell(topDark: boolean, bottomDark: boolean): string {
  // Upper half block: foreground paints the top module, background the bottom one.
  return `${ESC}${topDark ? 30 : 97};${bottomDark ? 40 : 107}m\u2580`;
}

/** Two module rows per text line, one module per column; lines joined with '\n'. */
export function renderTerminalQr(text: string, opts: TerminalQrOptions = {}): string {
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
      line += opts.ansi ? ansiCell(t, b) : PLAIN[`${t ? 1 : 0}${b ? 1 : 0}`];
    }
    lines.push(opts.ansi ? `${line}${ESC}0m` : line);
  }
  return lines.join('\n');
}
