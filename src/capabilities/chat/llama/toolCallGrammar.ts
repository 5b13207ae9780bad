import type { Llama } from "node-llama-cpp";
import type { ParameterMarkup, ToolCallFormat } from "../ChatEngine.js";
import { isObjectCall } from "./jsonObjectEnd.js";
import { jsonSchemaGrammarText } from "./jsonSchemaGrammar.js";
import { valueKind } from "./parameterMarkup.js";
import { isKeywordName } from "./pythonCalls.js";

/**
 * GBNF for a forced tool call (`tool_choice` `required` or a named function): the template's call
 * format, `prefix name paramsPrefix <arguments> suffix`, where the name is one of `functions` and
 * the arguments follow that function's JSON-schema grammar (the json_schema machinery, its rules
 * renamed per function). With `parallel`, one or more calls joined by the format's `betweenCalls`.
 * Nothing may follow the last call. Arguments in markup (`format.parameters`): one pair per property of the schema,
 * in its order (the required ones always, the others optional); a value that may be a string is any text without `<`
 * (which every such format's value end starts with), another value the JSON of its property's schema.
 */
export function toolCallGrammarText(
    llama: Llama,
    format: ToolCallFormat,
    functions: readonly {name: string, schema: Record<string, unknown>}[],
    parallel: boolean
): string {
    const rules: string[] = [];
    const alternatives = functions.map((fn, index) => {
        const prefix = `tool${index}-`;
        if (format.parameters != null)
            rules.push(markupArgumentsRule(llama, format.parameters, fn.schema, prefix));
        else if (format.notation === "gemma4")
            rules.push(gemma4ArgumentsRule(fn.schema, prefix));
        else if (format.notation === "python")
            rules.push(pythonArgumentsRule(fn.schema, prefix));
        else
            rules.push(renameRules(jsonSchemaGrammarText(llama, fn.schema), prefix));
        // A call id the model writes after the name (Mistral Small 3.2's `[CALL_ID]` and 9 letters and digits, Kimi-K2's
        // `:` and its index), optional as in llama.cpp's grammars.
        return format.idMarker == null
            ? `${gbnfLiteral(fn.name + format.paramsPrefix)} ${prefix}root`
            : `${gbnfLiteral(fn.name)} ( ${gbnfLiteral(format.idMarker)} ${format.idPattern ?? "[a-zA-Z0-9]+"} )? ${gbnfLiteral(format.paramsPrefix)} ${prefix}root`;
    });
    // Calls as the items of one list (LFM2's `<|tool_call_start|>[NAME(...), NAME(...)]<|tool_call_end|>`, Nemotron-Nano-v2's
    // `<TOOLCALL>[{"name": ..., "arguments": ...}, {...}]</TOOLCALL>`).
    if (format.list != null) {
        const listed = `call ::= ( ${alternatives.join(" | ")} ) ${gbnfLiteral(format.suffix)}`;
        const between = format.list.separator === "" ? format.list.item : format.list.separator + " " + format.list.item;
        const more = parallel ? `( ${gbnfLiteral(between)} call )* ` : "";
        return [`root ::= ${gbnfLiteral(format.prefix)} call ${more}${gbnfLiteral(format.list.end)}`, listed, ...rules].join("\n");
    }
    // A call that is a JSON object itself, its arguments a value in it, with no markup after (Llama 3.1's
    // `{"name": ..., "parameters": {...}}`): the object is closed after the arguments (the parser ends the call with them).
    const end = isObjectCall(format) ? "}" : format.suffix;
    const call = `call ::= ${gbnfLiteral(format.prefix)} ( ${alternatives.join(" | ")} ) ${gbnfLiteral(end)}`;
    const root = parallel
        ? `root ::= call ( ${format.betweenCalls === "" ? "" : gbnfLiteral(format.betweenCalls) + " "}call )*`
        : "root ::= call";
    return [root, call, ...rules].join("\n");
}

/** `PREFIXroot`: a function's arguments in markup, with the rules of its typed values. */
function markupArgumentsRule(llama: Llama, markup: ParameterMarkup, schema: Record<string, unknown>, prefix: string): string {
    const properties = schema.properties != null && typeof schema.properties === "object" ? schema.properties as Record<string, Record<string, unknown>> : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const rules: string[] = [`${prefix}text ::= [^<]*`];
    const pairs = Object.entries(properties).map(([key, property], index) => {
        let value = `${prefix}text`;
        let keyEnd = markup.keyEnd;
        // As the call is read back (parameterMarkup.ts valueKind): a property that may be a string is text; another is
        // its JSON, after the key end for such values where the markup has one (DeepSeek-V3.2's ` string="false">`).
        if (valueKind(property) === "json") {
            const valuePrefix = `${prefix}p${index}-`;
            rules.push(renameRules(jsonSchemaGrammarText(llama, property ?? {}), valuePrefix));
            value = `${valuePrefix}root`;
            keyEnd = markup.jsonKeyEnd ?? keyEnd;
        }
        const pair = `${gbnfLiteral(markup.keyStart + key + keyEnd)} ${value} ${gbnfLiteral(markup.valueEnd)}`;
        return required.has(key) ? pair : `( ${pair} )?`;
    });
    // No properties named: any pairs (none when additionalProperties is false), their values as text.
    const free = `( ${gbnfLiteral(markup.keyStart)} [a-zA-Z0-9_.-]+ ${gbnfLiteral(markup.keyEnd)} ${prefix}text ${gbnfLiteral(markup.valueEnd)} )*`;
    rules.unshift(`${prefix}root ::= ${pairs.length > 0 ? pairs.join(" ") : schema.additionalProperties === false ? '""' : free}`);
    return rules.join("\n");
}

/**
 * `PREFIXroot`: a function's arguments in Gemma 4's notation (gemma4Arguments.ts), the members between the call's braces
 * (keywordArgumentsRule): a string as `<|"|>`text without `<`, an enum as one of its strings, a number, an integer, a
 * boolean, else any value of the notation.
 */
function gemma4ArgumentsRule(schema: Record<string, unknown>, prefix: string): string {
    const rule = (name: string) => prefix + name;
    const quote = gbnfLiteral('<|"|>');
    return keywordArgumentsRule(schema, prefix, {
        assign: ":", separator: ",", key: rule("key"), string: rule("string"), boolean: `( "true" | "false" )`, value: rule("value"),
        enumString: (text) => `${quote} ${gbnfLiteral(text)} ${quote}`
    }, [
        `${rule("value")} ::= ${rule("string")} | ${rule("number")} | "true" | "false" | "null" | ${rule("map")} | ${rule("list")}`,
        // Any text without the quote mark (as llama.cpp's gemma4 grammar: `<` is text too): states of how much of `<|"|>` ends it.
        `${rule("string")} ::= ${quote} ${rule("text")} ${quote}`,
        `${rule("text")} ::= [^<] ${rule("text")} | "<" ${rule("text1")} | ""`,
        `${rule("text1")} ::= "|" ${rule("text2")} | "<" ${rule("text1")} | [^<|] ${rule("text")} | ""`,
        `${rule("text2")} ::= "\\"" ${rule("text3")} | "<" ${rule("text1")} | [^<"] ${rule("text")} | ""`,
        `${rule("text3")} ::= "|" ${rule("text4")} | "<" ${rule("text1")} | [^<|] ${rule("text")} | ""`,
        `${rule("text4")} ::= "<" ${rule("text1")} | [^<>] ${rule("text")} | ""`,
        `${rule("map")} ::= "{" ( ${rule("key")} ":" ${rule("value")} ( "," ${rule("key")} ":" ${rule("value")} )* )? "}"`,
        `${rule("key")} ::= [a-zA-Z0-9_.-]+`,
        `${rule("list")} ::= "[" ( ${rule("value")} ( "," ${rule("value")} )* )? "]"`
    ]);
}

/**
 * `PREFIXroot`: a function's keyword arguments in Python's notation (pythonCalls.ts, LFM2's), between the call's
 * parentheses (keywordArgumentsRule): a string in either quote with backslash escapes, an enum as one of its
 * strings, a number, an integer, `True` or `False`, else any Python literal (strings, numbers, True/False/None, lists, dicts).
 */
function pythonArgumentsRule(schema: Record<string, unknown>, prefix: string): string {
    const rule = (name: string) => prefix + name;
    // A backslash and any character (pythonCalls.ts reads an escape it does not know as written, as Python does).
    const escape = `"\\\\" [^\\n]`;
    // A property whose name the reader cannot take back as a keyword (`first name`) is left out, as llama.cpp's LFM2 grammar cannot write it either.
    const properties = schema.properties != null && typeof schema.properties === "object" ? schema.properties as Record<string, unknown> : {};
    const writable = {...schema, properties: Object.fromEntries(Object.entries(properties).filter(([key]) => isKeywordName(key)))};
    return keywordArgumentsRule(writable, prefix, {
        assign: "=", separator: ", ", key: rule("key"), string: rule("string"), boolean: `( "True" | "False" )`, value: rule("value"),
        enumString: (text) => gbnfLiteral(JSON.stringify(text))
    }, [
        `${rule("value")} ::= ${rule("string")} | ${rule("number")} | "True" | "False" | "None" | ${rule("list")} | ${rule("dict")}`,
        `${rule("string")} ::= "\\"" ( [^"\\\\\\n] | ${escape} )* "\\"" | "'" ( [^'\\\\\\n] | ${escape} )* "'"`,
        `${rule("list")} ::= "[" ( ${rule("value")} ( ", " ${rule("value")} )* )? "]"`,
        `${rule("dict")} ::= "{" ( ${rule("string")} ": " ${rule("value")} ( ", " ${rule("string")} ": " ${rule("value")} )* )? "}"`,
        `${rule("key")} ::= [a-zA-Z_] [a-zA-Z0-9_]*`
    ]);
}

/** How a keyword notation writes a member: `key assign value`, members joined by `separator`; its rules' names. */
type KeywordNotation = {assign: string, separator: string, key: string, string: string, boolean: string, value: string, enumString: (text: string) => string};

/**
 * `PREFIXroot` of a keyword notation (Gemma 4's `key:value`, Python's `key=value`) and the notation's `rules`: the
 * required properties of the schema in its order, then any of the others; each property's name as written (any name,
 * as llama.cpp's grammars take it) and its value by its type (a string, an enum of strings, an integer, a number, a
 * boolean: JSON's numbers, no leading zeros, as the readers and llama.cpp's grammars take them), else any value; with no
 * properties named, any members (none when additionalProperties is false). A member may come again (the readers keep the last).
 */
function keywordArgumentsRule(schema: Record<string, unknown>, prefix: string, notation: KeywordNotation, rules: readonly string[]): string {
    const properties = schema.properties != null && typeof schema.properties === "object" ? schema.properties as Record<string, Record<string, unknown>> : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const integer = `${prefix}integer`, number = `${prefix}number`;
    const member = (key: string, property: Record<string, unknown> | undefined) => {
        const type = property?.type;
        const value = Array.isArray(property?.enum) && property.enum.every((item) => typeof item === "string")
            ? `( ${property.enum.map((item) => notation.enumString(item as string)).join(" | ")} )`
            : type === "string" ? notation.string : type === "integer" ? integer : type === "number" ? number
            : type === "boolean" ? notation.boolean : notation.value;
        return `${gbnfLiteral(key + notation.assign)} ${value}`;
    };
    const entries = Object.entries(properties);
    const first = entries.filter(([key]) => required.has(key)).map(([key, property]) => member(key, property));
    const others = entries.filter(([key]) => !required.has(key)).map(([key, property]) => member(key, property));
    if (entries.length === 0 && schema.additionalProperties !== false)
        others.push(`${notation.key} ${gbnfLiteral(notation.assign)} ${notation.value}`);
    const separator = gbnfLiteral(notation.separator);
    const optional = others.length === 0 ? null : `( ${others.join(" | ")} )`;
    const root = first.length > 0
        ? `${first.join(` ${separator} `)}${optional == null ? "" : ` ( ${separator} ${optional} )*`}`
        : optional == null ? '""' : `( ${optional} ( ${separator} ${optional} )* )?`;
    return [`${prefix}root ::= ${root}`, ...rules,
        `${integer} ::= "-"? ( "0" | [1-9] [0-9]* )`,
        `${number} ::= ${integer} ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?`].join("\n");
}

/** A GBNF string literal for `text`. */
export function gbnfLiteral(text: string) {
    return '"' + text.replace(/[\\"]/g, "\\$&").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t") + '"';
}

/**
 * Prefixes every rule name of a GBNF text (definitions and references), leaving string literals,
 * character classes and repetition counts alone.
 */
export function renameRules(grammar: string, prefix: string): string {
    let out = "";
    let index = 0;
    while (index < grammar.length) {
        const char = grammar[index];
        if (char === '"' || char === "[") {
            const close = char === '"' ? '"' : "]";
            let end = index + 1;
            while (end < grammar.length && grammar[end] !== close)
                end += grammar[end] === "\\" ? 2 : 1;
            out += grammar.slice(index, end + 1);
            index = end + 1;
        } else if (char === "#") {
            const end = grammar.indexOf("\n", index);
            index = end < 0 ? grammar.length : end;
        } else if (/[a-zA-Z]/.test(char)) {
            const name = /^[a-zA-Z][a-zA-Z0-9_-]*/.exec(grammar.slice(index))![0];
            out += prefix + name;
            index += name.length;
        } else if (char === "{") {
            const end = grammar.indexOf("}", index);
            out += grammar.slice(index, end + 1);
            index = end + 1;
        } else {
            out += char;
            index++;
        }
    }
    return out;
}
