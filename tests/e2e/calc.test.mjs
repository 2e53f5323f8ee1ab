// The demo's calculator tool parses arithmetic itself (no eval): results, precedence, and refusals.
import test from "node:test";
import assert from "node:assert/strict";
import { evaluate, formatNumber } from "../../www/src/calc.js";

test("calculator: arithmetic, precedence, functions, constants", { timeout: 10_000 }, () => {
	const cases = {
		"(2+3)*7": 35,
		"6*7": 42,
		"2+3*4": 14,
		"2^10": 1024,
		"2**3**2": 512,
		"-2^2": -4,
		"2^-1": 0.5,
		"10 % 4": 2,
		"7 / 2": 3.5,
		"sqrt(16) + abs(-3)": 7,
		"max(1, 5, 3) - min(4, 2)": 3,
		"round(pi * 100) / 100": 3.14,
		"1.5e3 + .5": 1500.5,
		"3 × 4 ÷ 2": 6,
	};
	for (const [expr, want] of Object.entries(cases)) assert.equal(evaluate(expr), want, expr);
	assert.equal(formatNumber(0.1 + 0.2), "0.3");
	assert.equal(formatNumber(evaluate("1/3")), "0.333333333333");
});

test("calculator: refuses anything that is not arithmetic", { timeout: 10_000 }, () => {
	const refused = {
		"": /empty/,
		"alert(1)": /Unknown function "alert"/,
		"constructor": /Unknown name "constructor"/,
		"__proto__": /Unknown name "__proto__"/,
		"toString(1)": /Unknown function "tostring"/,
		"process.exit(1)": /Unexpected character "\."|Unknown name/,
		"1/0": /Division by zero/,
		"(1+2": /Expected "\)"/,
		"1 2": /Unexpected "2"/,
		"sqrt(1, 2)": /sqrt\(\) takes 1 argument/,
		"`x`": /Unexpected character/,
		"10^400": /not a finite number/,
	};
	for (const [expr, re] of Object.entries(refused)) assert.throws(() => evaluate(expr), re, JSON.stringify(expr));
	assert.throws(() => evaluate("1+".repeat(300) + "1"), /longer than 500/);
	assert.throws(() => evaluate("(".repeat(100) + "1" + ")".repeat(100)), /nested too deeply/);
	assert.throws(() => evaluate(42), /must be a string/);
});
