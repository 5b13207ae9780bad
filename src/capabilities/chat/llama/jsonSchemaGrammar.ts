import { LlamaGrammar, LlamaJsonSchemaGrammar, type Llama } from "node-llama-cpp";

/**
 * A grammar for `response_format: json_schema`, from node-llama-cpp's JSON-schema grammar with
 * three changes, each checked so an upgrade that changes the generated text fails loudly:
 * - integers have no exponent: the original lets a model write `5E66`, which `JSON.parse` turns
 *   into a float (or Infinity) where the schema promised an integer;
 * - number exponents have at most two digits, so a number always parses finite;
 * - nothing may follow the root value: the original forces four newlines and then allows any
 *   number more (node-llama-cpp's own chat loop stops on them; here the end-of-generation token does);
 * - `format: date` (and the date of `date-time`) only produces real calendar days: the original
 *   allows `2024-02-31`. February stops at the 28th, so a leap day is never generated, but
 *   every generated date is valid.
 */
export function createJsonSchemaGrammar(llama: Llama, schema: Record<string, unknown>): LlamaGrammar {
    return new LlamaGrammar(llama, {grammar: jsonSchemaGrammarText(llama, schema)});
}

/** The GBNF text of {@link createJsonSchemaGrammar} (its `root` rule is the value, nothing after it). */
export function jsonSchemaGrammarText(llama: Llama, schema: Record<string, unknown>): string {
    // The deprecated constructors are the synchronous way to build these grammars.
    const original = new LlamaJsonSchemaGrammar(llama, schema as never).grammar;
    const grammar = replaceOnce(
        replaceOnce(
            replaceOnce(original,
                /^(integer-number-rule ::= .*?) \(\[eE\] \[-\+\]\? \("0" \| \[1-9\] \[0-9\]\{0,15\}\)\)\?$/m, "$1"),
            /^(fractional-number-rule ::= .*?) \(\[eE\] \[-\+\]\? \("0" \| \[1-9\] \[0-9\]\{0,15\}\)\)\?$/m, "$1 ([eE] [-+]? [0-9]{1,2})?"),
        /^(root ::= .*?) "\\n\\n\\n\\n" \[\\n\]\*$/m, "$1"
    );
    return withCalendarDays(grammar);
}

const anyMonthDay = '"-" ("0" [1-9] | "1" [012]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])';
const calendarMonthDay = '"-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])'
    + ' | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30")'
    + ' | "02" "-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))';

function withCalendarDays(grammar: string) {
    if (!/^string-format-date(-time)?-rule ::=/m.test(grammar))
        return grammar;
    if (!grammar.includes(anyMonthDay))
        throw new Error("node-llama-cpp's JSON-schema grammar changed: cannot adjust its date rule");
    return grammar.split(anyMonthDay).join(calendarMonthDay);
}

/** Rules absent from this grammar (a schema without integers) are fine; a rule that is present but unexpected is not. */
function replaceOnce(text: string, pattern: RegExp, replacement: string) {
    const ruleName = /\^\(([a-z-]+) ::=/.exec(pattern.source)?.[1];
    const present = ruleName != null && new RegExp(`^${ruleName} ::=`, "m").test(text);
    if (!present)
        return text;
    if (!pattern.test(text))
        throw new Error(`node-llama-cpp's JSON-schema grammar changed: cannot adjust the '${ruleName}' rule`);
    return text.replace(pattern, replacement);
}
