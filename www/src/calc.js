// A small arithmetic evaluator for the calculator tool: a recursive-descent parser over a fixed grammar.
// No eval, no Function, no property access: only numbers, + - * / % ^, parentheses, unary signs, the
// constants pi and e, and a fixed list of Math functions.
//
//   expr   := term (('+' | '-') term)*
//   term   := unary (('*' | '/' | '%') unary)*
//   unary  := ('+' | '-') unary | power
//   power  := call ('^' unary)?          right-associative; -2^2 = -4
//   call   := NAME '(' expr (',' expr)* ')' | NAME | NUMBER | '(' expr ')'

const FUNCTIONS = {
	sqrt: [1, Math.sqrt],
	cbrt: [1, Math.cbrt],
	abs: [1, Math.abs],
	sin: [1, Math.sin],
	cos: [1, Math.cos],
	tan: [1, Math.tan],
	asin: [1, Math.asin],
	acos: [1, Math.acos],
	atan: [1, Math.atan],
	ln: [1, Math.log],
	log: [1, Math.log10],
	log2: [1, Math.log2],
	exp: [1, Math.exp],
	floor: [1, Math.floor],
	ceil: [1, Math.ceil],
	round: [1, Math.round],
	min: [-1, Math.min],
	max: [-1, Math.max],
	pow: [2, Math.pow],
};
const CONSTANTS = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

const MAX_LENGTH = 500;
const MAX_DEPTH = 64;

export class CalcError extends Error {
	constructor(message) {
		super(message);
		this.name = "CalcError";
	}
}

function tokenize(src) {
	const tokens = [];
	let i = 0;
	while (i < src.length) {
		const c = src[i];
		if (/\s/.test(c)) {
			i++;
			continue;
		}
		const num = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i));
		if (num) {
			tokens.push({ type: "num", value: Number(num[0]), pos: i });
			i += num[0].length;
			continue;
		}
		const name = /^[A-Za-z_][A-Za-z_0-9]*/.exec(src.slice(i));
		if (name) {
			tokens.push({ type: "name", value: name[0].toLowerCase(), pos: i });
			i += name[0].length;
			continue;
		}
		if (c === "*" && src[i + 1] === "*") {
			tokens.push({ type: "op", value: "^", pos: i });
			i += 2;
			continue;
		}
		if ("+-*/%^(),".includes(c)) {
			tokens.push({ type: "op", value: c, pos: i });
			i++;
			continue;
		}
		if (c === "×") {
			tokens.push({ type: "op", value: "*", pos: i });
			i++;
			continue;
		}
		if (c === "÷") {
			tokens.push({ type: "op", value: "/", pos: i });
			i++;
			continue;
		}
		throw new CalcError(`Unexpected character "${c}" at position ${i + 1}`);
	}
	return tokens;
}

/** Evaluates an arithmetic expression; throws CalcError on anything else. */
export function evaluate(source) {
	if (typeof source !== "string") throw new CalcError("The expression must be a string");
	if (source.length > MAX_LENGTH) throw new CalcError(`The expression is longer than ${MAX_LENGTH} characters`);
	const tokens = tokenize(source);
	if (tokens.length === 0) throw new CalcError("The expression is empty");
	let pos = 0;
	let depth = 0;
	const peek = () => tokens[pos];
	const isOp = (v) => peek()?.type === "op" && peek().value === v;
	const expect = (v) => {
		if (!isOp(v)) throw new CalcError(`Expected "${v}"${peek() ? ` at position ${peek().pos + 1}` : " at the end"}`);
		pos++;
	};
	const enter = () => {
		if (++depth > MAX_DEPTH) throw new CalcError("The expression is nested too deeply");
	};

	function expr() {
		enter();
		let v = term();
		while (isOp("+") || isOp("-")) {
			const op = tokens[pos++].value;
			const r = term();
			v = op === "+" ? v + r : v - r;
		}
		depth--;
		return v;
	}
	function term() {
		let v = unary();
		while (isOp("*") || isOp("/") || isOp("%")) {
			const op = tokens[pos++].value;
			const r = unary();
			if (op === "*") v *= r;
			else if (op === "/") {
				if (r === 0) throw new CalcError("Division by zero");
				v /= r;
			} else {
				if (r === 0) throw new CalcError("Modulo by zero");
				v %= r;
			}
		}
		return v;
	}
	function unary() {
		if (isOp("+") || isOp("-")) {
			enter();
			const op = tokens[pos++].value;
			const v = unary();
			depth--;
			return op === "-" ? -v : v;
		}
		return power();
	}
	function power() {
		const base = primary();
		if (isOp("^")) {
			pos++;
			enter();
			const exponent = unary();
			depth--;
			return Math.pow(base, exponent);
		}
		return base;
	}
	function primary() {
		const t = peek();
		if (!t) throw new CalcError("Unexpected end of the expression");
		if (t.type === "num") {
			pos++;
			return t.value;
		}
		if (t.type === "name") {
			pos++;
			if (isOp("(")) {
				const fn = Object.hasOwn(FUNCTIONS, t.value) ? FUNCTIONS[t.value] : undefined;
				if (!fn) throw new CalcError(`Unknown function "${t.value}"`);
				pos++;
				const args = [expr()];
				while (isOp(",")) {
					pos++;
					args.push(expr());
				}
				expect(")");
				const [arity, impl] = fn;
				if (arity >= 0 && args.length !== arity) throw new CalcError(`${t.value}() takes ${arity} argument${arity === 1 ? "" : "s"}`);
				return impl(...args);
			}
			if (Object.hasOwn(CONSTANTS, t.value)) return CONSTANTS[t.value];
			throw new CalcError(`Unknown name "${t.value}"`);
		}
		if (t.value === "(") {
			pos++;
			const v = expr();
			expect(")");
			return v;
		}
		throw new CalcError(`Unexpected "${t.value}" at position ${t.pos + 1}`);
	}

	const value = expr();
	if (pos < tokens.length) throw new CalcError(`Unexpected "${tokens[pos].value}" at position ${tokens[pos].pos + 1}`);
	if (!Number.isFinite(value)) throw new CalcError("The result is not a finite number");
	return value;
}

/** A readable number: integers as is, others to 12 significant digits. */
export function formatNumber(n) {
	if (Number.isInteger(n)) return String(n);
	return String(Number(n.toPrecision(12)));
}
