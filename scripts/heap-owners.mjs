#!/usr/bin/env node
// Where a V8 heap snapshot's bytes are, by owner: `node --max-old-space-size=8000 scripts/heap-owners.mjs FILE
// [--top=N] [--json=OUT]`. Each object is counted once, to its nearest dominator (the one object every path from
// the GC roots to it passes through) that is a property of a named object: `Cluster.joined` is the Map held by a
// Cluster's `joined`, with everything only it keeps alive. An object two owners share (a Pod in both a record and a
// state node's pod list) goes to their common dominator, so a table's figure is what dropping that table would
// free. Also prints the self size of what each of the top owners keeps, by kind of object, and with --json writes
// every owner's bytes and object count (two snapshots' files diff with --diff=A.json,B.json,PODS).
import fs from 'node:fs';
import { readSnapshot } from './heap-snapshot-read.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : dflt;
};

if (opt('diff')) {
  const [a, b, pods] = opt('diff').split(',');
  const which = opt('view', 'owners');
  const A = JSON.parse(fs.readFileSync(a, 'utf8'))[which];
  const B = JSON.parse(fs.readFileSync(b, 'utf8'))[which];
  const n = Number(pods);
  const rows = [...new Set([...Object.keys(A), ...Object.keys(B)])].map((k) => [
    k,
    (B[k]?.bytes ?? 0) - (A[k]?.bytes ?? 0),
    (B[k]?.count ?? 0) - (A[k]?.count ?? 0),
  ]);
  rows.sort((x, y) => y[1] - x[1]);
  let total = 0;
  for (const r of rows) total += r[1];
  console.log(`B less A: ${(total / 2 ** 20).toFixed(1)} MiB, ${(total / n).toFixed(0)} B per unit (${n} units)`);
  for (const [k, bytes, count] of rows.slice(0, Number(opt('top', 40))))
    console.log(
      `${(bytes / n).toFixed(0).padStart(7)} B ${(count / n).toFixed(2).padStart(7)} obj  ${(bytes / 2 ** 20).toFixed(2).padStart(8)} MiB  ${k}`,
    );
  process.exit(0);
}

const file = args.find((x) => !x.startsWith('--'));
if (!file) {
  console.error('usage: heap-owners.mjs FILE.heapsnapshot [--top=N] [--json=OUT] | --diff=A.json,B.json,UNITS');
  process.exit(2);
}
// Read a section at a time: a snapshot over 512 MiB is longer than any string V8 can make (heap-snapshot-read.mjs).
const snap = readSnapshot(file);
const meta = snap.snapshot.meta;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const fType = meta.node_fields.indexOf('type');
const fName = meta.node_fields.indexOf('name');
const fSize = meta.node_fields.indexOf('self_size');
const fEdges = meta.node_fields.indexOf('edge_count');
const eType = meta.edge_fields.indexOf('type');
const eName = meta.edge_fields.indexOf('name_or_index');
const eTo = meta.edge_fields.indexOf('to_node');
const { nodes, edges, strings } = snap;
const N = nodes.length / NF;
const WEAK = edgeTypes.indexOf('weak');
const SHORTCUT = edgeTypes.indexOf('shortcut');

const firstEdge = new Uint32Array(N + 1);
for (let i = 0, e = 0; i < N; i++) {
  firstEdge[i] = e;
  e += nodes[i * NF + fEdges] * EF;
}
firstEdge[N] = edges.length;
const strong = (e) => edges[e + eType] !== WEAK && edges[e + eType] !== SHORTCUT;

// Depth-first postorder from the root (node 0) over strong edges.
const post = new Int32Array(N).fill(-1);
const order = new Int32Array(N);
let count = 0;
{
  const stack = new Int32Array(N);
  const cursor = new Uint32Array(N);
  const seen = new Uint8Array(N);
  let sp = 0;
  stack[sp++] = 0;
  seen[0] = 1;
  cursor[0] = firstEdge[0];
  while (sp) {
    const v = stack[sp - 1];
    let pushed = false;
    while (cursor[v] < firstEdge[v + 1]) {
      const e = cursor[v];
      cursor[v] += EF;
      if (!strong(e)) continue;
      const w = edges[e + eTo] / NF;
      if (seen[w]) continue;
      seen[w] = 1;
      cursor[w] = firstEdge[w];
      stack[sp++] = w;
      pushed = true;
      break;
    }
    if (!pushed) {
      sp--;
      post[v] = count;
      order[count++] = v;
    }
  }
}

// Predecessors (strong edges between reachable nodes), as CSR.
const predCount = new Uint32Array(N + 1);
for (let v = 0; v < N; v++) {
  if (post[v] < 0) continue;
  for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF)
    if (strong(e)) {
      const w = edges[e + eTo] / NF;
      if (post[w] >= 0) predCount[w + 1]++;
    }
}
for (let i = 0; i < N; i++) predCount[i + 1] += predCount[i];
const preds = new Int32Array(predCount[N]);
{
  const fill = predCount.slice(0, N);
  for (let v = 0; v < N; v++) {
    if (post[v] < 0) continue;
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF)
      if (strong(e)) {
        const w = edges[e + eTo] / NF;
        if (post[w] >= 0) preds[fill[w]++] = v;
      }
  }
}

// Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm), in postorder numbers.
const idom = new Int32Array(count).fill(-1);
const root = count - 1;
idom[root] = root;
for (let changed = true; changed; ) {
  changed = false;
  for (let p = count - 2; p >= 0; p--) {
    const v = order[p];
    let d = -1;
    for (let k = predCount[v]; k < predCount[v + 1]; k++) {
      let q = post[preds[k]];
      if (idom[q] < 0) continue;
      if (d < 0) {
        d = q;
        continue;
      }
      while (q !== d) {
        while (q < d) q = idom[q];
        while (d < q) d = idom[d];
      }
    }
    if (d >= 0 && idom[p] !== d) {
      idom[p] = d;
      changed = true;
    }
  }
}

const typeOf = (v) => nodeTypes[nodes[v * NF + fType]];
const nameOf = (v) => strings[nodes[v * NF + fName]];
const sizeOf = (v) => nodes[v * NF + fSize];
const GENERIC = new Set(['Object', 'Array', 'Map', 'Set', '', 'system / Context', 'WeakMap', 'Promise']);
const named = (v) => {
  const t = typeOf(v);
  if (t !== 'object') return false;
  const n = nameOf(v);
  return !GENERIC.has(n) && !n.startsWith('system /') && !n.startsWith('(');
};
const edgeName = (e) => {
  const t = edgeTypes[edges[e + eType]];
  return t === 'element' || t === 'hidden' ? '[]' : String(strings[edges[e + eName]]);
};

// Retained sizes: a dominator's postorder number is above every object it dominates.
const retained = new Float64Array(count);
for (let p = 0; p < count; p++) retained[p] += sizeOf(order[p]);
for (let p = 0; p < count - 1; p++) retained[idom[p]] += retained[p];

// Exclusive: what each `Class.property` (or closure variable) alone keeps alive, summed over its instances.
const exclusive = new Map();
const addTo = (m, k, b, n = 1) => {
  const o = m.get(k) ?? { bytes: 0, count: 0 };
  o.bytes += b;
  o.count += n;
  m.set(k, o);
};
for (let p = 0; p < count; p++) {
  const v = order[p];
  const isCtx = typeOf(v) === 'object' && nameOf(v) === 'system / Context';
  if (!named(v) && !isCtx) continue;
  for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) {
    if (!strong(e)) continue;
    const w = edges[e + eTo] / NF;
    const q = post[w];
    if (q < 0 || idom[q] !== p) continue;
    const t = edgeTypes[edges[e + eType]];
    if (t !== 'property' && t !== 'context' && t !== 'internal') continue;
    addTo(exclusive, isCtx ? `var ${edgeName(e)}` : `${nameOf(v)}.${edgeName(e)}`, retained[q], 1);
  }
}

// Held: every object counted to the first named holder on its shortest path from the roots (breadth first), so
// that what two tables share is counted to one of them (the nearer one), never to none.
const parent = new Int32Array(N).fill(-1);
const parentEdge = new Int32Array(N).fill(-1);
{
  const queue = new Int32Array(N);
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  parent[0] = 0;
  while (head < tail) {
    const v = queue[head++];
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) {
      if (!strong(e)) continue;
      const w = edges[e + eTo] / NF;
      if (parent[w] >= 0) continue;
      parent[w] = v;
      parentEdge[w] = e;
      queue[tail++] = w;
    }
  }
}
const holderOf = new Array(N);
function holder(v) {
  const path = [];
  let cur = v;
  let found;
  while (cur !== 0 && holderOf[cur] === undefined) {
    path.push(cur);
    const par = parent[cur];
    if (par < 0) {
      found = '(unreached)';
      break;
    }
    if (named(par)) {
      found = `${nameOf(par)}.${edgeName(parentEdge[cur])}`;
      break;
    }
    if (typeOf(par) === 'object' && nameOf(par) === 'system / Context') {
      found = `var ${edgeName(parentEdge[cur])}`;
      break;
    }
    cur = par;
  }
  if (found === undefined) found = cur === 0 ? '(roots)' : holderOf[cur];
  for (const p of path) holderOf[p] = found;
  return found;
}
const held = new Map();
const kinds = new Map();
let total = 0;
// Plain objects by their first property names: `{name,namespace,uid}` says which object it is.
const propsOf = (v) => {
  const out = [];
  for (let e = firstEdge[v]; e < firstEdge[v + 1] && out.length < 4; e += EF)
    if (edgeTypes[edges[e + eType]] === 'property' && !String(strings[edges[e + eName]]).startsWith('<'))
      out.push(strings[edges[e + eName]]);
  return out.join(',');
};
const kindOf = (v) => {
  const t = typeOf(v);
  if (t === 'object' && nameOf(v) === 'Object') return `{${propsOf(v)}}`;
  if (t === 'object' || t === 'closure') return `${t} ${nameOf(v).slice(0, 40)}`;
  return t;
};
for (let p = 0; p < count; p++) {
  const v = order[p];
  const s = sizeOf(v);
  total += s;
  const l = holder(v);
  addTo(held, l, s);
  let k = kinds.get(l);
  if (!k) kinds.set(l, (k = new Map()));
  const kk = kindOf(v);
  k.set(kk, (k.get(kk) ?? 0) + s);
}
const top = Number(opt('top', 40));
const show = (title, m) => {
  console.log(title);
  for (const [l, o] of [...m].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top))
    console.log(`${(o.bytes / 2 ** 20).toFixed(2).padStart(8)} MiB ${String(o.count).padStart(9)}  ${l}`);
};
console.log(`${file}: ${count} reachable objects, ${(total / 2 ** 20).toFixed(1)} MiB`);
show('held (first named holder, breadth first): MiB, objects', held);
const detail = Number(opt('detail', 8));
const wanted = opt('kinds') ? opt('kinds').split(',') : [];
const detailed = [...held]
  .sort((a, b) => b[1].bytes - a[1].bytes)
  .slice(0, detail)
  .map(([l]) => l);
for (const l of [...detailed, ...wanted.filter((w) => kinds.has(w) && !detailed.includes(w))]) {
  const k = [...kinds.get(l)].sort((a, b) => b[1] - a[1]).slice(0, Number(opt('kindsTop', 8)));
  console.log(`  ${l}: ${k.map(([n, b]) => `${n} ${(b / 2 ** 20).toFixed(2)}`).join(', ')}`);
}
show('exclusive (what only it keeps alive, by dominators): MiB, instances', exclusive);
const out = opt('json');
if (out)
  fs.writeFileSync(
    out,
    JSON.stringify({ file, total, owners: Object.fromEntries(held), exclusive: Object.fromEntries(exclusive) }),
  );
// --where=LABEL: of what LABEL holds, the self size by the holder's kind and the edge to it (what an `array` is).
const where = opt('where');
if (where) {
  const by = new Map();
  for (let p = 0; p < count; p++) {
    const v = order[p];
    if (holderOf[v] !== where) continue;
    const k = `${kindOf(v)} <- ${parent[v] >= 0 ? kindOf(parent[v]) : '?'}.${parentEdge[v] >= 0 ? edgeName(parentEdge[v]) : '?'}`;
    addTo(by, k, sizeOf(v));
  }
  show(`${where}, by what holds it: MiB, objects`, by);
}
