// The CEL subset of DRA device selectors the engine evaluates itself (docs/solver.md, "DRA"): conjunctions
// (&&, parentheses) of
//   device.driver == "d" | device.driver != "d"
//   device.attributes["domain"].name <op> <string | int | bool literal>   (or a bare bool attribute)
//   device.capacity["domain"].name.compareTo(quantity("16Gi")) <op> 0
// with <op> one of == != < <= > >=. Anything else (||, !, in, functions, version comparisons, ...) is reported
// as unsupported with the reason, never approximated: a wrong allocation is worse than an explained refusal.
import type { CompareOp, Device, DeviceSelector, SelectorPredicate } from '../domain/dra.ts';
import { parseQuantity, unitValue } from '../domain/quantity.ts';

type Tok = { t: 'id' | 'str' | 'int' | 'op' | 'punct'; v: string };

const SUPPORTED =
  'supported: conjunctions (&&) of device.driver ==/!= "x", device.attributes["domain"].name <op> literal, device.capacity["domain"].name.compareTo(quantity("q")) <op> 0';

class Unsupported extends Error {}

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let v = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\') throw new Unsupported('escape sequences in string literals');
        v += src[j++];
      }
      if (j >= src.length) throw new Unsupported('an unterminated string literal');
      out.push({ t: 'str', v });
      i = j + 1;
      continue;
    }
    if (/[0-9]/.test(c)) {
      let j = i;
      while (j < src.length && /[0-9]/.test(src[j]!)) j++;
      if (/[.eExXuU]/.test(src[j] ?? '')) throw new Unsupported('non-decimal-integer numeric literals');
      out.push({ t: 'int', v: src.slice(i, j) });
      i = j;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[A-Za-z0-9_]/.test(src[j]!)) j++;
      out.push({ t: 'id', v: src.slice(i, j) });
      i = j;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (['==', '!=', '<=', '>=', '&&', '||'].includes(two)) {
      out.push({ t: 'op', v: two });
      i += 2;
      continue;
    }
    if (c === '!') throw new Unsupported('negation (!)');
    if ('<>'.includes(c)) {
      out.push({ t: 'op', v: c });
      i++;
      continue;
    }
    if ('()[].,-'.includes(c)) {
      out.push({ t: 'punct', v: c });
      i++;
      continue;
    }
    throw new Unsupported(`the character ${JSON.stringify(c)}`);
  }
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private next(): Tok {
    const t = this.toks[this.i++];
    if (!t) throw new Unsupported('an incomplete expression');
    return t;
  }
  private expect(t: Tok['t'], v?: string): Tok {
    const x = this.next();
    if (x.t !== t || (v !== undefined && x.v !== v))
      throw new Unsupported(`${JSON.stringify(x.v)} where ${v ?? t} was expected`);
    return x;
  }

  conjunction(): SelectorPredicate[] {
    const out = this.term();
    while (this.peek()?.v === '&&') {
      this.next();
      out.push(...this.term());
    }
    const p = this.peek();
    if (p && p.v === '||') throw new Unsupported('disjunction (||)');
    return out;
  }

  all(): SelectorPredicate[] {
    const out = this.conjunction();
    const p = this.peek();
    if (p) throw new Unsupported(`${JSON.stringify(p.v)} after a complete predicate`);
    return out;
  }

  private term(): SelectorPredicate[] {
    const p = this.peek();
    if (p?.v === '(') {
      this.next();
      const inner = this.conjunction();
      this.expect('punct', ')');
      return inner;
    }
    if (p?.t === 'id' && p.v === 'device') return [this.predicate()];
    throw new Unsupported(
      `${p ? JSON.stringify(p.v) : 'the end'} at the start of a predicate (negation, literals on the left and functions are not supported)`,
    );
  }

  private qualified(): string {
    this.expect('punct', '[');
    const domain = this.expect('str').v;
    this.expect('punct', ']');
    this.expect('punct', '.');
    const name = this.expect('id').v;
    return `${domain}/${name}`;
  }

  private op(): CompareOp {
    const t = this.next();
    if (t.t === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.v)) return t.v as CompareOp;
    throw new Unsupported(`${JSON.stringify(t.v)} where a comparison was expected`);
  }

  private literal(): string | number | boolean {
    const t = this.next();
    if (t.t === 'str') return t.v;
    if (t.t === 'int') return Number(t.v);
    if (t.t === 'punct' && t.v === '-') return -Number(this.expect('int').v);
    if (t.t === 'id' && (t.v === 'true' || t.v === 'false')) return t.v === 'true';
    throw new Unsupported(`${JSON.stringify(t.v)} where a string, integer or bool literal was expected`);
  }

  private predicate(): SelectorPredicate {
    this.expect('id', 'device');
    this.expect('punct', '.');
    const field = this.expect('id').v;
    if (field === 'driver') {
      const op = this.op();
      if (op !== '==' && op !== '!=') throw new Unsupported(`ordering comparison ${op} on device.driver`);
      const v = this.literal();
      if (typeof v !== 'string') throw new Unsupported('device.driver compared with a non-string');
      return { kind: 'driver', op, value: v };
    }
    if (field === 'attributes') {
      const name = this.qualified();
      const p = this.peek();
      if (!p || p.v === '&&' || p.v === ')') return { kind: 'attribute', name, op: '==', value: true };
      if (p.v === '.') throw new Unsupported(`a method call on attribute ${name} (e.g. version comparisons)`);
      return { kind: 'attribute', name, op: this.op(), value: this.literal() };
    }
    if (field === 'capacity') {
      const name = this.qualified();
      this.expect('punct', '.');
      this.expect('id', 'compareTo');
      this.expect('punct', '(');
      this.expect('id', 'quantity');
      this.expect('punct', '(');
      const q = this.expect('str').v;
      this.expect('punct', ')');
      this.expect('punct', ')');
      const op = this.op();
      const zero = this.literal();
      if (zero !== 0) throw new Unsupported('compareTo(...) compared with something other than 0');
      let value: number;
      try {
        value = unitValue(parseQuantity(q));
      } catch (e) {
        throw new Unsupported(`quantity(${JSON.stringify(q)}): ${(e as Error).message}`);
      }
      return { kind: 'capacity', name, op, value };
    }
    throw new Unsupported(`device.${field}`);
  }
}

/** Reduces a CEL expression to predicates, or says why it is outside the supported subset. */
export function parseSelector(expression: string): DeviceSelector {
  if (expression.trim() === '')
    return { expression, unsupported: `an empty expression selects nothing (${SUPPORTED})` };
  try {
    const predicates = new Parser(tokenize(expression)).all();
    return { expression, predicates };
  } catch (e) {
    if (e instanceof Unsupported)
      return { expression, unsupported: `${e.message} is outside the supported CEL subset (${SUPPORTED})` };
    throw e;
  }
}

/** true / false / an error (CEL runtime error: a missing attribute, an ordering between different types). */
type Eval = true | false | { readonly error: string };

function compare(op: CompareOp, a: string | number | boolean, b: string | number | boolean): Eval {
  if (op === '==') return a === b;
  if (op === '!=') return a !== b;
  if (typeof a !== typeof b) return { error: `no ordering between ${typeof a} and ${typeof b}` };
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    default:
      return a >= b;
  }
}

function evalPredicate(p: SelectorPredicate, driver: string, d: Device): Eval {
  if (p.kind === 'driver') return compare(p.op, driver, p.value);
  if (p.kind === 'attribute') {
    const a = d.attributes[p.name];
    if (!a) return { error: `device ${d.name} has no attribute ${p.name}` };
    if (a.kind === 'version')
      return p.op === '==' || p.op === '!='
        ? p.op === '!='
        : { error: `version attribute ${p.name} needs semver comparison` };
    return compare(p.op, a.value, p.value);
  }
  const c = d.capacity[p.name];
  if (c === undefined) return { error: `device ${d.name} has no capacity ${p.name}` };
  return compare(p.op, c, p.value);
}

/** Evaluates a reduced selector: false wins over errors (CEL's commutative &&), errors over true. */
export function evalSelector(s: DeviceSelector, driver: string, d: Device): Eval {
  if (!s.predicates) return { error: s.unsupported ?? 'unsupported selector' };
  let err: Eval | undefined;
  for (const p of s.predicates) {
    const r = evalPredicate(p, driver, d);
    if (r === false) return false;
    if (r !== true && !err) err = r;
  }
  return err ?? true;
}
