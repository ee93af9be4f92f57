// A disruption result as it crosses back from a worker. A repack command of a 5,000-node cluster moves some 32,000
// pods, and its podsMoved list (an object of four strings per pod) was most of the time the reply took to copy on
// both sides: the structured clone writes and reads each object and each string of its own. Across the thread it
// travels as columns instead (the uids and pod keys each joined into one string, the nodes by their place in one
// list of names) and is made into the same objects again on the caller's side. Everything else is as it was.
import type { Command, Decision, DisruptResult, PodMove } from '../disruption/types.ts';

/** A command's podsMoved as columns. */
interface WireMoves {
  /** The uids, joined by SEP. */
  readonly uids: string;
  /** The pod keys (namespace/name), joined by SEP. */
  readonly pods: string;
  /** Node names and `replacement:<i>`, each once. */
  readonly places: readonly string[];
  /** Each move's from and to, as places in `places`. */
  readonly at: Int32Array;
}

type Moves = readonly PodMove[] | WireMoves;
type WireCommand = Omit<Command, 'podsMoved'> & { readonly podsMoved: Moves };
type Acting = Exclude<Decision, { readonly kind: 'noop' }>;

type WireDecision =
  | Extract<Decision, { readonly kind: 'noop' }>
  | (Omit<Acting, 'podsMoved' | 'followUps' | 'concurrent'> & {
      readonly podsMoved: Moves;
      readonly followUps?: readonly WireCommand[];
      readonly concurrent?: readonly WireCommand[];
    });

export interface WireDisruptResult extends Omit<DisruptResult, 'decision'> {
  readonly decision: WireDecision;
}

const SEP = '\n';

/** The strings joined by SEP, or undefined when one of them holds SEP itself (it could not be split apart again). */
function joined(xs: readonly string[]): string | undefined {
  const s = xs.join(SEP);
  let seps = 0;
  for (let i = s.indexOf(SEP); i >= 0; i = s.indexOf(SEP, i + 1)) seps++;
  return seps === Math.max(0, xs.length - 1) ? s : undefined;
}

function packMoves(moves: readonly PodMove[]): Moves {
  const ids = new Map<string, number>();
  const place = (name: string): number => {
    let i = ids.get(name);
    if (i === undefined) ids.set(name, (i = ids.size));
    return i;
  };
  const at = new Int32Array(moves.length * 2);
  const uids = new Array<string>(moves.length);
  const pods = new Array<string>(moves.length);
  for (let i = 0; i < moves.length; i++) {
    const m = moves[i]!;
    uids[i] = m.uid;
    pods[i] = m.pod;
    at[2 * i] = place(m.from);
    at[2 * i + 1] = place(m.to);
  }
  const u = joined(uids);
  const p = u === undefined ? undefined : joined(pods);
  if (u === undefined || p === undefined) return moves;
  return { uids: u, pods: p, places: [...ids.keys()], at };
}

function unpackMoves(moves: Moves): readonly PodMove[] {
  if (Array.isArray(moves)) return moves;
  const w = moves as WireMoves;
  const n = w.at.length / 2;
  if (n === 0) return [];
  const uids = w.uids.split(SEP);
  const pods = w.pods.split(SEP);
  const out = new Array<PodMove>(n);
  for (let i = 0; i < n; i++)
    out[i] = { uid: uids[i]!, pod: pods[i]!, from: w.places[w.at[2 * i]!]!, to: w.places[w.at[2 * i + 1]!]! };
  return out;
}

/** The result as it is sent: each command's podsMoved as columns (the other fields, and their order, as they are). */
export function toWire(r: DisruptResult): WireDisruptResult {
  const d = r.decision;
  if (d.kind === 'noop') return r;
  const wire = <C extends Command>(c: C) => ({ ...c, podsMoved: packMoves(c.podsMoved) });
  return {
    ...r,
    decision: {
      ...wire(d),
      ...(d.followUps ? { followUps: d.followUps.map(wire) } : {}),
      ...(d.concurrent ? { concurrent: d.concurrent.map(wire) } : {}),
    },
  };
}

/** The result as it was before toWire. */
export function fromWire(r: WireDisruptResult): DisruptResult {
  const d = r.decision;
  if (d.kind === 'noop') return r as DisruptResult;
  const back = <C extends WireCommand>(c: C) => ({ ...c, podsMoved: unpackMoves(c.podsMoved) });
  const decision = {
    ...back(d),
    ...(d.followUps ? { followUps: d.followUps.map(back) } : {}),
    ...(d.concurrent ? { concurrent: d.concurrent.map(back) } : {}),
  } as Decision;
  return { ...r, decision };
}
