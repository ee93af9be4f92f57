// Reads a V8 heap snapshot (.heapsnapshot) of any size: `readSnapshot(file)` returns { snapshot, nodes, edges,
// strings } as JSON.parse would, except that nodes and edges are Uint32Arrays. A snapshot over 512 MiB cannot be
// read with readFileSync(file, 'utf8') and JSON.parse: V8's longest string is 2^29 - 24 characters. So the file
// is read a chunk at a time and its sections parsed from the bytes: the small header with JSON.parse, the node
// and edge arrays number by number, every string of `strings` on its own. The other sections (allocation
// traces, samples, locations) are skipped.
import fs from 'node:fs';

const CHUNK = 16 * 2 ** 20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const COMMA = 0x2c;
const ZERO = 0x30;
const NINE = 0x39;

/** The `{"snapshot":{...},` header, parsed; `rest` is where the first section's key starts. */
function readHeader(buf) {
  const text = buf.toString('latin1', 0, Math.min(buf.length, 2 ** 20));
  const at = text.indexOf('"nodes":');
  if (!text.startsWith('{') || at < 0) throw new Error('not a V8 heap snapshot: no "nodes" section in its first MiB');
  const head = text.slice(0, at).replace(/,\s*$/, '');
  const { snapshot } = JSON.parse(`${head}}`);
  if (!snapshot?.meta?.node_fields || !Number.isInteger(snapshot.node_count))
    throw new Error('not a V8 heap snapshot: its header has no snapshot.meta.node_fields or node_count');
  return { snapshot, rest: Buffer.byteLength(text.slice(0, at), 'latin1') };
}

/** Parses the sections after the header, byte by byte, as chunks arrive. */
class SectionParser {
  constructor(snapshot) {
    const m = snapshot.meta;
    this.targets = {
      nodes: new Uint32Array(snapshot.node_count * m.node_fields.length),
      edges: new Uint32Array(snapshot.edge_count * m.edge_fields.length),
    };
    this.filled = { nodes: 0, edges: 0 };
    this.strings = [];
    this.state = 'key'; // key | keyName | colon | numbers | skip | strings | string | stringEscape | done
    this.key = [];
    this.section = '';
    this.num = -1;
    this.depth = 0;
    this.pieces = [];
    this.pieceStart = 0;
  }

  /** Takes the bytes of buf from `from` on. */
  feed(buf, from) {
    for (let i = from; i < buf.length; i++) {
      const c = buf[i];
      switch (this.state) {
        case 'key':
          if (c === QUOTE) (this.state = 'keyName'), (this.key = []);
          break;
        case 'keyName':
          if (c === QUOTE) (this.section = String.fromCharCode(...this.key)), (this.state = 'colon');
          else this.key.push(c);
          break;
        case 'colon':
          if (c === OPEN) this.open();
          break;
        case 'numbers':
          i = this.numbers(buf, i);
          break;
        case 'skip':
          if (c === OPEN) this.depth++;
          else if (c === CLOSE && --this.depth === 0) this.state = 'key';
          break;
        case 'strings':
          if (c === QUOTE) (this.state = 'string'), (this.pieceStart = i + 1), (this.pieces = []);
          else if (c === CLOSE) this.state = 'key';
          break;
        case 'string':
          if (c === BACKSLASH) this.state = 'stringEscape';
          else if (c === QUOTE) this.endString(buf, i);
          break;
        case 'stringEscape':
          this.state = 'string';
          break;
      }
    }
    if (this.state === 'string' || this.state === 'stringEscape') {
      this.pieces.push(Buffer.from(buf.subarray(this.pieceStart)));
      this.pieceStart = 0;
    }
  }

  open() {
    if (this.section === 'nodes' || this.section === 'edges') (this.state = 'numbers'), (this.num = -1);
    else if (this.section === 'strings') this.state = 'strings';
    else (this.state = 'skip'), (this.depth = 1);
  }

  /** Numbers of the nodes or edges array from buf[i] on; returns the index of the last byte it took. */
  numbers(buf, i) {
    const target = this.targets[this.section];
    let n = this.num;
    let at = this.filled[this.section];
    for (; i < buf.length; i++) {
      const c = buf[i];
      if (c >= ZERO && c <= NINE) n = n < 0 ? c - ZERO : n * 10 + (c - ZERO);
      else if (c === COMMA || c === CLOSE || c <= 0x20) {
        if (n >= 0) {
          if (at >= target.length || n > 0xffffffff)
            throw new Error(`heap snapshot: ${this.section}[${at}] = ${n} does not fit its header's counts`);
          target[at++] = n;
          n = -1;
        }
        if (c === CLOSE) {
          if (at !== target.length)
            throw new Error(`heap snapshot: ${this.section} has ${at} numbers, its header says ${target.length}`);
          this.state = 'key';
          break;
        }
      } else throw new Error(`heap snapshot: unexpected byte ${c} in ${this.section}[${at}]`);
    }
    this.num = n;
    this.filled[this.section] = at;
    return i;
  }

  endString(buf, i) {
    this.pieces.push(buf.subarray(this.pieceStart, i));
    const bytes = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces);
    this.strings.push(JSON.parse(`"${bytes.toString('utf8')}"`));
    this.pieces = [];
    this.state = 'strings';
  }
}

/** `chunk`: bytes read at a time (tests make it small, so that every section and string spans reads). */
export function readSnapshot(file, chunk = CHUNK) {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(chunk);
    const first = Buffer.allocUnsafe(2 ** 20);
    const got = fs.readSync(fd, first, 0, first.length, 0);
    const { snapshot, rest } = readHeader(first.subarray(0, got));
    const parser = new SectionParser(snapshot);
    let read = 0;
    let position = rest;
    while ((read = fs.readSync(fd, buf, 0, chunk, position)) > 0) {
      parser.feed(buf.subarray(0, read), 0);
      position += read;
    }
    if (parser.filled.nodes !== parser.targets.nodes.length || parser.filled.edges !== parser.targets.edges.length)
      throw new Error(`heap snapshot ${file} ends before its nodes and edges do`);
    return { snapshot, nodes: parser.targets.nodes, edges: parser.targets.edges, strings: parser.strings };
  } finally {
    fs.closeSync(fd);
  }
}
