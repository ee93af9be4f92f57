// MIME multi-part user data (RFC 2046 multipart/mixed), as cloud-init and nodeadm read it: enough to split a
// user's archive into parts and to write ours with Karpenter's boundary "//".

export interface MimePart {
  readonly contentType: string;
  readonly content: string;
}

const BOUNDARY = '//';
export const SHELL_SCRIPT = 'text/x-shellscript; charset="us-ascii"';
export const NODE_CONFIG = 'application/node.eks.aws';

export function isMime(userData: string): boolean {
  const t = userData.trimStart();
  return t.startsWith('MIME-Version:') || t.startsWith('Content-Type:');
}

function splitHeaders(block: string): { headers: Map<string, string>; body: string } {
  const text = block.replace(/\r\n/g, '\n');
  const end = text.indexOf('\n\n');
  const head = end < 0 ? text : text.slice(0, end);
  const headers = new Map<string, string>();
  for (const line of head.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body: end < 0 ? '' : text.slice(end + 2) };
}

/** Splits a multipart archive into its parts. Throws with a message naming spec.userData. */
export function parseMime(userData: string): MimePart[] {
  const { headers, body } = splitHeaders(userData.trimStart());
  const type = headers.get('content-type') ?? '';
  if (!/^multipart\//i.test(type))
    throw new Error(`spec.userData: a MIME document must be multipart (Content-Type is "${type}")`);
  const m = /boundary="?([^";]+)"?/i.exec(type);
  if (!m) throw new Error('spec.userData: the multipart Content-Type has no boundary');
  const delimiter = `--${m[1]}`;
  const parts: MimePart[] = [];
  const chunks = body.split('\n');
  let current: string[] | undefined;
  const flush = () => {
    if (!current) return;
    const p = splitHeaders(current.join('\n'));
    parts.push({ contentType: p.headers.get('content-type') ?? 'text/plain', content: p.body.replace(/\n$/, '') });
  };
  for (const line of chunks) {
    if (line.trimEnd() === `${delimiter}--`) {
      flush();
      current = undefined;
      break;
    }
    if (line.trimEnd() === delimiter) {
      flush();
      current = [];
      continue;
    }
    current?.push(line);
  }
  flush();
  return parts;
}

export function serializeMime(parts: readonly MimePart[]): string {
  const lines = ['MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${BOUNDARY}"`, ''];
  for (const p of parts)
    lines.push(`--${BOUNDARY}`, `Content-Type: ${p.contentType}`, '', p.content.replace(/\n$/, ''));
  lines.push(`--${BOUNDARY}--`, '');
  return lines.join('\n');
}
